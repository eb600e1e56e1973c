/**
 * A loop's block over a store where listed contracts go unquoted for a long time: the generator's periods
 * are committed one after another, and a contract listed in the first that the second does not quote
 * keeps its last snapshot of the first. A current as-of answers with that snapshot however old; the
 * block carries it (looked up once, then handed from block to block) instead of sending every session
 * of the loop to the query. Answers must be the query's, block after block.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { etWallToSeconds, previousSession, sessionsBetween } from '../../../src/market-time/index.js';
import { type AsOf, currentAsOf } from '../../../src/pit/as-of.js';
import {
  CARRY_FIRST_STEP_SESSIONS,
  latestRowsBefore,
  quoteLookBack,
} from '../../../src/query/options/block-carry.js';
import { loadContracts } from '../../../src/query/options/block-contracts.js';
import { isoDateOfDay } from '../../../src/query/options/days.js';
import { announceSessionLoop, loopBlockDates, readAheadRows } from '../../../src/query/options/read-ahead.js';
import { assemble, scopeRows } from '../../../src/query/options/scope-answer.js';
import { sessionPairRows } from '../../../src/query/options/session-pair.js';
import { rowSource } from '../../../src/query/options/snapshot-sql.js';
import { StoreCache } from '../../../src/store/cache.js';
import { SessionColumnsFile } from '../../../src/store/session-columns.js';
import { StoreReader } from '../../../src/store/store.js';
import { commitGenerated, simulatedStock } from './generated-store.js';

let dir: string;
let reader: StoreReader;

const PERIODS = [
  ['2019-01-02', '2019-02-28'],
  ['2019-03-01', '2019-05-31'],
] as const;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-carry-'));
  for (const [i, [from, to]] of PERIODS.entries()) {
    await commitGenerated(
      dir,
      simulatedStock(
        { from, to, seed: 11 + i },
        { weeklyDays: 0, monthlyMonths: 2, quarterlyMonths: 3, leapsYears: 1 },
      ),
      `p${i}`,
    );
  }
  reader = await StoreReader.open(dir);
}, 120_000);

/** The contracts listed in the first period and never quoted in the second, past it (`FROM` on). */
const STALE_CONTRACTS = `FROM contracts c WHERE c.expiration > DATE '2019-05-31'
  AND c.first_traded < DATE '2019-03-01'
  AND NOT EXISTS (SELECT 1 FROM option_quotes q WHERE q.option_symbol = c.option_symbol
                    AND q.session_date >= DATE '2019-03-01')`;

/** The farthest date of `STALE_CONTRACTS`. */
const farthestStaleDate = () =>
  reader.sql.value<string>(`SELECT strftime(max(c.expiration), '%Y-%m-%d') ${STALE_CONTRACTS}`);

