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

/**
 * What one walk of a file's footer tells. A reader walks each file's footer once (store files never
 * change): whether it is whole, and the statistics that let statements over the file read less.
 */
export type FooterFacts = {
  /** What is wrong with the footer, or undefined when it walks whole (to its last byte). */
  readonly problem: string | undefined;
  /**
   * The top-level columns whose every value is NULL (a column chunk without a NULL count counts as
   * holding values). A vendor that sends no Greeks leaves four of a quote's columns empty: a reader that
   * knows it need not carry them row by row.
   */
  readonly allNull: ReadonlySet<string>;
  /**
   * The least and greatest value of each integer column (Parquet INT32 or INT64: integers, and decimals
   * as their unscaled digits): [+∞, −∞] for a column of NULLs only; left out when a chunk of it holding
   * values states no minimum or maximum.
   */
  readonly integerBounds: ReadonlyMap<string, readonly [number, number]>;
};

/** The facts of a footer that does not walk: its problem, and no statistics to lean on. */
function unwalked(problem: string): FooterFacts {
  return { problem, allNull: new Set(), integerBounds: new Map() };
}

/** What the footer of `file` tells, in one walk of its bytes (see {@link FooterFacts}). */
export function footerFacts(file: string): FooterFacts {
  const read = footerBytes(file);
  if (typeof read === 'string') return unwalked(read);
  const valued = new Set<string>();
  const seen = new Set<string>();
  const bounds = new Map<string, [number, number]>();
  const unbounded = new Set<string>();
  try {
    const end = eachColumnChunk(read, (chunk) => {
      seen.add(chunk.name);
      if (chunk.values < 0 || chunk.nulls < chunk.values) valued.add(chunk.name);
      if (unbounded.has(chunk.name)) return;
      // A chunk of NULLs only states no bounds, and holds no value to bound (an empty range until one does).
      if (chunk.values >= 0 && chunk.nulls === chunk.values) {
        if (!bounds.has(chunk.name))
          bounds.set(chunk.name, [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
        return;
      }
      if (chunk.min === undefined || chunk.max === undefined) {
        unbounded.add(chunk.name);
        bounds.delete(chunk.name);
        return;
      }
      const known = bounds.get(chunk.name);
      if (known === undefined) bounds.set(chunk.name, [chunk.min, chunk.max]);
      else {
        known[0] = Math.min(known[0], chunk.min);
        known[1] = Math.max(known[1], chunk.max);
      }
    });
    if (end !== read.length) return unwalked('footer does not decode');
  } catch {
    return unwalked('footer does not decode');
  }
  return {
    problem: undefined,
    allNull: new Set([...seen].filter((name) => !valued.has(name))),
    integerBounds: bounds,
  };
}

/** What a column chunk's metadata says (`readColumnMeta`). */
type ChunkMeta = {
  name: string;
  /** Values and NULLs counted (-1: not said). */
  values: number;
  nulls: number;
  /** The Parquet physical type (`PHYSICAL_INT32`, `PHYSICAL_INT64`, …; -1: not said). */
  physical: number;
  /** For an INT32 or INT64 chunk, its statistics' least and greatest value, when said. */
  min: number | undefined;
  max: number | undefined;
};

/**
 * Walks the whole footer `read`, handing every column chunk of every row group to `visit`; returns where
 * the walk ended (the footer's length when it is whole). Throws when the bytes do not decode.
 */
function eachColumnChunk(read: Buffer, visit: (chunk: ChunkMeta) => void): number {
  // FileMetaData.row_groups (4) → RowGroup.columns (1) → ColumnChunk.meta_data (3) → ColumnMetaData.
  return readStruct(read, 0, 0, (id, type, at) => {
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
                    const meta: ChunkMeta = {
                      name: '',
                      values: -1,
                      nulls: -1,
                      physical: -1,
                      min: undefined,
                      max: undefined,
                    };
                    const end = readColumnMeta(read, metaAt, meta);
                    visit(meta);
                    return end;
                  }),
            );
          }),
    );
  });
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
const I32 = 5;
const I64 = 6;
const BINARY = 8;
const LIST = 9;
const STRUCT = 12;

/** Parquet physical types whose statistics are little-endian signed integers. */
const PHYSICAL_INT32 = 1;
const PHYSICAL_INT64 = 2;

/**
 * A ColumnMetaData's physical type, first path element, value count, NULL count (-1 when absent) and, for
 * an integer column, its statistics' least and greatest value into `out`.
 */
function readColumnMeta(bytes: Buffer, at: number, out: ChunkMeta): number {
  // Statistics: max (1) and min (2) are the old fields, max_value (5) and min_value (6) the new ones;
  // for signed integers both orders agree, and the new ones are taken when present.
  const stats: (number | undefined)[] = [];
  const end = readStruct(bytes, at, 3, (id, type, position) => {
    if (id === 1 && type === I32) {
      const [value, after] = readVarint(bytes, position);
      out.physical = unzigzag(value);
      return after;
    }
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
        if (statField === 3 && statType === I64) {
          const [value, after] = readVarint(bytes, statAt);
          out.nulls = unzigzag(value);
          return after;
        }
        if (
          (statField === 1 || statField === 2 || statField === 5 || statField === 6) &&
          statType === BINARY
        ) {
          const [length, after] = readVarint(bytes, statAt);
          if (after + length > bytes.length) throw new Error('past the end');
          stats[statField] = signedLittleEndian(bytes, after, length);
          return after + length;
        }
        return undefined;
      });
    }
    return undefined;
  });
  if (out.physical === PHYSICAL_INT32 || out.physical === PHYSICAL_INT64) {
    out.max = stats[5] ?? stats[1];
    out.min = stats[6] ?? stats[2];
  }
  return end;
}

/** A 4- or 8-byte little-endian signed integer as a number (past 2^53 only roughly: such a bound fits nothing narrower anyway); else undefined. */
function signedLittleEndian(bytes: Buffer, at: number, length: number): number | undefined {
  if (length === 4) return bytes.readInt32LE(at);
  if (length === 8) return Number(bytes.readBigInt64LE(at));
  return undefined;
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
