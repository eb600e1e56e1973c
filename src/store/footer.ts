/**
 * A Parquet footer's shape, checked in JavaScript: the magic at both ends, the footer's length, and its
 * Thrift compact encoding walked to its end. Store files never change once written (their names are
 * their content's hash), so a footer that walks is one DuckDB reads; asking DuckDB itself costs a
 * statement (3-7 ms on the large stores, on every first read of a file), this a read of the footer's
 * bytes (some 0.1 ms). A damage this walk does not see still fails the query that reads the file, and
 * that failure has DuckDB check the footers (`StoreReader.checkFooters`).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const MAGIC = 0x31524150; // "PAR1", little-endian

/** What is wrong with the Parquet footer of `file`, or undefined when it walks whole. */
export function footerProblem(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    return `cannot open it: ${(error as Error).message}`;
  }
  try {
    const size = fstatSync(fd).size;
    if (size < 12) return `${size} bytes, too short for Parquet`;
    const tail = Buffer.alloc(8);
    readSync(fd, tail, 0, 8, size - 8);
    const head = Buffer.alloc(4);
    readSync(fd, head, 0, 4, 0);
    if (head.readUInt32LE(0) !== MAGIC || tail.readUInt32LE(4) !== MAGIC) return 'no Parquet magic';
    const length = tail.readUInt32LE(0);
    if (length === 0 || length > size - 12) return `footer length ${length} does not fit the file`;
    const footer = Buffer.alloc(length);
    readSync(fd, footer, 0, length, size - 8 - length);
    const end = skipStruct(footer, 0, 0);
    return end === length ? undefined : 'footer does not decode';
  } catch {
    return 'footer does not decode';
  } finally {
    closeSync(fd);
  }
}

/** Nested structs, lists and maps deeper than this are not a Parquet footer. */
const MAX_DEPTH = 64;

/** Walks a Thrift compact struct from `at`; returns where it ends (throws past the end). */
function skipStruct(bytes: Buffer, at: number, depth: number): number {
  if (depth > MAX_DEPTH) throw new Error('too deep');
  let position = at;
  for (;;) {
    const header = byteAt(bytes, position++);
    const type = header & 0x0f;
    if (type === 0) return position; // STOP
    if (header >> 4 === 0) position = skipVarint(bytes, position); // the field id, in full
    position = skipValue(bytes, position, type, depth);
  }
}

/** Walks one value of compact type `type` from `at`. */
function skipValue(bytes: Buffer, at: number, type: number, depth: number): number {
  switch (type) {
    case 1: // true
    case 2: // false
      return at;
    case 3: // byte
      byteAt(bytes, at);
      return at + 1;
    case 4: // i16
    case 5: // i32
    case 6: // i64
      return skipVarint(bytes, at);
    case 7: // double
      byteAt(bytes, at + 7);
      return at + 8;
    case 8: {
      // binary: a length, then the bytes
      const [length, after] = readVarint(bytes, at);
      if (after + length > bytes.length) throw new Error('past the end');
      return after + length;
    }
    case 9: // list
    case 10: {
      // set
      const header = byteAt(bytes, at);
      let position = at + 1;
      let count = header >> 4;
      if (count === 15) [count, position] = readVarint(bytes, position);
      const element = header & 0x0f;
      for (let i = 0; i < count; i++) {
        // A boolean element is one byte.
        position =
          element === 1 || element === 2 ? position + 1 : skipValue(bytes, position, element, depth + 1);
      }
      return position;
    }
    case 11: {
      // map
      const [count, after] = readVarint(bytes, at);
      if (count === 0) return after;
      const types = byteAt(bytes, after);
      let position = after + 1;
      for (let i = 0; i < count; i++) {
        position = skipValue(bytes, position, types >> 4, depth + 1);
        position = skipValue(bytes, position, types & 0x0f, depth + 1);
      }
      return position;
    }
    case 12:
      return skipStruct(bytes, at, depth + 1);
    default:
      throw new Error(`type ${type}`);
  }
}

function byteAt(bytes: Buffer, at: number): number {
  if (at >= bytes.length) throw new Error('past the end');
  return bytes[at]!;
}

function skipVarint(bytes: Buffer, at: number): number {
  return readVarint(bytes, at)[1];
}

/** An unsigned varint (at most 10 bytes) from `at`: its value (exact below 2^53) and where it ends. */
function readVarint(bytes: Buffer, at: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    const byte = byteAt(bytes, at + i);
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return [value, at + i + 1];
    scale *= 128;
  }
  throw new Error('varint too long');
}
