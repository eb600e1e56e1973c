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
 * The trailer of the derived file at `filePath`: its JSON text and where it starts, read through one
 * descriptor; undefined when the file cannot be opened or does not end in `magic` after a trailer that
 * fits (a trailer is preceded by at least the file's opening magic).
 */
export function readTrailer(filePath: string, magic: Buffer): { text: string; start: number } | undefined {
  let fd: number;
  try {
    fd = openSync(filePath, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const tail = Buffer.alloc(4 + magic.length);
    if (
      size < magic.length + tail.length ||
      readSync(fd, tail, 0, tail.length, size - tail.length) !== tail.length
    )
      return undefined;
    if (!tail.subarray(4).equals(magic)) return undefined;
    const length = tail.readUInt32LE(0);
    const start = size - tail.length - length;
    if (start < magic.length) return undefined;
    const text = Buffer.alloc(length);
    if (readSync(fd, text, 0, length, start) !== length) return undefined;
    return { text: text.toString('utf8'), start };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether the derived file at `filePath` is of an earlier format of its kind: its trailer names a format
 * starting with `kind` (`pitchain-session-columns/`) other than `current`. Readers pass such a file over as
 * if it were not there, and a repair writes it again; it is not damaged.
 */
export function earlierFormat(filePath: string, magic: Buffer, kind: string, current: string): boolean {
  const trailer = readTrailer(filePath, magic);
  if (trailer === undefined) return false;
  try {
    const format: unknown = JSON.parse(trailer.text)?.format;
    return typeof format === 'string' && format.startsWith(kind) && format !== current;
  } catch {
    return false;
  }
}
