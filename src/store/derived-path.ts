/**
 * Where a store's derived file (a session or contract column file) lies: beside the Parquet file it was
 * made from, named after it with the kind's suffix in place of `.parquet`; and what format its trailer
 * names (both kinds end in a JSON trailer, its byte length as a 32-bit integer, and their magic).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** The derived file with `suffix` of the Parquet file at `parquetPath` (relative or absolute). */
export function derivedPath(parquetPath: string, suffix: string): string {
  return `${parquetPath.replace(/\.parquet$/, '')}${suffix}`;
}

/** The Parquet file the derived file at `filePath` was made from, or undefined when it lacks `suffix`. */
export function derivedOwner(filePath: string, suffix: string): string | undefined {
  return filePath.endsWith(suffix) ? `${filePath.slice(0, -suffix.length)}.parquet` : undefined;
}

/**
 * Whether the derived file at `filePath` is of an earlier format of its kind: its trailer names a format
 * starting with `kind` (`pitchain-session-columns/`) other than `current`. Readers pass such a file over as
 * if it were not there, and a repair writes it again; it is not damaged.
 */
export function earlierFormat(filePath: string, magic: Buffer, kind: string, current: string): boolean {
  let fd: number;
  try {
    fd = openSync(filePath, 'r');
  } catch {
    return false;
  }
  try {
    const size = fstatSync(fd).size;
    const tail = Buffer.alloc(4 + magic.length);
    if (size < tail.length || readSync(fd, tail, 0, tail.length, size - tail.length) !== tail.length)
      return false;
    if (!tail.subarray(4).equals(magic)) return false;
    const length = tail.readUInt32LE(0);
    if (length > size - tail.length) return false;
    const text = Buffer.alloc(length);
    if (readSync(fd, text, 0, length, size - tail.length - length) !== length) return false;
    const format: unknown = JSON.parse(text.toString('utf8'))?.format;
    return typeof format === 'string' && format.startsWith(kind) && format !== current;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
