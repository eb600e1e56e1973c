/**
 * The one gateway to DuckDB. Other modules speak SQL through `SqlSession` and never import the driver, so
 * values always travel as bound parameters and results come back as plain JS (dates as `YYYY-MM-DD`,
 * instants as epoch seconds, decimals and safe bigints as numbers).
 */

import os from 'node:os';
import {
  type DuckDBConnection,
  DuckDBDataChunk,
  DuckDBDecimalType,
  DuckDBDecimalValue,
  DuckDBInstance,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBValue,
  type DuckDBVector,
  dateValue,
  timestampTZValue,
} from '@duckdb/node-api';
import { StoreError, storeClosedError } from '../errors.js';
import type { ContractColumns } from './contract-columns.js';
import type { TableName } from './schema.js';
import type { SessionColumnsPart, SessionColumnsTable } from './session-columns.js';
import { inlineParams, quoteIdentifier, type SqlParams } from './sql-text.js';

export { quoteIdentifier, quoteLiteral, type SqlParams, type SqlValue } from './sql-text.js';

/** Whether 32-bit words of a 64-bit validity mask read in bit order (every platform Node runs on, in practice). */
const LITTLE_ENDIAN = os.endianness() === 'LE';

/** A validity mask read as 32-bit words in bit order (`LITTLE_ENDIAN` only); null when every item is valid. */
function maskWords(mask: BigUint64Array | null): Uint32Array | null {
  return mask === null ? null : new Uint32Array(mask.buffer, mask.byteOffset, mask.length * 2);
}

/** Whether bit `bit` of a validity mask's words (`maskWords`) marks its item NULL. */
function nullBit(words: Uint32Array, bit: number): boolean {
  return (words[bit >>> 5]! & (1 << (bit & 31))) === 0;
}

/**
 * Writes NaN into `target[offset + i]` for each of `count` items whose bit `first + i` of a validity mask's
 * words marks it NULL. A word at a time: most words mark 32 valid items, and a block read checks millions.
 */
function markNulls(
  words: Uint32Array,
  first: number,
  count: number,
  target: Float64Array,
  offset: number,
): void {
  let i = 0;
  while (i < count) {
    const bit = first + i;
    const word = words[bit >>> 5]!;
    const shift = bit & 31;
    const span = Math.min(32 - shift, count - i);
    if (word !== ALL_VALID) {
      for (let k = 0; k < span; k++)
        if ((word & (1 << (shift + k))) === 0) target[offset + i + k] = Number.NaN;
    }
    i += span;
  }
}

/** A validity word whose 32 items are all valid. */
const ALL_VALID = 0xffffffff;

/** What `readTexts` uses of the driver's VARCHAR vector: its `string_t` entries and item reader. */
type TextVector = {
  dataView: DataView;
  validity: { data: BigUint64Array | null; offset: number };
  getItem(i: number): string | null;
};

/** DuckDB's `string_t`: 16 bytes, a uint32 length, then the text itself when it fits in 12 bytes. */
const STRING_T_BYTES = 16;
const INLINE_TEXT_BYTES = 12;

/**
 * Copies a VARCHAR vector's `count` texts into `target` from `offset`, NULL as null. The driver's reader
 * makes a native call and a buffer per text longer than 12 bytes and decodes each text on its own (about
 * 3 µs a text: a 17k-contract table's symbols took 45 ms). Texts that DuckDB keeps inline and are ASCII
 * (dates, roots, symbols read in 12-byte pieces) are cut here from one Latin-1 reading of the vector.
 */
