/**
 * Reading rows from session column files (`store/session-columns.ts`) as a block's statements would hand
 * them over: per session part, the runs of rows whose contracts are kept (found from the key column alone),
 * then each column asked for, run by run, into the caller's arrays. No statement, nothing to decode.
 */
import { closeSync } from 'node:fs';
import { SizedLru } from '../../store/cache.js';
import type { KeySessions, SessionColumnsFile, SessionColumnsPart } from '../../store/session-columns.js';
import { KeyIndex } from './key-index.js';
import { firstAboveSorted } from './sorted-search.js';

/**
 * How the rows of some contracts (one date's, a few carried ones) are found in a session whose rows are in
 * option symbol order (`SessionColumnsFile.inSymbolOrder`): every row's contract has a number in the
 * underlying's contract table, which is in symbol order too, so a session's rows run in ascending numbers,
 * and the rows of the contracts numbered `[low, high)` are one run, found by halves (a few keys read)
 * instead of by reading every key of the session.
 */
export type SymbolOrder = {
  /** A row key's contract number in the table; undefined when it has none (every row is looked at then). */
  readonly numberOf: (key: number) => number | undefined;
  /** The numbers of the contracts looked for, as ascending ranges `[low, high)` flattened in pairs. */
  readonly ranges: readonly number[];
};

/**
 * Contracts apart by at most this many numbers are looked for in one run: the rows of the few between
 * (another side, a contract not yet listed) cost less to pass over than a search by halves.
 */
const RANGE_GAP = 256;

/**
 * The `SymbolOrder` of the contracts numbered within `ranges` (`[low, high)`, in any order) in the table
 * `numberOf` numbers by: sorted, and those apart by at most `RANGE_GAP` numbers joined.
 */
export function symbolOrder(
  numberOf: (key: number) => number | undefined,
  ranges: readonly (readonly [number, number])[],
): SymbolOrder {
  const joined: number[] = [];
  for (const [low, high] of [...ranges].sort((a, b) => a[0] - b[0])) joinRange(joined, low, high);
  return { numberOf, ranges: joined };
}

/** Appends `[low, high)` (no lower than the last range's low) to `joined`, or joins it to the last range. */
function joinRange(joined: number[], low: number, high: number): void {
  if (high <= low) return;
  const last = joined.length - 1;
  if (last > 0 && low <= joined[last]! + RANGE_GAP) joined[last] = Math.max(joined[last]!, high);
  else joined.push(low, high);
}

/**
 * Ranges past which a session's rows are all looked at: each costs two searches of a dozen reads (one
 * date's contracts are one range per root), and a session's keys are one read of a few hundred kilobytes.
 */
const MOST_SEARCHED_RANGES = 3;

/** The `SymbolOrder` of the contracts numbered `numbers` (ascending), as `symbolOrder` joins them. */
export function symbolOrderOf(
  numberOf: (key: number) => number | undefined,
  numbers: Int32Array,
): SymbolOrder {
  const joined: number[] = [];
  for (const number of numbers) joinRange(joined, number, number + 1);
  return { numberOf, ranges: joined };
}

/**
 * Where the rows of `part` that the contracts of `order` may have lie, and their keys: `keysOf(from, to)`
 * gives the keys of rows `from…to` of a span (valid until the next call of either). The spans are
 * ascending row ranges `[from, to)` flattened in pairs, found by halves; every row when no order is
 * given, the file does not vouch for its order, or a row's contract has no number.
 */
