/**
 * Reads hand wide integer columns over as INTEGER only when every value of the files read fits in 32 bits
 * (`SqlSession.narrowColumns`), and divide decimals back to the doubles DuckDB's own cast gives. A second
 * commit gives one session's asks a 30-million-dollar premium (3e9 cents) and volumes past 2^31, and
 * another's last prices ten digits (within 32 bits, past a DECIMAL(9, 2)): those three columns go as
 * DOUBLE, the bids and underlying prices in 32 bits, in the same reads. Blocks and session
 * reads must answer as the query does.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etWallToSeconds, sessionsBetween } from '../../../src/market-time/index.js';
import { type AsOf, currentAsOf } from '../../../src/pit/as-of.js';
import { announceSessionLoop, readAheadRows } from '../../../src/query/options/read-ahead.js';
import { assemble, scopeRows } from '../../../src/query/options/scope-answer.js';
import { sessionBlockRows } from '../../../src/query/options/session-block.js';
import { rowSource } from '../../../src/query/options/snapshot-sql.js';
import { StoreCache } from '../../../src/store/cache.js';
import { quoteLiteral } from '../../../src/store/sql.js';
import { StoreReader } from '../../../src/store/store.js';
import { WriteTransaction } from '../../../src/store/writer.js';
import { commitGenerated, simulatedStock } from './generated-store.js';

let dir: string;
let reader: StoreReader;
const FROM = '2021-03-01';
const TO = '2021-03-31';
/** The session whose asks and volumes the second commit makes too wide for 32 bits. */
const WIDE = '2021-03-15';
/** The session whose last prices the second commit gives ten digits. */
const TEN_DIGITS = '2021-03-22';

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-narrow-'));
  await commitGenerated(
    dir,
    simulatedStock(
      { from: FROM, to: TO, seed: 7 },
      { weeklyDays: 0, monthlyMonths: 2, quarterlyMonths: 0, leapsYears: 0 },
    ),
    'generated',
  );
  const tx = await WriteTransaction.begin(dir);
  const files = quoteLiteral(path.join(dir, 'tables', 'option_quotes', '**', '*.parquet'));
  await tx.sql.run(
    `INSERT INTO option_quotes BY NAME
     SELECT * EXCLUDE (year) REPLACE (ask + 30000000 AS ask, 5000000000 AS volume)
     FROM read_parquet(${files}, hive_partitioning = true)
     WHERE session_date = DATE '${WIDE}' AND ask IS NOT NULL`,
  );
  // A last price of ten digits (1.5e9 cents): within 32 bits, past a DECIMAL(9, 2).
  await tx.sql.run(
    `INSERT INTO option_quotes BY NAME
     SELECT * EXCLUDE (year) REPLACE (15000000 AS "last")
     FROM read_parquet(${files}, hive_partitioning = true)
     WHERE session_date = DATE '${TEN_DIGITS}'`,
  );
  const rows = Number(await tx.sql.value('SELECT count(*) FROM option_quotes'));
  await tx.commit([
    { source: 'wide', sha256: 'wide', format: 'generator', rows: { option_quotes: rows }, rejected: 0 },
  ]);
  reader = await StoreReader.open(dir);
}, 120_000);

afterAll(async () => {
  reader?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('reads of a store with values past 32 bits', () => {
  it('hand over as INTEGER only the columns whose every value fits', async () => {
    const narrow = reader.sql.narrowColumns('option_quotes', { underlying: 'XYZ' });
    expect(
      [...narrow].filter((name) => ['ask', 'volume', 'bid', 'underlying_price'].includes(name)).sort(),
    ).toEqual(['bid', 'underlying_price']);
    const widest = await reader.sql.value<number>(
      `SELECT max(ask) FROM option_quotes WHERE session_date = DATE '${WIDE}'`,
    );
    expect(Number(widest) * 100).toBeGreaterThan(2 ** 31);
    expect(narrow.has('last')).toBe(false);
  });

  it('answer every dated session and every session of a loop as the query does', async () => {
    const scope = { underlying: 'XYZ' };
    const sessions = sessionsBetween(FROM, TO).slice(1);
    const cache = new StoreCache(() => reader.dataVersion);
    for (const session of sessions) {
      const dated = { kind: 'dated', session } as const;
      const expected = assemble(dated, rowSource(await scopeRows(reader.sql, dated, scope))).records;
      expect(expected.length, session).toBeGreaterThan(0);
      const fromSession = await sessionBlockRows(reader.sql, cache, dated, scope);
      expect(assemble(dated, fromSession).records, session).toEqual(expected);
    }
    announceSessionLoop(cache, sessions[0]!, sessions.at(-1)!);
    let fromBlock = 0;
    for (const session of sessions) {
      const asOf: AsOf = currentAsOf('live', etWallToSeconds(session, '16:30'));
      const ahead = await readAheadRows(reader.sql, cache, asOf, scope);
      if (ahead === undefined) continue;
      fromBlock++;
      const expected = assemble(asOf, rowSource(await scopeRows(reader.sql, asOf, scope))).records;
      expect(assemble(asOf, ahead).records, session).toEqual(expected);
    }
    expect(fromBlock).toBe(sessions.length);
  }, 120_000);
});
