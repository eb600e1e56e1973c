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

  it('drops every entry, derived and state, when the data version changes', async () => {
    let version = 'v1';
    const cache = new StoreCache(() => version);
    await cache.memoize('scope', async () => 'old rows');
    expect(cache.state('chain', () => 'old state')).toBe('old state');
    expect(cache.state('chain', () => 'new state')).toBe('old state');
    version = 'v2';
    expect(cache.state('chain', () => 'new state')).toBe('new state');
    expect(await cache.memoize('scope', async () => 'new rows')).toBe('new rows');
    expect(cache.currentVersion).toBe('v2');
  });
});
