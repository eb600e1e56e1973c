/**
 * The response cache is bounded in bytes (`--cache-bytes`, `responseCacheBytes`): what it counts for the
 * answers it keeps must be near the memory they hold, or the bound bounds nothing. An option answer holds
 * its records behind its fields; before they were counted, the cache held 2.4–2.8 times its count. A
 * dated chain printed from its columns makes its records only when read, and holds the session block's
 * rows to make them from: that block is counted in their place, and the records once made.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { openStore, storeInternals } from '../../src/library/store.js';
import { sessionsBetween } from '../../src/market-time/index.js';
import { OPTION_RECORD_BYTES } from '../../src/query/options/records.js';

const NOW = '2020-12-31T15:45:00-05:00';
/**
 * A quarter of the sample's sessions, every answer asked twice (a dated answer is kept the second time), in
 * a shuffled order: in calendar order they would be a session loop, whose read-ahead blocks come and go.
 */
const SESSIONS = shuffled(sessionsBetween('2019-01-02', '2019-03-29'));

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  let state = 20_190_102;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

// A full collection before each reading, so that the heap holds only what is still referenced.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
function memoryHeld(): number {
  collect();
  collect();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

describe('the response cache counts the memory its answers hold', () => {
  // The least share of its count the heap may hold. A whole chain's session block is the store's session
  // cache's too, which still holds every block here: both caches count it (each bound holds alone), so
  // the heap grows by less than the response cache counts (measured 0.59; 1.16 with the blocks left out).
  it.each([
    ['whole dated chains', '&expiration=all', 0.5],
    ['dated front months', '', 0.75],
  ])(
    '%s',
    async (_, query, least) => {
      // A budget no answer here reaches: every answer asked twice is kept.
      const store = await openStore('data/sample', { now: NOW, threads: 1, responseCacheBytes: 2 ** 30 });
      try {
        const targets = SESSIONS.map((session) => `/v1/options/chain/SPY/?date=${session}${query}`);
        for (const target of targets) expect((await store.request(target)).status).toBe(200);
        const cache = storeInternals(store).api.responseCache;
        const [countedBefore, before] = [cache.sizeBytes, memoryHeld()];
        for (const target of targets) expect((await store.request(target)).status).toBe(200);
        const [countedAfter, after] = [cache.sizeBytes, memoryHeld()];
        expect(cache.size).toBe(targets.length);
        const held = (after - before) / (countedAfter - countedBefore);
        expect(held).toBeGreaterThan(least);
        expect(held).toBeLessThan(1.3);
      } finally {
        store.close();
      }
    },
    120_000,
  );
});

describe('records made after an answer was kept', () => {
  it("are counted at the answer's next use", async () => {
    const store = await openStore('data/sample', { now: NOW, threads: 1 });
    try {
      const target = '/v1/options/chain/SPY/?date=2019-03-05&expiration=all';
      // Kept at its second ask, printed from its columns: no records yet.
      for (let i = 0; i < 2; i++) expect((await store.request(target)).status).toBe(200);
      const cache = storeInternals(store).api.responseCache;
      const counted = cache.sizeBytes;
      // A library call is handed the kept answer and reads its records (the known-at columns).
      const result = await store.options.chain('SPY', { date: '2019-03-05', expiration: 'all' });
      expect(result.knownAt()?.quoteTime).toHaveLength(result.length);
      expect(cache.sizeBytes).toBe(counted);
      expect((await store.request(target)).status).toBe(200);
      expect(cache.sizeBytes).toBe(counted + result.length * OPTION_RECORD_BYTES);
    } finally {
      store.close();
    }
  });
});
