import { describe, expect, it } from 'vitest';
import { KeyIndex } from '../../../src/query/options/key-index.js';

describe('KeyIndex', () => {
  it('finds every key (53-bit hashes, colliding low bits included) and no other', () => {
    const keys = Float64Array.from([
      0,
      1,
      2 ** 53 - 1,
      2 ** 32,
      2 ** 33,
      3 * 2 ** 32 + 7,
      7,
      123_456_789_012_345,
    ]);
    const index = KeyIndex.of(keys)!;
    for (const [i, key] of keys.entries()) expect(index.get(key)).toBe(i);
    for (const absent of [2, 2 ** 32 + 1, 2 ** 53 - 2, 5 * 2 ** 32])
      expect(index.get(absent)).toBeUndefined();
  });

  it('finds a key near a hint as it does without one, whatever the hint', () => {
    const keys = Float64Array.from([11, 2 ** 40, 3, 2 ** 53 - 1, 42]);
    const index = KeyIndex.of(keys)!;
    for (const [i, key] of keys.entries()) {
      // At the hint, just after it, far from it, and past either end.
      for (const near of [i, i - 1, (i + 3) % keys.length, -1, keys.length, keys.length + 5])
        expect(index.getNear(key, near), `${key} near ${near}`).toBe(i);
    }
    for (const near of [0, 3, 4, 9]) expect(index.getNear(7, near)).toBeUndefined();
  });

  it('is undefined when two keys are equal (then rows are matched by their symbols)', () => {
    expect(KeyIndex.of(Float64Array.from([5, 9, 5]))).toBeUndefined();
    expect(KeyIndex.of(new Float64Array(0))!.get(1)).toBeUndefined();
  });
});
