import { describe, expect, it } from 'vitest';
import { StoreCache } from '../../src/store/cache.js';

describe('StoreCache', () => {
  it('memoizes derived values a few at a time and forgets failures', async () => {
    const cache = new StoreCache(() => 'v1');
    let calls = 0;
    const compute = (value: number) => async () => {
      calls++;
      return value;
    };
    expect(await cache.memoize('a', compute(1))).toBe(1);
    expect(await cache.memoize('a', compute(2))).toBe(1);
    expect(calls).toBe(1);
    await expect(cache.memoize('bad', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await cache.memoize('bad', compute(3))).toBe(3);
    for (const key of 'bcdefghij') await cache.memoize(key, compute(0));
    expect(await cache.memoize('a', compute(4))).toBe(4); // the least recently used went out
  });

  it('drops every entry, derived and response, when the data version changes', async () => {
    let version = 'v1';
    const cache = new StoreCache(() => version);
    await cache.memoize('scope', async () => 'old rows');
    cache.keepResponse('chain', 'old body');
    expect(cache.response('chain')).toBe('old body');
    version = 'v2';
    expect(cache.response('chain')).toBeUndefined();
    expect(await cache.memoize('scope', async () => 'new rows')).toBe('new rows');
    expect(cache.currentVersion).toBe('v2');
  });
});
