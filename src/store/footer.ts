/**
 * A Parquet footer's shape, checked in JavaScript: the magic at both ends, the footer's length, and its
 * Thrift compact encoding walked to its end. Store files never change once written (their names are
 * their content's hash), so a footer that walks is one DuckDB reads; asking DuckDB itself costs a
 * statement (3-7 ms on the large stores, on every first read of a file), this a read of the footer's
 * bytes and a walk of them (some 0.5 ms for the 47 KB footer of a month of a dense chain, 612 column
 * chunks). A damage this walk does not see still fails the query that reads the file, and
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
  // Per column, in the order first seen: one lookup a chunk.
  const columns = new Map<string, ColumnSeen>();
  try {
    const end = eachColumnChunk(read, (chunk) => {
      let column = columns.get(chunk.name);
      if (column === undefined) {
        column = { valued: false, unbounded: false, bounds: undefined };
        columns.set(chunk.name, column);
      }
      if (chunk.values < 0 || chunk.nulls < chunk.values) column.valued = true;
      if (column.unbounded) return;
      // A chunk of NULLs only states no bounds, and holds no value to bound (an empty range until one does).
      if (chunk.values >= 0 && chunk.nulls === chunk.values) {
        column.bounds ??= [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
        return;
      }
      if (chunk.min === undefined || chunk.max === undefined) {
        column.unbounded = true;
        column.bounds = undefined;
        return;
      }
      if (column.bounds === undefined) column.bounds = [chunk.min, chunk.max];
      else {
        column.bounds[0] = Math.min(column.bounds[0], chunk.min);
        column.bounds[1] = Math.max(column.bounds[1], chunk.max);
      }
    });
    if (end !== read.length) return unwalked('footer does not decode');
  } catch {
    return unwalked('footer does not decode');
  }
  const allNull = new Set<string>();
  const integerBounds = new Map<string, readonly [number, number]>();
  for (const [name, column] of columns) {
    if (!column.valued) allNull.add(name);
    if (column.bounds !== undefined) integerBounds.set(name, column.bounds);
  }
  return { problem: undefined, allNull, integerBounds };
}

/** What the walk has seen of one column's chunks. */
type ColumnSeen = {
  /** Whether a chunk holds a value (or does not say how many NULLs it holds). */
  valued: boolean;
  /** Whether a chunk holding values states no bounds: the column has none. */
  unbounded: boolean;
  /** The least and greatest value of the chunks so far ([+∞, −∞] for NULLs only), unless unbounded. */
  bounds: [number, number] | undefined;
};

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
  // Each handler made once a walk, not once a struct.
  const walk = new Walk(read);
  const chunkField = (id: number, type: number) => {
    if (id !== 3 || type !== STRUCT) return false;
    visit(readColumnMeta(walk));
    return true;
  };
  const chunk = () => walk.fields(2, chunkField);
  const groupField = (id: number, type: number) => {
    if (id !== 1 || type !== LIST) return false;
    walk.list(2, STRUCT, chunk);
    return true;
  };
  const group = () => walk.fields(1, groupField);
  walk.fields(0, (id, type) => {
    if (id !== 4 || type !== LIST) return false;
    walk.list(1, STRUCT, group);
    return true;
  });
  return walk.at;
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
const STOP = 0;
const TRUE = 1;
const FALSE = 2;
const I32 = 5;
const I64 = 6;
const BINARY = 8;
const LIST = 9;
const STRUCT = 12;

/** Parquet physical types whose statistics are little-endian signed integers. */
const PHYSICAL_INT32 = 1;
const PHYSICAL_INT64 = 2;

/**
 * A ColumnMetaData struct: its physical type, first path element, value count, NULL count (-1 when absent)
 * and, for an integer column, its statistics' least and greatest value.
 */
