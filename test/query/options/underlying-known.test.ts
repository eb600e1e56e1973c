/**
 * Whether the store lists an underlying (or one of its roots) is answered from the underlying's contract
 * table once the session cache holds it, and by a statement before: both must say the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractTable, underlyingKnown } from '../../../src/query/options/contract-table.js';
import { StoreCache } from '../../../src/store/cache.js';
import { SqlSession } from '../../../src/store/sql.js';
import type { StoreReader } from '../../../src/store/store.js';
import { buildSpySpxStore } from '../helpers/options-market.js';

let reader: StoreReader;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ reader, close } = await buildSpySpxStore());
});
afterAll(async () => close());

/** [underlying, root] asked, and whether the store lists it. */
const CASES: readonly [string, string | undefined, boolean][] = [
  ['SPX', undefined, true],
  ['SPX', 'SPX', true],
  ['SPX', 'SPXW', true],
  // A root of SPX the store has no contract of.
  ['SPX', 'SPXPM', false],
  ['SPY', undefined, true],
  ['SPY', 'SPXW', false],
  ['QQQ', undefined, false],
];

describe('underlyingKnown', () => {
  it('says the same by statement and from a held contract table', async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const known = (underlying: string, root?: string) => underlyingKnown(reader.sql, cache, underlying, root);
    for (const [underlying, root, listed] of CASES)
      expect([underlying, root, await known(underlying, root)]).toEqual([underlying, root, listed]);
    for (const underlying of ['SPX', 'SPY', 'QQQ']) await contractTable(reader.sql, cache, underlying);
    // A DuckDB with no store behind it fails any statement about contracts: the held tables alone answer.
    const bare = await SqlSession.open();
    try {
      for (const [underlying, root, listed] of CASES) {
        expect([underlying, root, await underlyingKnown(bare, cache, underlying, root)]).toEqual([
          underlying,
          root,
          listed,
        ]);
      }
      await expect(underlyingKnown(bare, new StoreCache(() => reader.dataVersion), 'SPX')).rejects.toThrow();
    } finally {
      bare.close();
    }
  });
});