function keySpans(
  part: SessionColumnsPart,
  order: SymbolOrder | undefined,
  fd: number,
): { spans: number[]; keysOf: (from: number, to: number) => Float64Array } {
  const searched =
    order !== undefined &&
    part.file.inSymbolOrder &&
    part.rows >= SEARCHED_ROWS &&
    order.ranges.length <= 2 * MOST_SEARCHED_RANGES
      ? order
      : undefined;
  // A session of a dense chain's day (thousands of rows) has its keys read at once: one read of some
  // 100 KB costs less than the dozens of reads of a key or a page that its searches make (on the 26 M-row
  // store's 2019 loop, 0.17 ms a session). An intraday session's are searched in the file.
  if (part.rows <= WHOLE_KEY_ROWS || searched === undefined) {
    const keys = scratchWholeKeys(part.rows);
    let read = false;
    const whole = () => {
      if (!read) part.file.readInto(part.day, 'key', 0, part.rows, keys, 0, fd);
      read = true;
      return keys;
    };
    const found = searched && orderedSpans(part, searched, (row) => whole()[row]!);
    return { spans: found ?? [0, part.rows], keysOf: (from, to) => whole().subarray(from, to) };
  }
  const found = orderedSpans(part, searched, (row) => part.file.keyAt(part.day, row, fd), fd);
  return {
    spans: found ?? [0, part.rows],
    keysOf: (from, to) => {
      const keys = scratchKeys(to - from);
      part.file.readInto(part.day, 'key', from, to, keys, 0, fd);
      return keys.subarray(0, to - from);
    },
  };
}

/** Sessions with at most this many rows have their keys read whole (256 KB) when searched. */
const WHOLE_KEY_ROWS = 32_768;

/**
 * The rows of `part` that the contracts of `order` may have, as ascending row ranges `[from, to)` flattened
 * in pairs, found by halves over the keys `keyAt` gives; undefined when a row's contract has no number. With
 * `fd`, the keys are in the file: the search narrows to a page, read whole and looked through in memory.
 */
function orderedSpans(
  part: SessionColumnsPart,
  order: SymbolOrder,
  keyAt: (row: number) => number,
  fd?: number,
): number[] | undefined {
  const page = fd === undefined ? 0 : PAGE_ROWS;
  /** The first row from `from` on whose contract's number is at least `number`. */
  const firstAtLeast = (number: number, from: number): number | undefined => {
    let low = from;
    let high = part.rows;
    // Rows before `low` are numbered below `number`, rows from `high` on at or above it.
    while (high - low > page) {
      const middle = (low + high) >>> 1;
      const at = order.numberOf(keyAt(middle));
      if (at === undefined) return undefined;
      if (at < number) low = middle + 1;
      else high = middle;
    }
    if (fd === undefined) return high;
    // The last page read whole, and looked through in memory.
    const keys = scratchPage(high - low);
    part.file.readInto(part.day, 'key', low, high, keys, 0, fd);
    for (let i = 0; i < high - low; i++) {
      const at = order.numberOf(keys[i]!);
      if (at === undefined) return undefined;
      if (at >= number) return low + i;
    }
    return high;
  };
  const spans: number[] = [];
  let from = 0;
  for (let r = 0; r < order.ranges.length; r += 2) {
    const start = firstAtLeast(order.ranges[r]!, from);
    const end = start === undefined ? undefined : firstAtLeast(order.ranges[r + 1]!, start);
    if (start === undefined || end === undefined) return undefined;
    if (end > start) spans.push(start, end);
    from = end;
  }
  return spans;
}

/**
 * Rows a search by halves in a file narrows to before it reads them whole: a read of a key costs a call
 * into the system, a few microseconds, as much as reading a few hundred keys at once.
 */
const PAGE_ROWS = 512;

/** Sessions with fewer rows are read whole: their keys cost one read of a few dozen kilobytes. */
const SEARCHED_ROWS = 8 * PAGE_ROWS;

/** A buffer for a page of keys, reused. */
let pageBuffer = new Float64Array(0);
function scratchPage(count: number): Float64Array {
  if (pageBuffer.length < count) pageBuffer = new Float64Array(Math.max(count, PAGE_ROWS + 1));
  return pageBuffer;
}