function readTexts(vector: TextVector, count: number, target: (string | null)[], offset: number): void {
  const view = vector.dataView;
  if (!LITTLE_ENDIAN) {
    for (let i = 0; i < count; i++) target[offset + i] = vector.getItem(i);
    return;
  }
  const words = maskWords(vector.validity.data);
  const first = vector.validity.offset;
  const bytes = new Uint8Array(view.buffer, view.byteOffset, count * STRING_T_BYTES);
  const latin1 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  for (let i = 0; i < count; i++) {
    const bit = first + i;
    if (words !== null && nullBit(words, bit)) {
      target[offset + i] = null;
      continue;
    }
    const at = i * STRING_T_BYTES;
    const length = view.getUint32(at, true);
    let ascii = length <= INLINE_TEXT_BYTES;
    for (let b = at + 4; ascii && b < at + 4 + length; b++) ascii = bytes[b]! < 0x80;
    target[offset + i] = ascii ? latin1.slice(at + 4, at + 4 + length) : vector.getItem(i);
  }
}

/** How often `close` interrupts again while statements asked before it are still running. */
const CLOSE_INTERRUPT_MS = 10;

export type SqlRow = Record<string, unknown>;

/** Options for a new in-process DuckDB database. */
export type SqlOptions = {
  path?: string;
  threads?: number;
  memoryLimit?: string;
  /** Where DuckDB spills what does not fit in its memory limit (its default: `.tmp` in the working directory). */
  tempDirectory?: string;
};

/** Sessions a query reads, first to last (Eastern dates); either end may be open. */
export type SessionRange = { readonly first?: string; readonly last?: string };

/** Makes the table expression of one partition of a table (see `SqlSession.from`). */
export type TableSource = (
  table: TableName,
  partition: Readonly<Record<string, string>>,
  sessions?: SessionRange,
) => Promise<string>;

/**
 * Finds, in one partition of a table, the columns without a value (`SqlSession.emptyColumns`) or the
 * integer columns whose values have at most nine digits (`SqlSession.narrowColumns`).
 */
export type PartitionColumnsSource = (
  table: TableName,
  partition: Readonly<Record<string, string>>,
  sessions?: SessionRange,
) => ReadonlySet<string>;

/** The rows of one partition of a table and the sessions they span, as the store's manifest records them. */
export type PartitionExtent = { readonly rows: number; readonly first: string; readonly last: string };

/** Finds a partition's extent (see `SqlSession.extent`). */
export type ExtentSource = (
  table: TableName,
  partition: Readonly<Record<string, string>>,
) => PartitionExtent | undefined;

