/**
 * A block's rows as numeric columns, and the orderings a block needs of them: quotes in session, contract
 * and quote time order; open interest grouped by contract in settled order. Counting sorts over whole
 * numbers, each loop in a function of its own (see the note above `countingOrder`).
 */
import { isoDateOfDay } from './days.js';

/** The snapshot columns a block reads, all as DOUBLE. */
export const QUOTE_COLUMNS = [
  'contract',
  'day',
  'quote_time',
  'bid',
  'ask',
  'bid_size',
  'ask_size',
  'last',
  'volume',
  'volume_time',
  'underlying_price',
  'iv',
  'delta',
  'gamma',
  'theta',
  'vega',
] as const;

/** The snapshot columns of a block, one Float64Array each (NULL as NaN), in `QUOTE_COLUMNS` order. */
export type QuoteColumns = Record<(typeof QUOTE_COLUMNS)[number], Float64Array>;

/**
 * A block's open interest as columns (a block of a year holds hundreds of thousands of rows: as objects
 * they were most of its bytes and of the loop's garbage collection). Contract `id`'s rows are
 * `offsets[id]…offsets[id+1]`, in settled-session order (one row per settled session, the table's key).
 */
export type InterestColumns = {
  readonly offsets: Int32Array;
  /** The settled session as a day number. */
  readonly settledDay: Float64Array;
  /** NULL as NaN. */
  readonly openInterest: Float64Array;
  readonly publishedAt: Float64Array;
  /** Per contract: 1 when its rows' publication instants never go back (then searched by halves). */
  readonly rising: Uint8Array;
};

export const INTEREST_NAMES = ['contract', 'settled', 'openInterest', 'publishedAt'] as const;

/** One session's rows of a block: the half-open range of row indices. */
export type SessionRange = { readonly start: number; readonly end: number };

/** A block's sessions and their rows (`days` in session order: a run of rows a session). */
export function sessionRanges(days: Float64Array): Map<string, SessionRange> {
  const sessions = new Map<string, SessionRange>();
  let start = 0;
  for (let i = 1; i <= days.length; i++) {
    if (i === days.length || days[i] !== days[start]) {
      sessions.set(isoDateOfDay(days[start]!), { start, end: i });
      start = i;
    }
  }
  return sessions;
}

/**
 * The numbers 0…n-1 ordered by their days (`days[i]`, whole day numbers), numbers of one day in order: a
 * counting sort, as a block's contracts (in symbol order) are put in expiration order and its rows (runs
 * of a file each) in session order.
 */
export function byDay(days: Float64Array): Int32Array {
  if (days.length === 0) return new Int32Array(0);
  const [low, high] = lowAndHigh(days);
  return countingOrder(days, low, high - low + 1).order;
}

/** The least and the greatest of `values` (not empty). */
function lowAndHigh(values: Float64Array): [low: number, high: number] {
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    if (value < low) low = value;
    if (value > high) high = value;
  }
  return [low, high];
}

/**
 * Parts' columns one after another; the one part with rows as it is. A block's carried rows are often
 * none (every contract quoted on its first session): copying the block's columns behind no rows cost a
 * fresh array a column.
 */
export function concatenated<K extends string>(
  all: readonly Record<K, Float64Array>[],
  names: readonly K[],
): Record<K, Float64Array> {
  const parts = all.filter((part) => part[names[0]!].length > 0);
  if (parts.length <= 1 && all.length > 0) return parts[0] ?? all[0]!;
  const length = parts.reduce((sum, part) => sum + part[names[0]!].length, 0);
  const out = {} as Record<K, Float64Array>;
  for (const name of names) {
    const column = new Float64Array(length);
    let offset = 0;
    for (const part of parts) {
      column.set(part[name], offset);
      offset += part[name].length;
    }
    out[name] = column;
  }
  return out;
}

/**
 * The block's rows in session, contract (symbol) and quote time order. Each file is sorted so and holds
 * sessions of its own, so rows read without an ORDER BY (DuckDB sorting a block cost about as much as
 * reading it) come as sorted runs, a file's each: a counting sort of their days puts the runs in order,
 * and a full sort is left for rows that still are not.
 */
export function inSessionOrder(quotes: QuoteColumns): QuoteColumns {
  if (inOrder(quotes)) return quotes;
  const { day } = quotes;
  const order = byDay(day);
  const bySession = permuted(quotes, order);
  if (inOrder(bySession)) return bySession;
  const { contract, quote_time: quoteTime } = quotes;
  order.sort((a, b) => day[a]! - day[b]! || contract[a]! - contract[b]! || quoteTime[a]! - quoteTime[b]!);
  return permuted(quotes, order);
}

/** Whether a block's rows are in session, contract, quote time order. */
function inOrder({ day, contract, quote_time: quoteTime }: QuoteColumns): boolean {
  for (let i = 1; i < day.length; i++) {
    if (day[i] !== day[i - 1]) {
      if (day[i]! < day[i - 1]!) return false;
    } else if (contract[i] !== contract[i - 1]) {
      if (contract[i]! < contract[i - 1]!) return false;
    } else if (quoteTime[i]! < quoteTime[i - 1]!) return false;
  }
  return true;
}

/** The columns with their rows in the given order. */
function permuted(quotes: QuoteColumns, order: Int32Array): QuoteColumns {
  const out = {} as Record<string, Float64Array>;
  for (const name of QUOTE_COLUMNS) out[name] = gathered(quotes[name], order);
  return out as QuoteColumns;
}

