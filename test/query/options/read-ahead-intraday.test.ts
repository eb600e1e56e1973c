/**
 * Read-ahead on intraday snapshots (a contract quoted every minute): a loop's answers at any minute, and
 * before a session's first snapshot, are the query's. A small generated store (two sessions of the
 * intraday preset) is written to a temporary directory.
 */
import { closeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { intradayOptions } from '../../../src/ingest/generator/index.js';
import { etWallToSeconds } from '../../../src/market-time/index.js';
import { type AsOf, currentAsOf } from '../../../src/pit/as-of.js';
import { contractTable } from '../../../src/query/options/contract-table.js';
import { readAheadRows } from '../../../src/query/options/read-ahead.js';
import { assemble, scopeRows } from '../../../src/query/options/scope-answer.js';
import { latestByKey } from '../../../src/query/options/session-file-rows.js';
import { sessionPairRows } from '../../../src/query/options/session-pair.js';
import { rowSource } from '../../../src/query/options/snapshot-sql.js';
import { StoreCache } from '../../../src/store/cache.js';
import type { SessionColumnsPart } from '../../../src/store/session-columns.js';
import { StoreReader } from '../../../src/store/store.js';
import { seededRandom } from '../../helpers/seeded-random.js';
import { expectColumnsAsRecords } from './answer-columns.js';
import { commitGenerated } from './generated-store.js';

let dir: string;
let reader: StoreReader;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitchain-intraday-'));
  await commitGenerated(dir, { ...intradayOptions(), to: '2023-01-04' }, 'intraday test store');
  reader = await StoreReader.open(dir);
}, 120_000);
afterAll(async () => {
  await reader?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('read-ahead over one-minute snapshots', () => {
  it('answers every minute of a loop as the query does, before the first snapshot and between them too', async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const spx = { underlying: 'SPX' };
    const at = (session: string, time: string): AsOf => currentAsOf('live', etWallToSeconds(session, time));
    const minutes = [
      ['2023-01-03', '15:58'],
      ['2023-01-03', '15:59'],
      ['2023-01-03', '16:00'],
      // Before the session's first snapshot: the previous session's latest rows answer.
      ['2023-01-04', '09:30'],
      ['2023-01-04', '09:31'],
      ['2023-01-04', '09:31:30'],
      ['2023-01-04', '12:00'],
      ['2023-01-04', '15:59:59'],
      ['2023-01-04', '16:00'],
    ] as const;
    let answered = 0;
    for (const [session, time] of minutes) {
      const asOf = at(session, time);
      const held = await readAheadRows(reader.sql, cache, asOf, spx);
      if (held === undefined) continue; // not yet a loop: the query answers
      answered++;
      const expected = assemble(asOf, rowSource(await scopeRows(reader.sql, asOf, spx))).records;
      expect(assemble(asOf, held).records, `${session} ${time}`).toEqual(expected);
      expectColumnsAsRecords(asOf, held, expected, `${session} ${time}`);
    }
    expect(answered).toBeGreaterThanOrEqual(minutes.length - 2);
  }, 120_000);
});

describe('random minutes of intraday snapshots', () => {
  it('reads a two-session block only within its row budget, and answers from it as the query does', async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const at = (session: string, time: string) => {
      const asOf = currentAsOf('live', etWallToSeconds(session, time));
      if (asOf.kind !== 'current') throw new Error('a live as-of is current');
      return asOf;
    };
    const spx = { underlying: 'SPX' };
    // About 190,000 rows a session: with the session before, past the block's budget; the query answers.
    expect(await sessionPairRows(reader.sql, cache, at('2023-01-04', '12:00'), spx)).toBeUndefined();
    expect(cache.sessionCacheBytes).toBe(0);
    // The store's first session has none before it: the block is that session's rows, within the budget.
    const first = at('2023-01-03', '10:15');
    const paired = await sessionPairRows(reader.sql, cache, first, spx);
    expect(paired).toBeDefined();
    expect(assemble(first, paired!).records).toEqual(
      assemble(first, rowSource(await scopeRows(reader.sql, first, spx))).records,
    );
  }, 120_000);
});

