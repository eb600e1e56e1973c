/** Searches by halves over sorted things: symbols, expirations, a contract's rows. */

/** The index of `symbol` among `count` symbols in ascending order, each read by `at`, or -1. */
export function indexInOrder(count: number, at: (index: number) => string, symbol: string): number {
  const low = firstNot(0, count, (i) => at(i) < symbol);
  return low < count && at(low) === symbol ? low : -1;
}

/** The first index in `low…high` where `holds` stops holding (it holds for a prefix of the range). */
export function firstNot(low: number, high: number, holds: (index: number) => boolean): number {
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (holds(middle)) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * The first `k` in `low…high` whose row's value `values[order[k]]` is above `bound`, the values rising
 * along `order` over the range (`firstNot` of `≤ bound`, with no function to call).
 */
export function firstAbove(
  values: Float64Array,
  order: Int32Array,
  low: number,
  high: number,
  bound: number,
): number {
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[order[middle]!]! <= bound) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * The first index in `low…high` whose value is above `bound`, the values rising over the range
 * (`firstAbove` with no order).
 */
export function firstAboveSorted(values: Float64Array, low: number, high: number, bound: number): number {
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! <= bound) low = middle + 1;
    else high = middle;
  }
  return low;
}
