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
  const read = footerBytes(file);
  if (typeof read === 'string') return read;
  try {
    return readStruct(read, 0, 0, skip) === read.length ? undefined : 'footer does not decode';
  } catch {
    return 'footer does not decode';
  }
}

/**
 * The top-level columns of `file` whose every value is NULL, by its footer's statistics (a column chunk
 * without a NULL count counts as holding values). A vendor that sends no Greeks leaves four of a quote's
 * columns empty: a reader that knows it need not carry them row by row. Empty when the footer cannot be
 * read (the query that reads the file then says what is wrong).
 */
export function allNullColumns(file: string): ReadonlySet<string> {
  const read = footerBytes(file);
  if (typeof read === 'string') return new Set();
  const valued = new Set<string>();
  const seen = new Set<string>();
  try {
    // FileMetaData.row_groups (4) → RowGroup.columns (1) → ColumnChunk.meta_data (3) → ColumnMetaData:
    // path_in_schema (3), num_values (5), statistics (12) → Statistics.null_count (3).
    readStruct(read, 0, 0, (id, type, at) => {
      if (id !== 4 || type !== LIST) return undefined;
      return readList(read, at, 1, (element, position) =>
        element !== STRUCT
          ? undefined
          : readStruct(read, position, 1, (groupField, groupType, groupAt) => {
              if (groupField !== 1 || groupType !== LIST) return undefined;
              return readList(read, groupAt, 2, (chunkType, chunkAt) =>
                chunkType !== STRUCT
                  ? undefined
                  : readStruct(read, chunkAt, 2, (chunkField, metaType, metaAt) => {
                      if (chunkField !== 3 || metaType !== STRUCT) return undefined;
                      const meta = { name: '', values: -1, nulls: -1 };
                      const end = readColumnMeta(read, metaAt, meta);
                      seen.add(meta.name);
                      if (meta.values < 0 || meta.nulls < meta.values) valued.add(meta.name);
                      return end;
                    }),
              );
            }),
      );
    });
  } catch {
    return new Set();
  }
  return new Set([...seen].filter((name) => !valued.has(name)));
}

/** The footer's bytes of `file`, or what is wrong with it. */
function footerBytes(file: string): Buffer | string {
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
    return footer;
  } catch {
    return 'footer does not decode';
  } finally {
    closeSync(fd);
  }
}

/** Thrift compact types the footer walks read by name. */
const I64 = 6;
const BINARY = 8;
const LIST = 9;
const STRUCT = 12;

/** A ColumnMetaData's first path element, value count and NULL count (-1 when absent) into `out`. */
function readColumnMeta(
  bytes: Buffer,
  at: number,
  out: { name: string; values: number; nulls: number },
): number {
  return readStruct(bytes, at, 3, (id, type, position) => {
    if (id === 3 && type === LIST) {
      let first = true;
      return readList(bytes, position, 4, (element, elementAt) => {
        if (element !== BINARY) return undefined;
        const [length, after] = readVarint(bytes, elementAt);
        if (first) out.name = bytes.toString('utf8', after, after + length);
        first = false;
        return after + length;
      });
    }
    if (id === 5 && type === I64) {
      const [value, after] = readVarint(bytes, position);
      out.values = unzigzag(value);
      return after;
    }
    if (id === 12 && type === STRUCT) {
      return readStruct(bytes, position, 4, (statField, statType, statAt) => {
        if (statField !== 3 || statType !== I64) return undefined;
        const [value, after] = readVarint(bytes, statAt);
        out.nulls = unzigzag(value);
        return after;
      });
    }
    return undefined;
  });
}

/** A zigzag-encoded integer's value. */
function unzigzag(value: number): number {
  return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
}

/**
 * Walks a Thrift compact struct from `at`, handing each field's id, type and position to `field`, which
 * returns where the field ends when it read it, or undefined to have it skipped. Returns where it ends.
 */
function readStruct(
  bytes: Buffer,
  at: number,
  depth: number,
  field: (id: number, type: number, at: number) => number | undefined,
): number {
  if (depth > MAX_DEPTH) throw new Error('too deep');
  let position = at;
  let id = 0;
  for (;;) {
    const header = byteAt(bytes, position++);
    const type = header & 0x0f;
    if (type === 0) return position; // STOP
    if (header >> 4 === 0) {
      const [zigzag, after] = readVarint(bytes, position);
      id = unzigzag(zigzag);
      position = after;
    } else id += header >> 4;
    position = field(id, type, position) ?? skipValue(bytes, position, type, depth);
  }
}

/** Walks a Thrift compact list (or set) from `at`, handing each element's type and position to `element` (as `readStruct`). */
function readList(
  bytes: Buffer,
  at: number,
  depth: number,
  element: (type: number, at: number) => number | undefined,
): number {
  if (depth > MAX_DEPTH) throw new Error('too deep');
  const header = byteAt(bytes, at);
  let position = at + 1;
  let count = header >> 4;
  if (count === 15) [count, position] = readVarint(bytes, position);
  const type = header & 0x0f;
  for (let i = 0; i < count; i++) {
    // A boolean element is one byte.
    position =
      type === 1 || type === 2
        ? position + 1
        : (element(type, position) ?? skipValue(bytes, position, type, depth + 1));
  }
  return position;
}

/** Nested structs, lists and maps deeper than this are not a Parquet footer. */
const MAX_DEPTH = 64;

/** A field or element handler of `readStruct`/`readList` that reads nothing: every value is walked over. */
const skip = () => undefined;

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
    case 10: // set
      return readList(bytes, at, depth, skip);
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
      return readStruct(bytes, at, depth + 1, skip);
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