describe('one date at random minutes of intraday snapshots', () => {
  const at = (session: string, time: string): AsOf => currentAsOf('live', etWallToSeconds(session, time));
  /** The query's records of `scope` at `asOf`. */
  const queried = async (asOf: AsOf, scope: { underlying: string; expiration: string }) =>
    assemble(asOf, rowSource(await scopeRows(reader.sql, asOf, scope))).records;

  it("answers each from the contracts' latest snapshots by its cutoff, as the query does, keeping no block", async () => {
    // Minutes on and between snapshots, the session's last, after the close; the 0DTE date and the next.
    const minutes = [
      ['2023-01-03', '10:00'],
      ['2023-01-03', '15:59:59'],
      ['2023-01-03', '18:00'],
      ['2023-01-04', '09:31'],
      ['2023-01-04', '09:31:30'],
      ['2023-01-04', '12:17'],
      ['2023-01-04', '16:00'],
    ] as const;
    for (const [session, time] of minutes) {
      for (const expiration of ['2023-01-04', '2023-01-05']) {
        if (expiration < session) continue;
        // A cache of its own: no request before it, so none it steps on from.
        const cache = new StoreCache(() => reader.dataVersion);
        await contractTable(reader.sql, cache, 'SPX');
        const before = cache.sessionCacheBytes;
        const asOf = at(session, time);
        const scope = { underlying: 'SPX', expiration };
        const rows = await readAheadRows(reader.sql, cache, asOf, scope);
        expect(rows, `${session} ${time} ${expiration}`).toBeDefined();
        const records = assemble(asOf, rows!).records;
        expect(records.length, `${session} ${time} ${expiration}`).toBeGreaterThan(0);
        expect(records, `${session} ${time} ${expiration}`).toEqual(await queried(asOf, scope));
        // Answered from the instant's rows: the session's block of the date was not read into the cache.
        expect(cache.sessionCacheBytes, `${session} ${time} ${expiration}`).toBe(before);
      }
    }
  }, 120_000);

  it("reads the date's session block for a request stepping on within the session, and leaves one before its first snapshot to the query", async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const scope = { underlying: 'SPX', expiration: '2023-01-04' };
    await contractTable(reader.sql, cache, 'SPX');
    const before = cache.sessionCacheBytes;
    const steps = [
      // The first request of the session, then a minute loop's next step: the block answers from then on.
      ['2023-01-04', '11:00', false],
      ['2023-01-04', '11:01', true],
      ['2023-01-04', '11:02', true],
    ] as const;
    for (const [session, time, block] of steps) {
      const asOf = at(session, time);
      const rows = await readAheadRows(reader.sql, cache, asOf, scope);
      expect(rows, time).toBeDefined();
      expect(assemble(asOf, rows!).records, time).toEqual(await queried(asOf, scope));
      expect(cache.sessionCacheBytes > before, time).toBe(block);
    }
    // After the open and before the session's first snapshot, the contracts' latest snapshots are the
    // session before's: the instant's rows cannot prove the answer, nor can the session's block (every
    // contract is quoted in the session, so it carries none from before): the query answers.
    const early = new StoreCache(() => reader.dataVersion);
    const asOf = at('2023-01-04', '09:30:30');
    expect(await readAheadRows(reader.sql, early, asOf, scope)).toBeUndefined();
    expect((await queried(asOf, scope)).length).toBeGreaterThan(0);
  }, 120_000);

  it('answers a minute loop that steps on by minutes, jumps ahead and goes back, as the query does', async () => {
    // The block of the date answers each instant from where the last one found each contract's latest
    // row; a step back in time starts that search again.
    const cache = new StoreCache(() => reader.dataVersion);
    await contractTable(reader.sql, cache, 'SPX');
    const scope = { underlying: 'SPX', expiration: '2023-01-04' };
    const open = etWallToSeconds('2023-01-04', '09:31');
    const random = seededRandom(11);
    let minute = 0;
    let answered = 0;
    for (let i = 0; i < 30; i++) {
      const jump = random();
      minute =
        jump < 0.2
          ? Math.floor(random() * 390)
          : Math.min(389, minute + (jump < 0.6 ? 1 : 1 + Math.floor(random() * 40)));
      const asOf = currentAsOf('live', open + 60 * minute + (random() < 0.3 ? 30 : 0));
      const rows = await readAheadRows(reader.sql, cache, asOf, scope);
      if (rows === undefined) continue; // before the loop shows itself: the query answers
      answered++;
      const expected = await queried(asOf, scope);
      expect(assemble(asOf, rows).records, `minute ${minute}`).toEqual(expected);
      // Printed from the block's columns (the vendor's iv, Black–Scholes Greeks): the records' fields.
      expectColumnsAsRecords(asOf, rows, expected, `minute ${minute}`);
    }
    expect(answered).toBeGreaterThan(25);
  }, 120_000);

  it("reads the next session's block at its first minute when a minute loop goes on from the close before, and only then", async () => {
    const answers = async (cache: StoreCache, session: string, time: string) => {
      const asOf = at(session, time);
      const scope = { underlying: 'SPX', expiration: session };
      const rows = await readAheadRows(reader.sql, cache, asOf, scope);
      expect(rows, `${session} ${time}`).toBeDefined();
      expect(assemble(asOf, rows!).records, `${session} ${time}`).toEqual(await queried(asOf, scope));
    };
    // Each session's 0DTE date, minute by minute (the block read at 15:29, half an hour before the close,
    // answers the minutes after it) into the next session.
    const loop = new StoreCache(() => reader.dataVersion);
    await contractTable(reader.sql, loop, 'SPX');
    for (const time of ['15:28', '15:29', '15:45', '15:59']) await answers(loop, '2023-01-03', time);
    const before = loop.sessionCacheBytes;
    await answers(loop, '2023-01-04', '09:31');
    expect(loop.sessionCacheBytes).toBeGreaterThan(before);
    // The same date at the same minute after a loop that stopped at midday: the instant's rows answer.
    const midday = new StoreCache(() => reader.dataVersion);
    await contractTable(reader.sql, midday, 'SPX');
    for (const time of ['11:00', '11:01', '11:02']) await answers(midday, '2023-01-03', time);
    const held = midday.sessionCacheBytes;
    await answers(midday, '2023-01-04', '09:31');
    expect(midday.sessionCacheBytes).toBe(held);
  }, 120_000);
});