/** A DuckDB connection with plain-JS results and bound parameters only. */
export class SqlSession {
  /** Set by a store reader: how `from` names one partition's files instead of the whole table's. */
  tableSource: TableSource | undefined;
  /** Set by a store reader: the columns with no value in the files `from` would name (see `emptyColumns`). */
  emptySource: PartitionColumnsSource | undefined;
  /** Set by a store reader: the integer columns whose values have at most nine digits (see `narrowColumns`). */
  narrowSource: PartitionColumnsSource | undefined;
  /** Set by a store reader: a partition's rows and sessions (see `extent`). */
  extentSource: ExtentSource | undefined;
  /** Set by a store reader: where a session's rows lie in a session column file (see `sessionColumns`). */
  sessionColumnsSource:
    | ((
        table: SessionColumnsTable,
        partition: Readonly<Record<string, string>>,
        sessions: { readonly first: string; readonly last: string },
      ) => readonly SessionColumnsPart[] | undefined)
    | undefined;
  /** Set by a store reader: an underlying's contracts from its contract column file (see `contractColumns`). */
  contractColumnsSource: ((underlying: string) => ContractColumns | undefined) | undefined;
  /**
   * Set by a store reader: called once when a statement fails, before the error is thrown; when it
   * returns true (it found and set aside a damaged file), the statement runs again, once.
   */
  recover: ((error: unknown, sql: string) => Promise<boolean>) | undefined;
  /**
   * Set by a store reader: called with each statement's text before it runs, to make the views it reads
   * (a reader makes its views on first use, so that opening a store does not grow with its files).
   */
  prepare: ((sql: string) => Promise<void>) | undefined;
  private recovering = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    private readonly ownsInstance = true,
  ) {}

  /** Opens a new DuckDB database (in memory unless `path` is given) and connects to it. */
  static async open(options: SqlOptions = {}): Promise<SqlSession> {
    const config: Record<string, string> = {};
    if (options.threads !== undefined) config['threads'] = String(options.threads);
    if (options.memoryLimit !== undefined) config['memory_limit'] = options.memoryLimit;
    if (options.tempDirectory !== undefined) config['temp_directory'] = options.tempDirectory;
    const instance = await DuckDBInstance.create(options.path ?? ':memory:', config);
    return new SqlSession(instance, await instance.connect());
  }

  /**
   * Another connection to this session's database, for statements that should run while this session
   * runs its own (a connection runs one at a time). Temporary tables are per connection, so the two share
   * tables of the database or of one attached to it. Closing it leaves the database open.
   */
  async connect(): Promise<SqlSession> {
    return new SqlSession(this.instance, await this.instance.connect(), false);
  }

  /**
   * A table expression for the rows of `table` in one partition (some or all of its partition keys) and,
   * optionally, a range of sessions: over a store reader, only the files that may hold them; elsewhere
   * (a writer's staged tables) the table itself. Callers still filter on the same columns.
   */
  from(
    table: TableName,
    partition: Readonly<Record<string, string>>,
    sessions?: SessionRange,
  ): Promise<string> {
    return this.tableSource?.(table, partition, sessions) ?? Promise.resolve(quoteIdentifier(table));
  }

  /**
   * The columns that hold only NULLs in every file of one partition of a table (and, optionally, a range
   * of sessions), as the files' footers say: a reader may leave them out of what it reads. Empty outside
   * a store reader.
   */
  emptyColumns(
    table: TableName,
    partition: Readonly<Record<string, string>>,
    sessions?: SessionRange,
  ): ReadonlySet<string> {
    return this.emptySource?.(table, partition, sessions) ?? new Set();
  }

  /**
   * The integer columns (integers, and decimals by their unscaled digits) whose every value in the files of
   * one partition of a table (and, optionally, a range of sessions) has at most nine digits, as the files'
   * footers say: a reader may hand them over in 32 bits (an INTEGER, a DECIMAL(9, s)), at half a DOUBLE's
   * bytes. Empty outside a store reader.
   */
  narrowColumns(
    table: TableName,
    partition: Readonly<Record<string, string>>,
    sessions?: SessionRange,
  ): ReadonlySet<string> {
    return this.narrowSource?.(table, partition, sessions) ?? new Set();
  }

  /**
   * How many rows one partition of a table holds and the sessions they span, from the store's manifest
   * (no statement); undefined outside a store reader, for an empty partition, or when a file does not
   * record its sessions.
   */
  extent(table: TableName, partition: Readonly<Record<string, string>>): PartitionExtent | undefined {
    return this.extentSource?.(table, partition);
  }

  /**
   * Where the rows of the sessions `first`…`last` (ISO dates) of one partition of `table` lie in session
   * column files (`session-columns.ts`), to be read with no statement: a part per session with rows, in
   * session order (none when the store holds none); undefined when they are to be read through DuckDB
   * (outside a store reader, a file without a session column file, a file missing or damaged, a session
   * in more than one file).
   */
  sessionColumns(
    table: SessionColumnsTable,
    partition: Readonly<Record<string, string>>,
    sessions: { readonly first: string; readonly last: string },
  ): readonly SessionColumnsPart[] | undefined {
    return this.sessionColumnsSource?.(table, partition, sessions);
  }

  /**
   * An underlying's contracts from the contract column file (`contract-columns.ts`) of its one contracts
   * file, to be made into its contract table with no statement; undefined when they are to be read through
   * DuckDB (outside a store reader, no such file or not whole, a partition of several files, a Parquet
   * file missing or damaged).
   */
  contractColumns(underlying: string): ContractColumns | undefined {
    return this.contractColumnsSource?.(underlying);
  }

  /** Runs a statement for its effect. */
  run(sql: string, params?: SqlParams): Promise<void> {
    return this.counted(sql, () => this.runStatement(sql, params));
  }

  private async runStatement(sql: string, params?: SqlParams): Promise<void> {
    try {
      await this.retrying(sql, () => this.connection.run(...statementOf(sql, params)));
    } catch (cause) {
      throw new StoreError(`SQL failed: ${messageOf(cause)}`, { sql, cause });
    }
  }

  /**
   * The number of rows of each table, in the order given: one query, its counts as rows of a union
   * (scalar subqueries cost DuckDB about twice as much to plan).
   */
  async rowCounts(tables: readonly string[]): Promise<number[]> {
    if (tables.length === 0) return [];
    const rows = await this.all<{ i: number; n: number }>(
      tables
        .map((table, i) => `SELECT ${i} AS i, count(*) AS n FROM ${quoteIdentifier(table)}`)
        .join(' UNION ALL '),
    );
    const counts = new Array<number>(tables.length).fill(0);
    for (const { i, n } of rows) counts[Number(i)] = Number(n);
    return counts;
  }

  /** Runs a query and returns its rows as plain JS objects. */
  async all<T extends SqlRow = SqlRow>(sql: string, params?: SqlParams): Promise<T[]> {
    const { names, columns } = await this.columns(sql, params);
    const length = columns[0]?.length ?? 0;
    const rows: T[] = new Array(length);
    for (let i = 0; i < length; i++) {
      const row: SqlRow = {};
      for (let c = 0; c < names.length; c++) row[names[c]!] = columns[c]![i];
      rows[i] = row as T;
    }
    return rows;
  }

  /** Runs a query and returns its first column of its first row (undefined when there is no row). */
  async value<T = unknown>(sql: string, params?: SqlParams): Promise<T> {
    const { columns } = await this.columns(sql, params);
    return columns[0]?.[0] as T;
  }

  /** Runs a query and returns it column by column (the API's own columnar shape). */
  columns(sql: string, params?: SqlParams): Promise<{ names: string[]; columns: unknown[][] }> {
    return this.counted(sql, () => this.readColumns(sql, params));
  }

  private async readColumns(
    sql: string,
    params?: SqlParams,
  ): Promise<{ names: string[]; columns: unknown[][] }> {
    let reader: Awaited<ReturnType<DuckDBConnection['runAndReadAll']>>;
    try {
      reader = await this.retrying(sql, () => this.connection.runAndReadAll(...statementOf(sql, params)));
    } catch (cause) {
      throw new StoreError(`SQL failed: ${messageOf(cause)}`, { sql, cause });
    }
    const names = reader.columnNames();
    const types = reader.columnTypes();
    const raw = reader.getColumnsJS() as unknown[][];
    return { names, columns: raw.map((column, i) => convertColumn(column, types[i]!)) };
  }

  /**
   * Runs a query whose columns are all DOUBLE and returns them as Float64Arrays, NULL as NaN: tens of
   * times faster than converting value by value, for reads of many rows (a session loop's read-ahead).
   */
  async doubleColumns(
    sql: string,
    params?: SqlParams,
  ): Promise<{ names: string[]; columns: Float64Array[] }> {
    const { names, columns } = await this.typedColumns(sql, params);
    const bad = columns.findIndex((column) => !(column instanceof Float64Array));
    if (bad >= 0) throw new StoreError(`doubleColumns: column ${names[bad]} is not DOUBLE`, { sql });
    return { names, columns: columns as Float64Array[] };
  }

  /**
   * Runs a query whose columns are DOUBLE, INTEGER, DECIMAL of at most 9 digits or VARCHAR: the numbers
   * come back as Float64Arrays (NULL as NaN), VARCHAR ones as arrays of strings (NULL as null), read
   * straight from DuckDB's vectors. Handing a value over costs by its bytes (on this driver some 4 ns a
   * byte, copied chunk by chunk), so a column whose values fit in 32 bits is read as INTEGER, or as a
   * DECIMAL(9, s), at half a DOUBLE's: a decimal's digits are divided by 10^s here, which gives the double
   * DuckDB's own cast to DOUBLE gives (it divides the digits so too).
   */
  typedColumns(
    sql: string,
    params?: SqlParams,
  ): Promise<{ names: string[]; columns: (Float64Array | (string | null)[])[] }> {
    return this.counted(sql, () => this.readTypedColumns(sql, params));
  }

  private async readTypedColumns(
    sql: string,
    params?: SqlParams,
  ): Promise<{ names: string[]; columns: (Float64Array | (string | null)[])[] }> {
    // Materialized, not streamed: a streamed result is cut short, silently, by the next statement the
    // connection runs, and concurrent requests share the connection.
    let result: Awaited<ReturnType<DuckDBConnection['run']>>;
    try {
      result = await this.retrying(sql, () => this.connection.run(...statementOf(sql, params)));
    } catch (cause) {
      throw new StoreError(`SQL failed: ${messageOf(cause)}`, { sql, cause });
    }
    const names = result.columnNames();
    const types = result.columnTypes();
    // Per column: what its 32-bit values are divided by (a DECIMAL(≤ 9, s)'s digits), 1 for an INTEGER.
    const divisors = types.map((type) =>
      type.typeId === DuckDBTypeId.INTEGER
        ? 1
        : type instanceof DuckDBDecimalType && type.width <= 9
          ? 10 ** type.scale
          : undefined,
    );
    const bad = types.findIndex(
      (type, c) =>
        type.typeId !== DuckDBTypeId.DOUBLE &&
        type.typeId !== DuckDBTypeId.VARCHAR &&
        divisors[c] === undefined,
    );
    if (bad >= 0)
      throw new StoreError(
        `typedColumns: column ${names[bad]} is not DOUBLE, INTEGER or VARCHAR (or a DECIMAL of at most 9 digits)`,
        { sql },
      );
    const rows = Number(result.rowCount);
    const columns = types.map((type) =>
      type.typeId === DuckDBTypeId.VARCHAR ? new Array<string | null>(rows) : new Float64Array(rows),
    );
    // A chunk at a time, each let go once copied: every chunk the driver hands over is a copy of the
    // result's (and its vectors copy again), freed only when collected. Holding them all to the end held
    // the rows three times over: five reads of 400,000 rows of 16 doubles peaked at 697-718 MB that way,
    // 529-540 MB a chunk at a time. Got by index on the main thread, not fetched (`fetchChunk`, the copy
    // made on a worker thread): fetching took the main thread's part of handing over the spy-short-put
    // block (374,616 rows) from 129-137 ms to 13-35 ms, but its copies land in the thread pool's memory
    // arenas, and the chain bench's current chains then peaked at 323-340 MB instead of 291-297.
    let offset = 0;
    const chunkCount = result.chunkCount;
    for (let chunkIndex = 0; chunkIndex < chunkCount; chunkIndex++) {
      const chunk = result.getChunk(chunkIndex);
      const count = chunk.rowCount;
      if (count === 0) continue;
      if (offset + count > rows)
        throw new StoreError('typedColumns: more rows than the result counts', { sql });
      for (let c = 0; c < names.length; c++) {
        const column = columns[c]!;
        if (!(column instanceof Float64Array)) {
          readTexts(chunk.getColumnVector(c) as unknown as TextVector, count, column, offset);
          continue;
        }
        const vector = chunk.getColumnVector(c) as unknown as {
          items?: Float64Array | Int32Array;
          dataView?: DataView;
          validity: { data: BigUint64Array | null; offset: number };
        };
        const target = column;
        const divisor = divisors[c];
        if (divisor === undefined || divisor === 1) {
          // DOUBLE or INTEGER: an Int32Array's values are converted as they are copied.
          target.set(vector.items!.subarray(0, count), offset);
        } else {
          const view = vector.dataView!;
          for (let i = 0; i < count; i++) target[offset + i] = view.getInt32(i * 4, true) / divisor;
        }
        // The validity mask read as 32-bit words (the driver's per-item check goes through BigInt);
        // no mask at all means every value is valid.
        const mask = vector.validity.data;
        if (mask !== null && !LITTLE_ENDIAN) {
          for (let i = 0; i < count; i++) {
            if (!(vector.validity as unknown as { itemValid(i: number): boolean }).itemValid(i)) {
              target[offset + i] = Number.NaN;
            }
          }
        } else if (mask !== null) {
          markNulls(maskWords(mask)!, vector.validity.offset, count, target, offset);
        }
      }
      offset += count;
    }
    if (offset !== rows) throw new StoreError('typedColumns: fewer rows than the result counts', { sql });
    return { names, columns };
  }

  /**
   * Appends rows given column by column to an existing table, in the table's column order, a data chunk at
   * a time. Values are converted by the table's column types (dates as `YYYY-MM-DD` or day numbers, instants
   * as epoch seconds, decimals from numbers); a typed array that matches a numeric column's type is copied
   * into it as it is.
   */
  append(table: string, columns: readonly (ArrayLike<unknown> | undefined)[]): Promise<void> {
    return this.counted(`append to ${table}`, () => this.appendRows(table, columns));
  }

  private async appendRows(
    table: string,
    columns: readonly (ArrayLike<unknown> | undefined)[],
  ): Promise<void> {
    const appender = await this.connection.createAppender(table);
    try {
      const types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
      const converters = types.map((type) => chunkValue(type));
      const length = columns.find((c) => c !== undefined)?.length ?? 0;
      let chunk: DuckDBDataChunk | undefined;
      for (let offset = 0; offset < length; offset += CHUNK_ROWS) {
        const rows = Math.min(CHUNK_ROWS, length - offset);
        if (chunk === undefined || rows !== CHUNK_ROWS) chunk = DuckDBDataChunk.create(types, rows);
        for (let c = 0; c < types.length; c++) {
          const vector = chunk.getColumnVector(c);
          const column = columns[c];
          if (!copyTyped(vector, column, offset, rows)) {
            const convert = converters[c]!;
            for (let i = 0; i < rows; i++) {
              const value = column?.[offset + i];
              vector.setItem(i, value === null || value === undefined ? null : convert(value));
            }
          }
          vector.flush();
        }
        appender.appendDataChunk(chunk);
      }
      appender.flushSync();
    } catch (cause) {
      throw new StoreError(`append to ${table} failed: ${messageOf(cause)}`, { cause });
    } finally {
      appender.closeSync();
    }
  }

  /** Runs `statement` (the text `sql`); when it fails and `recover` set something right, once more. */
  private async retrying<T>(sql: string, statement: () => Promise<T>): Promise<T> {
    if (this.prepare !== undefined) await this.prepare(sql);
    try {
      return await statement();
    } catch (error) {
      if (this.recover === undefined || this.recovering) throw error;
      this.recovering = true;
      let again: boolean;
      try {
        again = await this.recover(error, sql);
      } catch {
        again = false;
      } finally {
        this.recovering = false;
      }
      if (!again) throw error;
      return statement();
    }
  }

  /**
   * Runs `work` (one statement and the reading of its result) as running on this session: `close` waits
   * for it. After `close`, no statement starts.
   */
  private async counted<T>(sql: string, work: () => Promise<T>): Promise<T> {
    if (this.closing) throw storeClosedError(sql);
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
      // Statements asked before `close` are interrupted by its timer; the last to end closes the database.
      if (this.closing && this.running === 0) this.closeNow();
    }
  }

  /** Interrupts the statement this connection is running, if any: it fails with DuckDB's INTERRUPT error. */
  interrupt(): void {
    this.connection.interrupt();
  }

  /**
   * Closes the connection and the database (only the connection, for a session from `connect`). A
   * statement still running is interrupted first and the database closed once it has failed: DuckDB never
   * answers a statement whose database was closed under it, and the process would never exit.
   */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    if (this.running === 0) {
      this.closeNow();
      return;
    }
    this.connection.interrupt();
    // DuckDB clears the interrupt when a statement begins, so a statement asked before `close` that only
    // starts after an interrupt (queued behind the running one, or slow to reach its thread on a loaded
    // machine) would run to its end. Interrupt again until none is left.
    this.interrupting = setInterval(() => this.connection.interrupt(), CLOSE_INTERRUPT_MS);
  }

  private closeNow(): void {
    if (this.interrupting !== undefined) clearInterval(this.interrupting);
    this.interrupting = undefined;
    this.connection.closeSync();
    if (this.ownsInstance) this.instance.closeSync();
  }

  /** Statements running (asked and not yet read): `close` waits for them. */
  private running = 0;
  private closing = false;
  /** While closing with statements running: the timer that interrupts them until none is left. */
  private interrupting: ReturnType<typeof setInterval> | undefined;
}

