import { describe, expect, it } from 'vitest';
import { firstAbove, firstAboveSorted } from '../../../src/query/options/sorted-search.js';

/** The first index in `low…high` whose value is above `bound`, by looking at each in turn. */
function byLooking(values: Float64Array, low: number, high: number, bound: number): number {
  for (let i = low; i < high; i++) if (values[i]! > bound) return i;
  return high;
}

describe('firstAboveSorted: a run of rising quote times and a cutoff', () => {
  // Two runs side by side, as a session's rows of two contracts: equal times within a run included.
  const times = Float64Array.from([60, 120, 120, 180, 240, 30, 60, 90, 90, 90]);
  const runs = [
    [0, 5],
    [5, 10],
  ] as const;

  it('finds the first row past the cutoff within the run only, as looking at every row does', () => {
    for (const [low, high] of runs) {
      for (const bound of [0, 29, 30, 59, 60, 90, 119, 120, 121, 180, 240, 1e12]) {
        expect(firstAboveSorted(times, low, high, bound), `${low}…${high} by ${bound}`).toBe(
          byLooking(times, low, high, bound),
        );
      }
    }
  });

  it('answers the start of the run when every time is past the cutoff, and its end when none is', () => {
    expect(firstAboveSorted(times, 5, 10, 10)).toBe(5);
    expect(firstAboveSorted(times, 5, 10, 90)).toBe(10);
    // After equal times, the row after the last of them: the latest row by the cutoff is the one before.
    expect(firstAboveSorted(times, 0, 5, 120)).toBe(3);
  });

  it('answers an empty run with its start', () => {
    expect(firstAboveSorted(times, 4, 4, 0)).toBe(4);
  });

  it('agrees with firstAbove through the identity order', () => {
    const identity = Int32Array.from(times.keys());
    for (const [low, high] of runs) {
      for (const bound of [0, 60, 100, 240]) {
        expect(firstAboveSorted(times, low, high, bound)).toBe(firstAbove(times, identity, low, high, bound));
      }
    }
  });
});
