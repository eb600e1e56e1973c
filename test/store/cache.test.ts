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

  it('counts what states hold against the session budget, until they let it go', async () => {
    let version = 'v1';
    const cache = new StoreCache(() => version, { sessionCacheBytes: 100 });
    const keep = (key: string, bytes: number) =>
      cache.sized(
        key,
        async () => key,
        () => bytes,
      );
    await keep('a', 40);
    await keep('b', 40);
    expect(cache.sessionCacheBytes).toBe(80);
    // A loop's block of 50 bytes: the oldest session value goes to make room, the newest stays.
    cache.state('loop', () => ({}));
    cache.hold('loop', 50);
    expect(cache.heldBytes).toBe(50);
    expect(cache.sessionCacheBytes).toBe(40);
    expect(cache.heldSized('a')).toBeUndefined();
    expect(cache.heldSized('b')).toBeDefined();
    // A new value fits only beside what the loop holds: the older one goes.
    await keep('c', 40);
    expect(cache.heldSized('b')).toBeUndefined();
    expect(cache.sessionCacheBytes + cache.heldBytes).toBeLessThanOrEqual(100);
    // The loop's next block replaces its last one in the count.
    cache.hold('loop', 10);
    expect(cache.heldBytes).toBe(10);
    await keep('d', 40);
    expect(cache.heldSized('c')).toBeDefined();
    // A state the cache lets go for others holds nothing; nor does one it never kept.
    for (const key of ['s1', 's2', 's3', 's4']) cache.state(key, () => ({}));
    expect(cache.heldBytes).toBe(0);
    cache.hold('gone', 30);
    expect(cache.heldBytes).toBe(0);
    // A new data version drops what was held with everything else.
    cache.state('loop', () => ({}));
    cache.hold('loop', 60);
    version = 'v2';
    expect(cache.currentVersion).toBe('v2');
    expect(cache.heldBytes).toBe(0);
  });

  it('reads a held state without counting it as used', () => {
    const cache = new StoreCache(() => 'v1');
    for (const key of ['a', 'b', 'c', 'd']) cache.state(key, () => key);
    expect(cache.heldState('a')).toBe('a');
    expect(cache.heldState('missing')).toBeUndefined();
    // Four states are kept: a fifth lets the least recently used go, which reading did not change.
    cache.state('e', () => 'e');
    expect(cache.heldState('a')).toBeUndefined();
    expect(cache.heldState('b')).toBe('b');
  });

  it('lets the least recently used go, a use making an entry the most recent again', async () => {
    const cache = new StoreCache(() => 'v1');
    const evicted: string[] = [];
    for (const key of ['a', 'b', 'c', 'd']) cache.state(key, () => key);
    // Using `a` again makes `b` the least recently used.
    expect(cache.state('a', () => 'not made')).toBe('a');
    cache.state('e', () => 'e');
    for (const key of ['a', 'b', 'c', 'd', 'e']) if (cache.heldState(key) === undefined) evicted.push(key);
    expect(evicted).toEqual(['b']);
    // Derived values the same way, four at a time. A computation takes a place while it runs (`q`, the
    // least recently used, goes for it), and one that fails gives its place back.
    let calls = 0;
    const compute = (value: string) => async () => {
      calls++;
      return value;
    };
    for (const key of ['p', 'q', 'r', 's']) await cache.memoize(key, compute(key));
    await cache.memoize('p', compute('again'));
    await expect(cache.memoize('bad', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    await cache.memoize('t', compute('t'));
    calls = 0;
    for (const key of ['p', 'r', 's', 't']) expect(await cache.memoize(key, compute('new'))).toBe(key);
    expect(calls).toBe(0);
    expect(await cache.memoize('q', compute('new'))).toBe('new');
  });
});