/**
 * A statement as the driver is handed it: with its values written into its text when they can be
 * (`inlineParams`: planned on a worker thread, with constants), else as given.
 */
function statementOf(sql: string, params: SqlParams | undefined): [string, never] {
  const inlined = inlineParams(sql, params);
  return (inlined === undefined ? [sql, params] : [inlined, undefined]) as [string, never];
}

function messageOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

const DAY_MS = 86_400_000;

function convertColumn(column: unknown[], type: DuckDBType): unknown[] {
  switch (type.typeId) {
    case DuckDBTypeId.DATE:
      return column.map((v) => (v instanceof Date ? v.toISOString().slice(0, 10) : v));
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_TZ:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return column.map((v) => (v instanceof Date ? v.getTime() / 1000 : v));
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UBIGINT:
      return column.map((v) =>
        typeof v === 'bigint' && v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER)
          ? Number(v)
          : v,
      );
    default:
      return column;
  }
}

/** DuckDB's vector size: the rows of one data chunk. */
const CHUNK_ROWS = 2048;

/**
 * Copies a typed array's slice straight into a numeric vector's buffer when their element types match
 * (a typed array holds no nulls), else leaves the vector to `setItem`. The driver keeps such a vector's
 * values in a typed array `items` that `flush` hands to DuckDB; without one, nothing is copied here.
 */
