/**
 * The response cache is bounded in bytes (`--cache-bytes`, `responseCacheBytes`): what it counts for the
 * answers it keeps must be near the memory they hold, or the bound bounds nothing. An option answer holds
 * its records behind its fields; before they were counted, the cache held 2.4–2.8 times its count.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { openStore, storeInternals } from '../../src/library/store.js';
import { sessionsBetween } from '../../src/market-time/index.js';

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
  it.each([
    ['whole dated chains', '&expiration=all'],
    ['dated front months', ''],
  ])(
    '%s',
    async (_, query) => {
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
        expect(held).toBeGreaterThan(0.75);
        expect(held).toBeLessThan(1.3);
      } finally {
        store.close();
      }
    },
    120_000,
  );
});
