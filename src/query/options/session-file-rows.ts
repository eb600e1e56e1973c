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
  // Per part: its runs of kept rows, and the kept rows' keys.
  const found: { part: SessionColumnsPart; keys: Float64Array; runs: [number, number][] }[] = [];
  let rows = 0;
  withFiles((fdOf) => {
    for (const part of parts) {
      if (part.rows === 0) continue;
      if (kept === undefined) {
        const keys = new Float64Array(part.rows);
        part.file.readInto(part.day, 'key', 0, part.rows, keys, 0, fdOf(part.file));
        rows += part.rows;
        found.push({ part, keys, runs: [[0, part.rows]] });
        continue;
      }
      // Every row's key read into memory used again (fresh memory is dear to touch), the kept ones copied.
      const all = scratchKeys(part.rows);
      part.file.readInto(part.day, 'key', 0, part.rows, all, 0, fdOf(part.file));
      const runs: [number, number][] = [];
      let count = 0;
      let lastKey = Number.NaN;
      let lastKept = false;
      for (let i = 0; i < part.rows; i++) {
        const key = all[i]!;
        // An intraday session holds a contract's rows one after another: one decision for them all.
        if (key !== lastKey) {
          lastKey = key;
          lastKept = kept(key);
        }
        if (!lastKept) continue;
        const run = runs.at(-1);
        if (run !== undefined && run[1] === i) run[1] = i + 1;
        else runs.push([i, i + 1]);
        count++;
      }
      const keys = new Float64Array(count);
      let at = 0;
      for (const [low, high] of runs) {
        keys.set(all.subarray(low, high), at);
        at += high - low;
      }
      rows += count;
      found.push({ part, keys, runs });
    }
  });
  return {
    rows,
    read: (targets, at) =>
      withFiles((fdOf) => {
        for (const [column, target] of targets) {
          let to = at;
          for (const { part, keys, runs } of found) {
            let keyAt = 0;
            for (const [low, high] of runs) {
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
