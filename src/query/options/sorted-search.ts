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
