/**
 * Read-ahead on intraday snapshots (a contract quoted every minute): a loop's answers at any minute, and
 * before a session's first snapshot, are the query's. A small generated store (two sessions of the
 * intraday preset) is written to a temporary directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { intradayOptions } from '../../../src/ingest/generator/index.js';
import { etWallToSeconds } from '../../../src/market-time/index.js';
import { type AsOf, currentAsOf } from '../../../src/pit/as-of.js';
import { readAheadRows, sessionPairRows } from '../../../src/query/options/read-ahead.js';
import { assemble, scopeRows } from '../../../src/query/options/scope-answer.js';
import { rowSource } from '../../../src/query/options/snapshot-sql.js';
import { StoreCache } from '../../../src/store/cache.js';
import { StoreReader } from '../../../src/store/store.js';
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
      expect(assemble(asOf, held).records, `${session} ${time}`).toEqual(
        assemble(asOf, rowSource(await scopeRows(reader.sql, asOf, spx))).records,
      );
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