/** The kept rows of some session parts, ready to be read into columns (see `partRuns`). */
export type PartRuns = {
  /** How many rows are kept. */
  readonly rows: number;
  /**
   * Reads the kept rows' columns, in the parts' order, into each target from index `at` on. The column
   * `key` is the rows' keys, and `day` their session's day number; any other is the file's column.
   * Throws when a file cannot be read (the caller reads through DuckDB instead).
   */
  read(targets: readonly (readonly [column: string, target: Float64Array])[], at: number): void;
};

/**
 * The rows of `parts` whose keys `kept` keeps (every row without it), as runs of consecutive rows per
 * part. Reads each part's key column, or in a session in symbol order only where `order`'s contracts lie;
 * throws when a file cannot be read.
 */
export function partRuns(
  parts: readonly SessionColumnsPart[],
  kept?: (key: number) => boolean,
  order?: SymbolOrder,
): PartRuns {
  const found = keptRuns(parts, kept, order);
  return {
    rows: found.reduce((sum, { keys }) => sum + keys.length, 0),
    read: (targets, at) =>
      withFiles((fdOf) => {
        for (const [column, target] of targets) {
          let to = at;
          for (const { part, keys, runs } of found) {
            let keyAt = 0;
            for (let r = 0; r < runs.length; r += 2) {
              const low = runs[r]!;
              const high = runs[r + 1]!;
              if (column === 'key') target.set(keys.subarray(keyAt, keyAt + high - low), to);
              else if (column === 'day') target.fill(part.day, to, to + high - low);
              else part.file.readInto(part.day, column, low, high, target, to, fdOf(part.file));
              to += high - low;
              keyAt += high - low;
            }
          }
        }
      }),
  };
}

/** A part's kept rows: runs of consecutive rows (`keyRuns`), and their keys in order. */
type KeptRuns = { part: SessionColumnsPart; keys: Float64Array; runs: number[] };

/**
 * Per part of `parts` with rows, its runs of rows whose keys `kept` keeps (every row without it), looked
 * for among the rows `order` finds (every row without it).
 */
function keptRuns(
  parts: readonly SessionColumnsPart[],
  kept?: (key: number) => boolean,
  order?: SymbolOrder,
): KeptRuns[] {
  const found: KeptRuns[] = [];
  withFiles((fdOf) => {
    for (const part of parts) {
      if (part.rows === 0) continue;
      const fd = fdOf(part.file);
      if (kept === undefined) {
        const keys = new Float64Array(part.rows);
        part.file.readInto(part.day, 'key', 0, part.rows, keys, 0, fd);
        found.push({ part, keys, runs: [0, part.rows] });
        continue;
      }
      // The spans' keys read into memory used again (fresh memory is dear to touch), the kept ones copied.
      const { spans, keysOf } = keySpans(part, order, fd);
      const runs: number[] = [];
      let count = 0;
      for (let s = 0; s < spans.length; s += 2) {
        const from = spans[s]!;
        const to = spans[s + 1]!;
        const all = keysOf(from, to);
        const spanRuns = keyRuns(all, to - from, kept);
        const keptKeys = scratchKept(count + keptCount(spanRuns));
        for (let r = 0; r < spanRuns.length; r += 2) {
          keptKeys.set(all.subarray(spanRuns[r]!, spanRuns[r + 1]!), count);
          count += spanRuns[r + 1]! - spanRuns[r]!;
          runs.push(spanRuns[r]! + from, spanRuns[r + 1]! + from);
        }
      }
      found.push({ part, keys: keptBuffer.slice(0, count), runs });
    }
  });
  return found;
}

/** A buffer for the kept keys of a part, grown keeping what it holds, reused. */
let keptBuffer = new Float64Array(0);
function scratchKept(count: number): Float64Array {
  if (keptBuffer.length < count) {
    const grown = new Float64Array(Math.max(count, 2 * keptBuffer.length));
    grown.set(keptBuffer);
    keptBuffer = grown;
  }
  return keptBuffer;
}