function readColumnMeta(walk: Walk): ChunkMeta {
  const meta: ChunkMeta = { name: '', values: -1, nulls: -1, physical: -1, min: undefined, max: undefined };
  // Statistics: max (1) and min (2) are the old fields, max_value (5) and min_value (6) the new ones;
  // for signed integers both orders agree, and the new ones are taken when present.
  let oldMax: number | undefined;
  let oldMin: number | undefined;
  let newMax: number | undefined;
  let newMin: number | undefined;
  let id = 0;
  for (;;) {
    const header = walk.byte();
    const type = header & 0x0f;
    if (type === STOP) break;
    id = walk.fieldId(header, id);
    if (id === 1 && type === I32) meta.physical = unzigzag(walk.varint());
    else if (id === 3 && type === LIST) {
      // path_in_schema: the column's name is its first element.
      const count = walk.listHeader(4);
      for (let i = 0; i < count; i++) {
        if (walk.elementType !== BINARY) walk.skip(walk.elementType, 5);
        else {
          const length = walk.binaryLength();
          if (i === 0) meta.name = walk.text(length);
          walk.at += length;
        }
      }
    } else if (id === 5 && type === I64) meta.values = unzigzag(walk.varint());
    else if (id === 12 && type === STRUCT) {
      let statId = 0;
      for (;;) {
        const statHeader = walk.byte();
        const statType = statHeader & 0x0f;
        if (statType === STOP) break;
        statId = walk.fieldId(statHeader, statId);
        if (statId === 3 && statType === I64) meta.nulls = unzigzag(walk.varint());
        else if (statType === BINARY && (statId === 1 || statId === 2 || statId === 5 || statId === 6)) {
          const length = walk.binaryLength();
          const value = signedLittleEndian(walk.bytes, walk.at, length);
          walk.at += length;
          if (statId === 1) oldMax = value;
          else if (statId === 2) oldMin = value;
          else if (statId === 5) newMax = value;
          else newMin = value;
        } else walk.skip(statType, 4);
      }
    } else walk.skip(type, 3);
  }
  if (meta.physical === PHYSICAL_INT32 || meta.physical === PHYSICAL_INT64) {
    meta.max = newMax ?? oldMax;
    meta.min = newMin ?? oldMin;
  }
  return meta;
}

/** A 4- or 8-byte little-endian signed integer as a number (past 2^53 only roughly: such a bound fits nothing narrower anyway); else undefined. */
function signedLittleEndian(bytes: Buffer, at: number, length: number): number | undefined {
  if (length === 4) return bytes.readInt32LE(at);
  // Its high word signed, its low one not (through a BigInt, it cost a tenth of the walk).
  if (length === 8) return bytes.readInt32LE(at + 4) * 2 ** 32 + bytes.readUInt32LE(at);
  return undefined;
}

/** A zigzag-encoded integer's value. */
function unzigzag(value: number): number {
  return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
}

/** Nested structs, lists and maps deeper than this are not a Parquet footer. */
const MAX_DEPTH = 64;

/** A struct's field handler that reads none: every field is walked over. */
const NO_FIELD = () => false;

/** A list's element handler for no type (`wanted` -1): every element is walked over. */
const NO_ELEMENT = () => undefined;

/**
 * A walk over a footer's bytes in the Thrift compact encoding: where it is, and the reads it makes, each
 * moving it on and throwing past the end. No value is made per field or varint: the walk with a pair
 * returned per varint and a closure per struct spent most of its 0.8-1.1 ms (a 47 KB footer) making and
 * collecting them.
 */
class Walk {
  at = 0;
  constructor(readonly bytes: Buffer) {}

  byte(): number {
    if (this.at >= this.bytes.length) throw new Error('past the end');
    return this.bytes[this.at++]!;
  }

