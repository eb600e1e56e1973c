/**
 * A loop's block is sized by the density of the sessions it reads, not of the session that starts it: the
 * intraday preset quotes its monthly-expiration Friday (2023-01-20) only at the close, between sessions
 * quoted every minute. Sized on that Friday alone, the first block reached 30 sessions ahead and read
 * every minute of them. A small generated store (five sessions of the preset) is written to a temporary
 * directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { intradayOptions } from '../../../src/ingest/generator/index.js';
import { etWallToSeconds } from '../../../src/market-time/index.js';
import { currentAsOf } from '../../../src/pit/as-of.js';
import { loopBlockDates, loopBlockSessions, readAheadRows } from '../../../src/query/options/read-ahead.js';
import type { Scope } from '../../../src/query/options/scope.js';
import { assemble, scopeRows } from '../../../src/query/options/scope-answer.js';
import { rowSource } from '../../../src/query/options/snapshot-sql.js';
import { StoreCache } from '../../../src/store/cache.js';
import { StoreReader } from '../../../src/store/store.js';
import { commitGenerated } from './generated-store.js';

let dir: string;
let reader: StoreReader;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitchain-density-'));
  await commitGenerated(
    dir,
    { ...intradayOptions(), from: '2023-01-18', to: '2023-01-24' },
    'density test store',
  );
  reader = await StoreReader.open(dir);
}, 180_000);
afterAll(async () => {
  await reader?.close();
  await rm(dir, { recursive: true, force: true });
});

const SPX = { underlying: 'SPX' };

/** Each session's quote rows, as the session column files count them. */
function rowsBySession(): Map<string, number> {
  const parts = reader.sql.sessionColumns('option_quotes', SPX, { first: '2023-01-18', last: '2023-01-24' });
  if (parts === undefined) throw new Error('the test store has no session column files');
  const rows = new Map<string, number>();
  for (const part of parts) {
    const session = new Date(part.day * 86_400_000).toISOString().slice(0, 10);
    rows.set(session, (rows.get(session) ?? 0) + part.rows);
  }
  return rows;
}

/** Asks `scope` at each ET wall time in turn, checking each answer the read-ahead gives against the query's. */
async function loop(cache: StoreCache, scope: Scope, steps: readonly [string, string][]): Promise<number> {
  let answered = 0;
  for (const [session, time] of steps) {
    const asOf = currentAsOf('live', etWallToSeconds(session, time));
    const held = await readAheadRows(reader.sql, cache, asOf, scope);
    if (held === undefined) continue; // the query answers
    answered++;
    expect(assemble(asOf, held).records, `${session} ${time}`).toEqual(
      assemble(asOf, rowSource(await scopeRows(reader.sql, asOf, scope))).records,
    );
  }
  return answered;
}

/** A request at each of two sessions, then at the sparse Friday: the loop's first block is made there. */
const STEPS: [string, string][] = [
  ['2023-01-18', '10:00'],
  ['2023-01-19', '10:00'],
  ['2023-01-20', '12:00'],
];

describe('a loop block after a session quoted only at the close', () => {
  it('is the premise: the Friday is quoted once, the sessions around it every minute', () => {
    const rows = rowsBySession();
    expect(rows.get('2023-01-20')).toBeLessThan(5_000);
    for (const session of ['2023-01-18', '2023-01-19', '2023-01-23', '2023-01-24'])
      expect(rows.get(session), session).toBeGreaterThan(100_000);
  });

  it("reads a whole chain's block of the Friday and the session before it only", async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    expect(await loop(cache, SPX, STEPS)).toBeGreaterThanOrEqual(1);
    // The dense session before it is more than the first block's budget: no session ahead is read.
    expect(await loopBlockSessions(cache, SPX)).toEqual({ first: '2023-01-19', last: '2023-01-20' });
  }, 120_000);

  it("leaves one date's request of the Friday to that date's session block", async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const scope = { underlying: 'SPX', expiration: '2023-01-20' };
    expect(await loop(cache, scope, STEPS)).toBeGreaterThanOrEqual(1);
    // The chain is dense around it: no loop block, as on the sessions quoted every minute.
    expect(await loopBlockDates(cache, SPX)).toBeNull();
  }, 120_000);
});