/**
 * The runs of the first `rows` keys of `keys` that `kept` keeps, as row ranges `[low, high)` flattened in
 * pairs: per run of one key's rows (an intraday session holds a contract's rows one after another) one
 * decision for them all, and consecutive kept rows make one range. With `keptKeys`, each kept key's own
 * run is added to it too, as a pair `[low, high)`, in order.
 */
function keyRuns(
  keys: Float64Array,
  rows: number,
  kept: (key: number) => boolean,
  keptKeys?: number[],
): number[] {
  const runs: number[] = [];
  let start = -1;
  for (let i = 0; i < rows; ) {
    const key = keys[i]!;
    let end = i + 1;
    while (end < rows && keys[end] === key) end++;
    if (kept(key)) {
      keptKeys?.push(i, end);
      if (start === -1) start = i;
    } else if (start !== -1) {
      runs.push(start, i);
      start = -1;
    }
    i = end;
  }
  if (start !== -1) runs.push(start, rows);
  return runs;
}

/** The rows the runs of `keyRuns` hold. */
function keptCount(runs: readonly number[]): number {
  let count = 0;
  for (let r = 0; r < runs.length; r += 2) count += runs[r + 1]! - runs[r]!;
  return count;
}

/**
 * Of the rows of `parts` whose keys `kept` keeps, each contract's latest with quote time ≤ `cutoff`: of a
 * run of one key's rows (a session holds a contract's rows one after another, in quote time order), the
 * last by the cutoff. The rows of an instant of an intraday session: one a contract of the hundreds of
 * snapshots each has, whose other columns are then read alone (`readPicked`). Should a contract's rows lie
 * in more than one run, each run gives its own: the caller's choice of the latest row among them stands.
 * In a session in symbol order only where `order`'s contracts lie is looked at. Throws when a file cannot
 * be read.
 */
export function latestRows(
  parts: readonly SessionColumnsPart[],
  kept: (key: number) => boolean,
  cutoff: number,
  order?: SymbolOrder,
): PartRuns {
  const picked: { part: SessionColumnsPart; keys: Float64Array; rows: Int32Array }[] = [];
  let total = 0;
  withFiles((fdOf) => {
    for (const part of parts) {
      if (part.rows === 0) continue;
      const fd = fdOf(part.file);
      const rows: number[] = [];
      const rowKeys: number[] = [];
      // The keys of the rows `order` finds (every row's without it) and the kept rows' quote times, read
      // into memory used again: a session's kept rows copied into fresh arrays cost more than the rest of
      // the answer (fresh memory is dear to touch).
      const { spans, keysOf } = keySpans(part, order, fd);
      for (let s = 0; s < spans.length; s += 2) {
        const from = spans[s]!;
        const all = keysOf(from, spans[s + 1]!);
        const keptKeys: number[] = [];
        const runs = keyRuns(all, spans[s + 1]! - from, kept, keptKeys);
        const times = scratchRange(keptCount(runs));
        let at = 0;
        for (let r = 0; r < runs.length; r += 2) {
          part.file.readInto(part.day, 'quote_time', from + runs[r]!, from + runs[r + 1]!, times, at, fd);
          at += runs[r + 1]! - runs[r]!;
        }
        // Per run of one key's rows, its latest by the cutoff, found by halves: the times rise along the run.
        // Looking at every row's time cost as much as reading them (some 60,000 a random minute of the
        // intraday bench store). The kept keys' runs are the kept ranges' rows in order, as `times` holds them.
        let k = 0;
        for (let p = 0; p < keptKeys.length; p += 2) {
          const low = keptKeys[p]!;
          const length = keptKeys[p + 1]! - low;
          const after = firstAboveSorted(times, k, k + length, cutoff);
          if (after > k) {
            rows.push(from + low + (after - 1 - k));
            rowKeys.push(all[low]!);
          }
          k += length;
        }
      }
      picked.push({ part, keys: Float64Array.from(rowKeys), rows: Int32Array.from(rows) });
      total += rows.length;
    }
  });
  return {
    rows: total,
    read: (targets, at) =>
      withFiles((fdOf) => {
        for (const [column, target] of targets) {
          let to = at;
          for (const { part, keys, rows } of picked) {
            if (column === 'key') target.set(keys, to);
            else if (column === 'day') target.fill(part.day, to, to + rows.length);
            else part.file.readPicked(part.day, column, rows, target, to, fdOf(part.file));
            to += rows.length;
          }
        }
      }),
  };
}

