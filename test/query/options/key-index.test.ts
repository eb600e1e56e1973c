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

  it('is undefined when two keys are equal (then rows are matched by their symbols)', () => {
    expect(KeyIndex.of(Float64Array.from([5, 9, 5]))).toBeUndefined();
    expect(KeyIndex.of(new Float64Array(0))!.get(1)).toBeUndefined();
  });
});