describe('the look back over session column files', () => {
  /** A column of every row of a part, read whole. */
  const columnOf = (part: SessionColumnsPart, column: string) => {
    const values = new Float64Array(part.rows);
    const fd = part.file.openForReading();
    try {
      part.file.readInto(part.day, column, 0, part.rows, values, 0, fd);
    } finally {
      closeSync(fd);
    }
    return values;
  };

  it('finds each key its latest row, as a scan of every row does, and no key that is absent', () => {
    // Two sessions of a contract's rows one after another, every minute: the look back passes over a
    // contract's next rows by its key, and most rows by a filter of a few bits, which other keys share.
    const parts = reader.sql.sessionColumns(
      'option_quotes',
      { underlying: 'SPX' },
      { first: '2023-01-03', last: '2023-01-04' },
    )!;
    expect(parts).toHaveLength(2);
    const keysOf = parts.map((part) => columnOf(part, 'key'));
    const timesOf = parts.map((part) => columnOf(part, 'quote_time'));
    const present = new Set(keysOf.flatMap((keys) => Array.from(keys)));
    const random = seededRandom(20261128);
    const some = [...present].filter(() => random() < 0.05);
    // Keys next to present ones share most of their bits, and so their filter bits.
    const absent = some.flatMap((key) => [key + 1, key - 1, key + 256]).filter((key) => !present.has(key));
    expect(some.length).toBeGreaterThan(50);
    expect(absent.length).toBeGreaterThan(50);
    // The scan: per key, its last row in the newest session that has one.
    const expected = new Map<number, [day: number, quoteTime: number]>();
    for (let p = parts.length - 1; p >= 0; p--) {
      const keys = keysOf[p]!;
      const newest = new Map<number, number>();
      for (let i = 0; i < keys.length; i++) newest.set(keys[i]!, i);
      for (const key of some) {
        const row = newest.get(key);
        if (row !== undefined && !expected.has(key)) expected.set(key, [parts[p]!.day, timesOf[p]![row]!]);
      }
    }
    const found = latestByKey(parts, new Set([...some, ...absent]), ['quote_time']);
    const got = new Map<number, [number, number]>();
    for (let i = 0; i < found.keys.length; i++) {
      got.set(found.keys[i]!, [found.days[i]!, found.values[0]![i]!]);
    }
    expect(got.size).toBe(found.keys.length);
    expect(got).toEqual(expected);
  });
});