afterAll(async () => {
  reader?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('a loop over contracts left unquoted for a long time', () => {
  it('answers every session from its blocks, as the query does', async () => {
    const scope = { underlying: 'XYZ' };
    // Contracts listed in the first period that the second never quotes: what the block must carry.
    const stale = await reader.sql.value<number>(`SELECT count(*) ${STALE_CONTRACTS}`);
    expect(Number(stale)).toBeGreaterThan(0);
    const far = await farthestStaleDate();
    // The nearest date past the period, whose contracts the loop asks first.
    const first = await reader.sql.value<string>(
      `SELECT strftime(min(expiration), '%Y-%m-%d') FROM contracts WHERE expiration > DATE '2019-05-31'`,
    );
    expect(far > first).toBe(true);
    for (const [announced, oneDate] of [
      [false, false],
      [true, false],
      // A loop asking one date a time reads blocks of its dates: the nearest date past the period, then the
      // stale contracts' farthest, which a block made for the first does not hold: the next block carries them.
      [false, true],
    ] as const) {
      // The store's chain is sparse: a loop of one date reads blocks of its dates only when told to.
      const cache = new StoreCache(() => reader.dataVersion, oneDate ? { loopWindowRows: 0 } : {});
      // From two weeks into the second period: the first block looks back to the first period's rows by a query,
      // the next ones take them from the block before.
      const sessions = sessionsBetween('2019-03-18', '2019-05-31');
      if (announced) announceSessionLoop(cache, sessions[0]!, sessions.at(-1)!);
      let fromBlock = 0;
      for (const [i, session] of sessions.entries()) {
        const asOf: AsOf = currentAsOf('live', etWallToSeconds(session, '16:30'));
        const date = i < sessions.length / 2 ? first : far;
        const asked = oneDate ? { ...scope, expiration: date } : scope;
        const ahead = await readAheadRows(reader.sql, cache, asOf, asked);
        if (ahead === undefined) continue;
        fromBlock++;
        const label = `${session} announced: ${announced} ${JSON.stringify(asked)}`;
        const expected = assemble(asOf, rowSource(await scopeRows(reader.sql, asOf, asked))).records;
        expect(assemble(asOf, ahead).records, label).toEqual(expected);
      }
      // Only the requests before a loop is recognised are left to the query.
      expect(fromBlock).toBeGreaterThanOrEqual(sessions.length - (announced ? 0 : 2));
      if (oneDate) {
        const dates = await loopBlockDates(cache, scope);
        expect(dates && dates.low <= far && far <= dates.high).toBe(true);
      }
    }
  }, 240_000);
});

describe('the look back for carried rows', () => {
  it('finds each contract its latest row, newest steps first, however far back it is', async () => {
    const scope = { underlying: 'XYZ' };
    const before = '2019-05-15';
    // Contracts listed in the first period: some quoted up to `before` (found by the first step), the rest
    // last quoted at the first period's end, months back (found by a later one).
    const latest = new Map(
      (
        await reader.sql.all<{ symbol: string; day: string }>(
          `SELECT q.option_symbol AS symbol, strftime(max(q.session_date), '%Y-%m-%d') AS day
           FROM option_quotes q JOIN contracts c USING (option_symbol)
           WHERE q.underlying = 'XYZ' AND c.first_traded < DATE '2019-02-01'
             AND q.session_date <= CAST($before AS DATE)
           GROUP BY 1`,
          { before },
        )
      ).map(({ symbol, day }) => [symbol, day]),
    );
    const days = new Set(latest.values());
    expect(days.has(before) && days.has('2019-02-28')).toBe(true);
    const known = await loadContracts(
      reader.sql,
      new StoreCache(() => reader.dataVersion),
      scope,
      before,
      before,
    );
    const symbols = [...latest.keys()].filter((symbol) =>
      known.contracts.some((contract) => contract.option_symbol === symbol),
    );
    // Through DuckDB, in steps; from the session column files, newest session first: alike.
    const throughDuckdb = await StoreReader.open(dir, { sessionColumns: false });
    try {
      for (const source of [throughDuckdb, reader]) {
        const parts = await latestRowsBefore(
          source.sql,
          'XYZ',
          known,
          symbols,
          '2019-01-02',
          before,
          quoteLookBack(known),
        );
        // Found in more than one step (the first reaches `CARRY_FIRST_STEP_SESSIONS` sessions back, not to
        // the first period), each contract once, on its latest session.
        expect(sessionsBetween('2019-02-28', before).length).toBeGreaterThan(CARRY_FIRST_STEP_SESSIONS);
        if (source === throughDuckdb) expect(parts.length).toBeGreaterThan(1);
        const found = parts.flatMap((part) =>
          Array.from(part.contract, (id, row) => [
            known.contracts[id]!.option_symbol,
            isoDateOfDay(part.day[row]!),
          ]),
        );
        expect(new Set(found.map(([symbol]) => symbol)).size).toBe(found.length);
        expect(new Map(found.map(([symbol, day]) => [symbol, day]))).toEqual(
          new Map(symbols.map((symbol) => [symbol, latest.get(symbol)])),
        );
      }
    } finally {
      throughDuckdb.close();
    }
  }, 60_000);
});

describe('a current chain at a random instant over contracts left unquoted for a long time', () => {
  it("carries them into its two sessions' block, answering as the query does", async () => {
    const scope = { underlying: 'XYZ' };
    const cache = new StoreCache(() => reader.dataVersion);
    // Out of order, well into the second period: every answer needs the first period's last snapshots.
    const sessions = ['2019-05-20', '2019-03-22', '2019-04-15', '2019-05-31'];
    for (const session of sessions) {
      for (const time of ['10:00', '16:30']) {
        const asOf = currentAsOf('live', etWallToSeconds(session, time));
        if (asOf.kind !== 'current') throw new Error('a live as-of is current');
        const paired = await sessionPairRows(reader.sql, cache, asOf, scope);
        // A store this small looks back over a few thousand rows: well within the block's budget.
        expect(paired, `${session} ${time}`).toBeDefined();
        expect(assemble(asOf, paired!).records, `${session} ${time}`).toEqual(
          assemble(asOf, rowSource(await scopeRows(reader.sql, asOf, scope))).records,
        );
      }
    }
  }, 120_000);

  it('looks back through session column files however far, and through DuckDB only within its bound', async () => {
    const scope = { underlying: 'XYZ' };
    // Any look back is past the bound (the store is too small to reach the default's million rows).
    const options = { sessionPairCarryRows: 0 };
    const throughDuckdb = await StoreReader.open(dir, { sessionColumns: false });
    try {
      for (const session of ['2019-05-20', '2019-03-22']) {
        const asOf = currentAsOf('live', etWallToSeconds(session, '10:00'));
        if (asOf.kind !== 'current') throw new Error('a live as-of is current');
        const query = assemble(asOf, rowSource(await scopeRows(reader.sql, asOf, scope))).records;
        const pairOf = (source: StoreReader) =>
          sessionPairRows(source.sql, new StoreCache(() => source.dataVersion, options), asOf, scope);
        // From the files: the block, its stale contracts found by the files' key sessions, as the query.
        const paired = await pairOf(reader);
        expect(paired, session).toBeDefined();
        expect(assemble(asOf, paired!).records, session).toEqual(query);
        // Through DuckDB the same look back would scan every row since the stale contracts were listed:
        // past the bound, the query answers.
        expect(await pairOf(throughDuckdb), session).toBeUndefined();
      }
    } finally {
      throughDuckdb.close();
    }
  }, 60_000);
});

describe("a loop over one date of a dense chain, answered from the date's session blocks", () => {
  it('carries its unquoted contracts from the block of the session before, as the query answers', async () => {
    const scope = { underlying: 'XYZ' };
    const far = await farthestStaleDate();
    const asked = { ...scope, expiration: far };
    // `oneDateSessionRows: 0`: this small chain is as dense as one whose loops read their dates' session blocks.
    const cache = new StoreCache(() => reader.dataVersion, { oneDateSessionRows: 0 });
    const sessions = sessionsBetween('2019-03-18', '2019-04-05');
    // The sessions each request reads from the session column files.
    const read = vi.spyOn(SessionColumnsFile.prototype, 'readInto');
    try {
      for (const [i, session] of sessions.entries()) {
        read.mockClear();
        const asOf: AsOf = currentAsOf('live', etWallToSeconds(session, '16:30'));
        const ahead = await readAheadRows(reader.sql, cache, asOf, asked);
        expect(ahead, session).toBeDefined();
        expect(assemble(asOf, ahead!).records, session).toEqual(
          assemble(asOf, rowSource(await scopeRows(reader.sql, asOf, asked))).records,
        );
        const days = read.mock.calls.map(([day]) => isoDateOfDay(day));
        // The first session looks back to the first period for the unquoted contracts' last snapshots;
        // every later one reads its own session and the open interest settled the session before.
        if (i === 0) expect(days.some((day) => day < '2019-03-01')).toBe(true);
        else
          expect(
            days.filter((day) => day < previousSession(session)),
            session,
          ).toEqual([]);
      }
    } finally {
      read.mockRestore();
    }
  }, 120_000);
});