  /** An unsigned varint (at most 10 bytes): its value, exact below 2^53. */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const byte = this.byte();
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
    throw new Error('varint too long');
  }

  /** A field's id from its header byte: the last id plus the header's delta, or a zigzag varint after it. */
  fieldId(header: number, last: number): number {
    const delta = header >> 4;
    return delta === 0 ? unzigzag(this.varint()) : last + delta;
  }

  /** The texts `text` has decoded, by a hash of their bytes: a footer names each column once a row group. */
  private readonly texts = new Map<number, { bytes: Uint8Array; text: string }>();

  /** The UTF-8 text of the `length` bytes at the walk (checked by `binaryLength`), decoded once per walk. */
  text(length: number): string {
    const { bytes, at } = this;
    let hash = length;
    for (let i = at; i < at + length; i++) hash = (Math.imul(hash, 31) + bytes[i]!) | 0;
    const known = this.texts.get(hash);
    if (known !== undefined && sameBytes(known.bytes, bytes, at, length)) return known.text;
    const text = bytes.toString('utf8', at, at + length);
    this.texts.set(hash, { bytes: bytes.subarray(at, at + length), text });
    return text;
  }

  /** A binary value's length, its bytes checked to lie within the footer; the walk is left at them. */
  binaryLength(): number {
    const length = this.varint();
    if (this.at + length > this.bytes.length) throw new Error('past the end');
    return length;
  }

  /**
   * A struct at nesting `depth`, to its end: `field` reads a field's value and says so, or leaves it to be
   * walked over.
   */
  fields(depth: number, field: (id: number, type: number) => boolean): void {
    if (depth > MAX_DEPTH) throw new Error('too deep');
    let id = 0;
    for (;;) {
      const header = this.byte();
      const type = header & 0x0f;
      if (type === STOP) return;
      id = this.fieldId(header, id);
      if (!field(id, type)) this.skip(type, depth);
    }
  }

  /** The type of the elements of the list whose header was read last. */
  elementType = 0;

  /** A list's (or set's) header at nesting `depth`: its element count, its element type in `elementType`. */
  listHeader(depth: number): number {
    if (depth > MAX_DEPTH) throw new Error('too deep');
    const header = this.byte();
    this.elementType = header & 0x0f;
    const count = header >> 4;
    return count === 15 ? this.varint() : count;
  }

  /**
   * A list (or set) at nesting `depth`: `element` reads each element when they are of type `wanted`, each
   * is walked over otherwise.
   */
  list(depth: number, wanted: number, element: () => void): void {
    const count = this.listHeader(depth);
    const type = this.elementType;
    for (let i = 0; i < count; i++) {
      if (type === wanted) element();
      else this.skipElement(type, depth + 1);
    }
  }

  /**
   * Walks over one element of a list, set or map: as a value, but a boolean is a byte of its own (a field's
   * is in its header). A count past the bytes so fails, rather than stepping 2^50 times over nothing.
   */
  private skipElement(type: number, depth: number): void {
    if (type !== TRUE && type !== FALSE) this.skip(type, depth);
    else if (++this.at > this.bytes.length) throw new Error('past the end');
  }

  /** Walks over one value (a field's) of compact type `type` at nesting `depth`. */
  skip(type: number, depth: number): void {
    switch (type) {
      case TRUE:
      case FALSE:
        return;
      case 3: // byte
        this.byte();
        return;
      case 4: // i16
      case I32:
      case I64:
        this.varint();
        return;
      case 7: // double
        if (this.at + 8 > this.bytes.length) throw new Error('past the end');
        this.at += 8;
        return;
      case BINARY: {
        // Not `this.at += this.binaryLength()`: that adds the length to where the walk was before it.
        const length = this.binaryLength();
        this.at += length;
        return;
      }
      case LIST:
      case 10: // set
        this.list(depth, -1, NO_ELEMENT);
        return;
      case 11: {
        // map: a count, then the key and value types in one byte, then the pairs
        const count = this.varint();
        if (count === 0) return;
        const types = this.byte();
        for (let i = 0; i < count; i++) {
          this.skipElement(types >> 4, depth + 1);
          this.skipElement(types & 0x0f, depth + 1);
        }
        return;
      }
      case STRUCT:
        this.fields(depth + 1, NO_FIELD);
        return;
      default:
        throw new Error(`type ${type}`);
    }
  }
}

/** Whether `bytes[at…at + length)` are the bytes `known`. */
function sameBytes(known: Uint8Array, bytes: Uint8Array, at: number, length: number): boolean {
  if (known.length !== length) return false;
  for (let i = 0; i < length; i++) if (known[i] !== bytes[at + i]) return false;
  return true;
}
