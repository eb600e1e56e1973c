/**
 * `ColumnBuffer` cuts an answer's number columns from shared buffers: each column must still be a column
 * of its own (zeros, its own values, not another's), however many are taken.
 */
import { describe, expect, it } from 'vitest';
import { ColumnBuffer, gathered } from '../../../src/query/options/block-columns.js';

describe('ColumnBuffer', () => {
  it('gives columns of zeros of its length that do not overlap, past its first buffer', () => {
    const columns = new ColumnBuffer(3, 2);
    const taken = Array.from({ length: 5 }, () => columns.take());
    for (const column of taken) expect(Array.from(column)).toEqual([0, 0, 0]);
    for (const [k, column] of taken.entries()) column.fill(k + 1);
    for (const [k, column] of taken.entries()) expect(Array.from(column)).toEqual([k + 1, k + 1, k + 1]);
    // Two to a buffer: the first two share one, the third starts another.
    expect(taken[0]!.buffer).toBe(taken[1]!.buffer);
    expect(taken[2]!.buffer).not.toBe(taken[1]!.buffer);
  });

  it('gathers in the given order, NaN kept, as gathered does', () => {
    const from = Float64Array.of(10, Number.NaN, 30, 40);
    const columns = new ColumnBuffer(3, 4);
    const first = columns.gathered(from, [3, 1, 0]);
    const second = columns.gathered(from, Int32Array.of(2, 2, 3));
    expect(Array.from(first)).toEqual([40, Number.NaN, 10]);
    expect(Array.from(second)).toEqual(Array.from(gathered(from, [2, 2, 3])));
    expect(Array.from(first)).toEqual([40, Number.NaN, 10]);
  });

  it('gives empty columns for no rows', () => {
    const columns = new ColumnBuffer(0, 4);
    expect(columns.take().length).toBe(0);
    expect(columns.gathered(Float64Array.of(1, 2), []).length).toBe(0);
  });
});