/**
 * Runs `work` with a descriptor per file it reads, got on first use (`checkOut`: kept open from the last
 * run, when it went well) and given back after; closed when a read failed.
 */
function withFiles(work: (fdOf: (file: SessionColumnsFile) => number) => void): void {
  const open = new Map<SessionColumnsFile, number>();
  let done = false;
  try {
    work((file) => {
      let fd = open.get(file);
      if (fd === undefined) {
        fd = file.checkOut();
        open.set(file, fd);
      }
      return fd;
    });
    done = true;
  } finally {
    for (const [file, fd] of open) {
      if (done) file.checkIn(fd);
      else closeSync(fd);
    }
  }
}

/** A buffer for the keys of a span of a part's rows, reused. */
let keysBuffer = new Float64Array(0);
function scratchKeys(count: number): Float64Array {
  if (keysBuffer.length < count) keysBuffer = new Float64Array(Math.max(count, 2 * keysBuffer.length));
  return keysBuffer;
}

/** A buffer for the keys of a part's every row (`keySpans`), reused. */
let wholeKeysBuffer = new Float64Array(0);
function scratchWholeKeys(count: number): Float64Array {
  if (wholeKeysBuffer.length < count)
    wholeKeysBuffer = new Float64Array(Math.max(count, 2 * wholeKeysBuffer.length));
  return wholeKeysBuffer;
}

/**
 * Of each key of `wanted`, its latest row in `parts` (in session order): the last row of it in the
 * newest session that has one (a session's rows of a contract are in quote time order). Walks the
 * sessions newest first and stops once every key is found. Returns the rows' day numbers, keys and the
 * `columns` asked (the file's names), in no particular order. Throws when a file cannot be read.
 */