function copyTyped(vector: DuckDBVector, column: unknown, offset: number, rows: number): boolean {
  const items = (vector as unknown as { items?: unknown }).items;
  const same =
    (items instanceof Float64Array && column instanceof Float64Array) ||
    (items instanceof Int32Array && column instanceof Int32Array);
  if (same) items.set(column.subarray(offset, offset + rows));
  return same;
}

/** How `append` turns a value into one for a vector of `type`. */
function chunkValue(type: DuckDBType): (value: unknown) => DuckDBValue {
  switch (type.typeId) {
    case DuckDBTypeId.VARCHAR:
      return (v) => String(v);
    case DuckDBTypeId.BOOLEAN:
      return (v) => Boolean(v);
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.DOUBLE:
      return (v) => Number(v);
    case DuckDBTypeId.BIGINT:
      return (v) => BigInt(v as number | bigint);
    case DuckDBTypeId.DATE:
      return (v) => dateValue(typeof v === 'string' ? Date.parse(`${v}T00:00:00Z`) / DAY_MS : Number(v));
    case DuckDBTypeId.TIMESTAMP_TZ:
      return (v) => timestampTZValue(BigInt(Math.round(Number(v) * 1e6)));
    case DuckDBTypeId.DECIMAL: {
      const { width, scale } = type as DuckDBDecimalType;
      return (v) => DuckDBDecimalValue.fromDouble(Number(v), width, scale);
    }
    default:
      return (v) => v as DuckDBValue;
  }
}