/**
 * Open interest rows (read in the files' order) as columns grouped by contract, each contract's in
 * settled-session order: a stable counting sort by contract keeps the files' settled order, and a
 * contract whose rows came from files out of order is sorted on its own.
 */
export function interestColumns(
  read: Record<'contract' | 'settled' | 'openInterest' | 'publishedAt', Float64Array>,
  count: number,
): InterestColumns {
  const { offsets, order } = countingOrder(read.contract, 0, count);
  runsInOrder(order, offsets, read.settled);
  const publishedAt = gathered(read.publishedAt, order);
  return {
    offsets,
    settledDay: gathered(read.settled, order),
    openInterest: gathered(read.openInterest, order),
    publishedAt,
    rising: risingRuns(publishedAt, offsets),
  };
}

// Each of the helpers below holds one loop over a block's rows: V8 optimizes a long loop while it runs
// (on-stack replacement), and a function of several such loops was thrown back to the interpreter at the
// next one, which had not run yet (a two-year block's indexing took 47 ms in a process's second backtest,
// 7 ms once warm).

/**
 * Rows by their whole-number keys `keys[i]` in `low`…`low + count - 1` (a counting sort): the rows of key
 * `low + k` are `order[offsets[k]…offsets[k + 1]]`, in the order they come.
 */
export function countingOrder(
  keys: Float64Array,
  low: number,
  count: number,
): { offsets: Int32Array; order: Int32Array } {
  const offsets = new Int32Array(count + 1);
  countKeys(keys, low, offsets);
  for (let k = 0; k < count; k++) offsets[k + 1]! += offsets[k]!;
  return { offsets, order: placedByKey(keys, low, offsets) };
}

/** Adds one to `counts[key - low + 1]` for each key. */
function countKeys(keys: Float64Array, low: number, counts: Int32Array): void {
  for (let i = 0; i < keys.length; i++) counts[keys[i]! - low + 1]!++;
}

/** Rows in key order, each key's at its offset (`offsets`, as `countingOrder` makes them). */
function placedByKey(keys: Float64Array, low: number, offsets: Int32Array): Int32Array {
  const fill = offsets.slice(0, offsets.length - 1);
  const order = new Int32Array(keys.length);
  for (let i = 0; i < keys.length; i++) order[fill[keys[i]! - low]!++] = i;
  return order;
}

/** Sorts each run `order[offsets[id]…offsets[id + 1]]` by `by` of its rows, unless it already is. */
function runsInOrder(order: Int32Array, offsets: Int32Array, by: Float64Array): void {
  for (let id = 0; id + 1 < offsets.length; id++) {
    const start = offsets[id]!;
    const end = offsets[id + 1]!;
    for (let k = start + 1; k < end; k++) {
      if (by[order[k]!]! < by[order[k - 1]!]!) {
        order.subarray(start, end).sort((a, b) => by[a]! - by[b]!);
        break;
      }
    }
  }
}

/**
 * `from`'s values in the order of `order`'s rows. A loop, not `Float64Array.from(order, fn)`: that goes
 * through the iterator protocol and a call a value, three times slower (a contract table's 92k values
 * took 19–35 ms in a fresh process that way, 4–8 ms so).
 */
export function gathered(
  from: Float64Array,
  order: ArrayLike<number>,
  to: Float64Array = new Float64Array(order.length),
): Float64Array {
  for (let i = 0; i < order.length; i++) to[i] = from[order[i]!]!;
  return to;
}

/**
 * Number columns of one length cut from shared buffers: what an answer made from columns makes its forty
 * or so columns from. A typed array of more than 64 bytes gets a buffer of its own outside V8's heap,
 * allocated, tracked and freed one by one: sixty columns of 150 rows made that way cost some 100 µs, and
 * cut from one buffer some 35 (outside the benches, gathers included). A column kept keeps its whole buffer:
 * give one answer's kept columns a `ColumnBuffer` of their own, apart from those it lets go.
 */
export class ColumnBuffer {
  private buffer: ArrayBuffer | undefined;
  private used = 0;

  /** Columns of `length` values, `perBuffer` of them to a buffer (another buffer when those run out). */
  constructor(
    readonly length: number,
    private readonly perBuffer: number,
  ) {}

  /** A new column of zeros. */
  take(): Float64Array {
    const bytes = this.length * Float64Array.BYTES_PER_ELEMENT;
    if (this.buffer === undefined || this.used + bytes > this.buffer.byteLength) {
      this.buffer = new ArrayBuffer(bytes * this.perBuffer);
      this.used = 0;
    }
    const column = new Float64Array(this.buffer, this.used, this.length);
    this.used += bytes;
    return column;
  }

  /** `from`'s values in the order of `order`'s rows, in a new column (as {@link gathered}). */
  gathered(from: Float64Array, order: ArrayLike<number>): Float64Array {
    return gathered(from, order, this.take());
  }
}

/** Per run `values[offsets[id]…offsets[id + 1]]`: 1 if it never falls, else 0. */
function risingRuns(values: Float64Array, offsets: Int32Array): Uint8Array {
  const rising = new Uint8Array(offsets.length - 1);
  for (let id = 0; id < rising.length; id++) {
    let up = 1;
    for (let k = offsets[id]! + 1; k < offsets[id + 1]! && up; k++) if (values[k]! < values[k - 1]!) up = 0;
    rising[id] = up;
  }
  return rising;
}