export function latestByKey(
  parts: readonly SessionColumnsPart[],
  wanted: ReadonlySet<number>,
  columns: readonly string[],
  /** Where the wanted keys' rows lie in a session in symbol order (every row is looked at without it). */
  order?: SymbolOrder,
): { keys: Float64Array; days: Float64Array; values: Float64Array[] } {
  // The keys numbered in a typed index: a Set or Map keyed by these doubles boxes each row's key, and a
  // look back over a year of a dense chain's sessions tests millions of rows (the 26 M-row store's 2019
  // loop took 13.8 ms a session this way against 15.0-16.1 with a Set and a Map).
  const keyOf = Float64Array.from(wanted);
  const index = KeyIndex.of(keyOf)!; // a set's keys are distinct
  const done = new Uint8Array(keyOf.length);
  const lastRow = new Int32Array(keyOf.length);
  /** The part in which each key was last seen, so that each is listed once a part. */
  const seenIn = new Int32Array(keyOf.length).fill(-1);
  let left = keyOf.length;
  const found: { part: SessionColumnsPart; rows: number[]; keys: number[] }[] = [];
  let total = 0;
  const filter = keyFilter(keyOf);
  withFiles((fdOf) => {
    // Only the sessions that hold some key's latest rows, as the files tell: the others would each be
    // searched for nothing (a contract unquoted for months is looked for in every session).
    const located = locatedParts(parts, keyOf, fdOf);
    const searched = located.map(({ part }) => part);
    for (let p = searched.length - 1; p >= 0 && left > 0; p--) {
      const part = searched[p]!;
      if (part.rows === 0) continue;
      const fd = fdOf(part.file);
      const seen: number[] = [];
      // In a session in symbol order, only the rows where the wanted contracts lie (a date's few hundred),
      // of those it is known to hold when it is.
      const partOrder =
        order === undefined
          ? undefined
          : narrowedOrder(
              order,
              located[p]!.keys.map((at) => keyOf[at]!),
            );
      const { spans, keysOf } = keySpans(part, partOrder, fd);
      for (let s = 0; s < spans.length; s += 2) {
        const from = spans[s]!;
        const count = spans[s + 1]! - from;
        const all = keysOf(from, from + count);
        const words = new Uint32Array(all.buffer, all.byteOffset, count * 2);
        // A look back walks every row of many sessions for a few keys: a row is passed over by a bit of
        // the filter (most are), and a contract's next rows (a session holds them one after another) by
        // its key.
        let previous = Number.NaN;
        let at: number | undefined;
        for (let i = 0; i < count; i++) {
          const key = all[i]!;
          if (key !== previous) {
            previous = key;
            const bit = filterBit(words[2 * i]!);
            at = (filter[bit >>> 5]! & (1 << (bit & 31))) === 0 ? undefined : index.get(key);
            if (at !== undefined && done[at] === 1) at = undefined;
            if (at !== undefined && seenIn[at] !== p) {
              seenIn[at] = p;
              seen.push(at);
            }
          }
          if (at !== undefined) lastRow[at] = from + i;
        }
      }
      if (seen.length === 0) continue;
      // Found in this session, the newest that has them: older sessions are not asked for them again.
      for (const at of seen) done[at] = 1;
      left -= seen.length;
      seen.sort((a, b) => lastRow[a]! - lastRow[b]!);
      const rows = seen.map((at) => lastRow[at]!);
      found.push({ part, rows, keys: seen.map((at) => keyOf[at]!) });
      total += rows.length;
    }
  });
  const keys = new Float64Array(total);
  const days = new Float64Array(total);
  const values = columns.map(() => new Float64Array(total));
  withFiles((fdOf) => {
    let at = 0;
    for (const { part, rows, keys: rowKeys } of found) {
      keys.set(rowKeys, at);
      days.fill(part.day, at, at + rows.length);
      // One read of the range the rows lie in, column by column, into memory used again.
      const low = rows[0]!;
      const high = rows.at(-1)! + 1;
      const range = scratchRange(high - low);
      for (const [c, column] of columns.entries()) {
        part.file.readInto(part.day, column, low, high, range, 0, fdOf(part.file));
        const target = values[c]!;
        for (let k = 0; k < rows.length; k++) target[at + k] = range[rows[k]! - low]!;
      }
      at += rows.length;
    }
  });
  return { keys, days, values };
}

/**
 * The parts holding each of `keyOf`'s latest rows within `parts`, in session order, each with the keys
 * (positions in `keyOf`) it holds them of: by the files' key sessions sections, newest file first, each
 * key's newest session within the parts.
 */
function locatedParts(
  parts: readonly SessionColumnsPart[],
  keyOf: Float64Array,
  fdOf: (file: SessionColumnsFile) => number,
): { part: SessionColumnsPart; keys: number[] }[] {
  const located = new Map<SessionColumnsPart, number[]>();
  let left = Array.from(keyOf.keys());
  // The parts of one file are consecutive (files hold runs of sessions that do not overlap).
  for (let end = parts.length; end > 0 && left.length > 0; ) {
    const file = parts[end - 1]!.file;
    let start = end - 1;
    while (start > 0 && parts[start - 1]!.file === file) start--;
    const section = keySessionsOf(file, fdOf);
    /** The file's session positions of these parts (they are the file's sessions), to each its part. */
    const partAt = new Map<number, SessionColumnsPart>();
    for (let p = start; p < end; p++) partAt.set(file.sessionIndex(parts[p]!.day)!, parts[p]!);
    const low = Math.min(...partAt.keys());
    const high = Math.max(...partAt.keys());
    const notHere: number[] = [];
    for (const at of left) {
      const k = sortedIndexOf(section.keys, keyOf[at]!);
      const position = k === -1 ? -1 : newestBit(section.bits, k * section.words, low, high);
      const part = position === -1 ? undefined : partAt.get(position);
      if (part === undefined) {
        notHere.push(at);
        continue;
      }
      const keys = located.get(part);
      if (keys === undefined) located.set(part, [at]);
      else keys.push(at);
    }
    left = notHere;
    end = start;
  }
  return parts.filter((part) => located.has(part)).map((part) => ({ part, keys: located.get(part)! }));
}

