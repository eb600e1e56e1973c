/**
 * Reading rows from session column files (`store/session-columns.ts`) as a block's statements would hand
 * them over: per session part, the runs of rows whose contracts are kept (found from the key column alone),
 * then each column asked for, run by run, into the caller's arrays. No statement, nothing to decode.
 */
import { closeSync } from 'node:fs';
import type { SessionColumnsFile, SessionColumnsPart } from '../../store/session-columns.js';
import { KeyIndex } from './key-index.js';

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
 * part. Reads each part's key column; throws when a file cannot be read.
 */
export function partRuns(parts: readonly SessionColumnsPart[], kept?: (key: number) => boolean): PartRuns {
  const found = keptRuns(parts, kept);
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

/** Per part of `parts` with rows, its runs of rows whose keys `kept` keeps (every row without it). */
function keptRuns(parts: readonly SessionColumnsPart[], kept?: (key: number) => boolean): KeptRuns[] {
  const found: KeptRuns[] = [];
  withFiles((fdOf) => {
    for (const part of parts) {
      if (part.rows === 0) continue;
      if (kept === undefined) {
        const keys = new Float64Array(part.rows);
        part.file.readInto(part.day, 'key', 0, part.rows, keys, 0, fdOf(part.file));
        found.push({ part, keys, runs: [0, part.rows] });
        continue;
      }
      // Every row's key read into memory used again (fresh memory is dear to touch), the kept ones copied.
      const all = scratchKeys(part.rows);
      part.file.readInto(part.day, 'key', 0, part.rows, all, 0, fdOf(part.file));
      const runs = keyRuns(all, part.rows, kept);
      const keys = new Float64Array(keptCount(runs));
      let at = 0;
      for (let r = 0; r < runs.length; r += 2) {
        keys.set(all.subarray(runs[r]!, runs[r + 1]!), at);
        at += runs[r + 1]! - runs[r]!;
      }
      found.push({ part, keys, runs });
    }
  });
  return found;
}

/**
 * The runs of the first `rows` keys of `keys` that `kept` keeps, as row ranges `[low, high)` flattened in
 * pairs: per run of one key's rows (an intraday session holds a contract's rows one after another) one
 * decision for them all, and consecutive kept rows make one range.
 */
function keyRuns(keys: Float64Array, rows: number, kept: (key: number) => boolean): number[] {
  const runs: number[] = [];
  let start = -1;
  for (let i = 0; i < rows; ) {
    const key = keys[i]!;
    let end = i + 1;
    while (end < rows && keys[end] === key) end++;
    if (kept(key)) {
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
 * Throws when a file cannot be read.
 */
export function latestRows(
  parts: readonly SessionColumnsPart[],
  kept: (key: number) => boolean,
  cutoff: number,
): PartRuns {
  const picked: { part: SessionColumnsPart; keys: Float64Array; rows: Int32Array }[] = [];
  let total = 0;
  withFiles((fdOf) => {
    for (const part of parts) {
      if (part.rows === 0) continue;
      const fd = fdOf(part.file);
      // Every row's key and the kept rows' quote times read into memory used again: a session's kept rows
      // copied into fresh arrays cost more than the rest of the answer (fresh memory is dear to touch).
      const all = scratchKeys(part.rows);
      part.file.readInto(part.day, 'key', 0, part.rows, all, 0, fd);
      const runs = keyRuns(all, part.rows, kept);
      const times = scratchRange(keptCount(runs));
      let at = 0;
      for (let r = 0; r < runs.length; r += 2) {
        part.file.readInto(part.day, 'quote_time', runs[r]!, runs[r + 1]!, times, at, fd);
        at += runs[r + 1]! - runs[r]!;
      }
      const rows: number[] = [];
      const rowKeys: number[] = [];
      let k = 0;
      for (let r = 0; r < runs.length; r += 2) {
        const high = runs[r + 1]!;
        let best = -1;
        for (let i = runs[r]!; i < high; i++, k++) {
          if (times[k]! <= cutoff) best = i;
          // The last row of a key's run: its latest by the cutoff, if any, is picked.
          if (i + 1 === high || all[i + 1] !== all[i]) {
            if (best !== -1) {
              rows.push(best);
              rowKeys.push(all[i]!);
            }
            best = -1;
          }
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

/** Runs `work` with a descriptor per file it reads, opened on first use and closed after. */
function withFiles(work: (fdOf: (file: SessionColumnsFile) => number) => void): void {
  const open = new Map<SessionColumnsFile, number>();
  try {
    work((file) => {
      let fd = open.get(file);
      if (fd === undefined) {
        fd = file.openForReading();
        open.set(file, fd);
      }
      return fd;
    });
  } finally {
    for (const fd of open.values()) closeSync(fd);
  }
}

/** A buffer for the keys of a part's every row, reused. */
let keysBuffer = new Float64Array(0);
function scratchKeys(count: number): Float64Array {
  if (keysBuffer.length < count) keysBuffer = new Float64Array(Math.max(count, 2 * keysBuffer.length));
  return keysBuffer;
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
  withFiles((fdOf) => {
    for (let p = parts.length - 1; p >= 0 && left > 0; p--) {
      const part = parts[p]!;
      if (part.rows === 0) continue;
      const all = scratchKeys(part.rows);
      part.file.readInto(part.day, 'key', 0, part.rows, all, 0, fdOf(part.file));
      const seen: number[] = [];
      for (let i = 0; i < part.rows; i++) {
        const at = index.get(all[i]!);
        if (at === undefined || done[at] === 1) continue;
        if (seenIn[at] !== p) {
          seenIn[at] = p;
          seen.push(at);
        }
        lastRow[at] = i;
      }
      if (seen.length === 0) continue;
      // Found in this session, the newest that has them: older sessions are not asked for them again.
      for (const at of seen) done[at] = 1;
      left -= seen.length;
      const rows = seen.map((at) => lastRow[at]!).sort((a, b) => a - b);
      found.push({ part, rows, keys: rows.map((row) => all[row]!) });
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

/** A buffer for a range of one column's rows, reused. */
let rangeBuffer = new Float64Array(0);
function scratchRange(count: number): Float64Array {
  if (rangeBuffer.length < count) rangeBuffer = new Float64Array(Math.max(count, 2 * rangeBuffer.length));
  return rangeBuffer;
}