/**
 * The key sessions sections read, by file, least recently used first, of every store open in the process:
 * bounded in bytes. A loop's look backs go over the same older files at each new date (the 26 M-row
 * store's 2019 `dte=30` loop: some 24 files, 300 KB a section, at a dozen dates).
 */
const KEPT_SECTION_BYTES = 32 * 1024 * 1024;
const keptSections = new SizedLru<SessionColumnsFile>(KEPT_SECTION_BYTES);

/** The key sessions section of `file`: kept from an earlier look back, or read (and kept). */
function keySessionsOf(file: SessionColumnsFile, fdOf: (file: SessionColumnsFile) => number): KeySessions {
  const kept = keptSections.get(file) as KeySessions | undefined;
  if (kept !== undefined) return kept;
  const section = file.keySessions(fdOf(file));
  // The keys and the bits share one buffer; one past a quarter of the budget would push out the rest.
  const bytes = section.keys.buffer.byteLength;
  if (bytes <= KEPT_SECTION_BYTES / 4) {
    keptSections.set(file, section);
    keptSections.sized(file, section, bytes);
  }
  return section;
}

/** The position of `key` in the ascending `keys`, or -1. */
function sortedIndexOf(keys: Float64Array, key: number): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (keys[middle]! < key) low = middle + 1;
    else high = middle;
  }
  return low < keys.length && keys[low] === key ? low : -1;
}

/** The highest bit from `low` to `high` set in the words of `bits` from `start` on, or -1. */
function newestBit(bits: Uint32Array, start: number, low: number, high: number): number {
  for (let b = high; b >= low; b--) if ((bits[start + (b >>> 5)]! & (1 << (b & 31))) !== 0) return b;
  return -1;
}

/** `order` narrowed to the contracts of `keys` (undefined, every row looked at, when one has no number). */
function narrowedOrder(order: SymbolOrder, keys: readonly number[]): SymbolOrder | undefined {
  const numbers = new Int32Array(keys.length);
  for (const [i, key] of keys.entries()) {
    const number = order.numberOf(key);
    if (number === undefined) return undefined;
    numbers[i] = number;
  }
  return symbolOrderOf(order.numberOf, numbers.sort());
}

/**
 * A filter of keys by 16 bits of their doubles' first words (on little-endian machines the low mantissa
 * bits, which vary with the keys' low bits; any bits would do, taken alike from the keys and the rows): a
 * bit set for each key's, so that a row whose bit is clear is not one of them. Integer work on the bytes
 * already read, where a double's remainder costs a division a row.
 */
function keyFilter(keys: Float64Array): Uint32Array {
  const words = new Uint32Array(keys.buffer, keys.byteOffset, keys.length * 2);
  const filter = new Uint32Array(2_048);
  for (let i = 0; i < keys.length; i++) {
    const bit = filterBit(words[2 * i]!);
    filter[bit >>> 5]! |= 1 << (bit & 31);
  }
  return filter;
}

/** A key's bit of `keyFilter`, from its double's first word. */
const filterBit = (lowWord: number) => (lowWord >>> 8) & 0xffff;

/** A buffer for a range of one column's rows, reused. */
let rangeBuffer = new Float64Array(0);
function scratchRange(count: number): Float64Array {
  if (rangeBuffer.length < count) rangeBuffer = new Float64Array(Math.max(count, 2 * rangeBuffer.length));
  return rangeBuffer;
}
