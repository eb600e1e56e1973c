/**
 * Session column files: beside each option quote and open interest file, a derived copy of its rows as
 * plain numeric columns, session by session, so that one session's rows (or a range of them) are one read
 * of the bytes they take, with nothing to decode. Through DuckDB a random session's chain decodes the ten
 * columns of the one or two Parquet row groups its rows lie in (7-11 ms of CPU for a front month on the
 * 26 M-row bench store, whatever the row group size); here it reads a few kilobytes.
 *
 * The file is derived: written at commit from the Parquet file just written (`writeSessionColumns`), named
 * after it (`sessionColumnsPath`), bound to its content hash, and removed with it. A reader uses it only
 * when it is there, whole, and bound to the manifest's file (`openSessionColumns`); otherwise the same rows
 * are read through DuckDB, which is also what a store written before these files existed does.
 *
 * Layout (little-endian): the magic, then per session, per column, its values: a 64-bit float each; a
 * 32-bit integer of the value's digits at a scale, when every value of that session's column is one;
 * one 64-bit float, when they are all the same (an end-of-day session's quote time, its underlying
 * price); or nothing, when all are NULL (a vendor without Greeks). Each column's values padded to 8 bytes; then the trailer, a JSON header, its byte length (u32) and the
 * magic again. The header names the columns, the Parquet file's hash, and each session's day number, rows
 * and scales, from which every column's offset follows.
 *
 * After the sessions, the key sessions section: the file's distinct keys ascending (64-bit floats), then per
 * key, in the same order, a bit per session of the file (in file order; `words` 32-bit words a key) set
 * when the key has rows in it. A look back for a few contracts' latest rows reads it to go straight to the
 * session that holds each one, where walking the sessions back would search every one of them.
 */
import { createHash } from 'node:crypto';
import { closeSync, promises as fs, openSync, readSync } from 'node:fs';
import { StoreError } from '../errors.js';
import { derivedOwner, derivedPath, earlierFormat, readTrailer } from './derived-path.js';
import type { TableName } from './schema.js';

/** One session's rows of a partition in a session column file: `rows` rows of day `day` (days since 1970-01-01). */
export type SessionColumnsPart = {
  readonly file: SessionColumnsFile;
  readonly day: number;
  readonly rows: number;
};

/** The suffix that replaces a Parquet file's `.parquet` in the name of its session column file. */
export const SESSION_COLUMNS_SUFFIX = '.sessions';

export const SESSION_COLUMNS_MAGIC = Buffer.from('PCSESS01', 'latin1');
/** Format 1 keyed rows by DuckDB's `hash` (see `SYMBOL_KEY`): its files are passed over and written again. */
export const SESSION_COLUMNS_FORMAT = 'pitchain-session-columns/2';
export const SESSION_COLUMNS_KIND = 'pitchain-session-columns/';

/**
 * A contract's key: its symbol's hash, in the 53 bits a double holds exactly. Rows of the same symbol have
 * the same key in every file, so readers match rows to contracts by number, not by text. The MD5's top
 * bits, not DuckDB's `hash`: that one gives whole families of real symbols of four-letter roots the same
 * value (AAPL or SPXW `…150130C00073000` and `…150630C00078000`: 38,400 of 584,000 symbols of two years
 * of daily expirations), and an underlying whose keys collide is read through DuckDB on every request
 * (an ETF of the 213 M-row bench store: 25-140 ms a front month against SPY's 3-8).
 */
export const SYMBOL_KEY = (alias: string) => `CAST(md5_number(${alias}.option_symbol) >> 75 AS DOUBLE)`;

/**
 * The columns kept per table, each with the expression of file rows `f` that gives it as a double: the
 * same values a block's DuckDB read gives (`block-sql.ts`), so that either read answers alike.
 */
export const SESSION_COLUMN_READS = {
  option_quotes: {
    session: 'session_date',
    columns: {
      key: SYMBOL_KEY('f'),
      quote_time: 'CAST(epoch_ms(f.quote_time) / 1000 AS DOUBLE)',
      bid: 'CAST(f.bid AS DOUBLE)',
      ask: 'CAST(f.ask AS DOUBLE)',
      bid_size: 'CAST(f.bid_size AS DOUBLE)',
      ask_size: 'CAST(f.ask_size AS DOUBLE)',
      last: 'CAST(f."last" AS DOUBLE)',
      volume: 'CAST(f.volume AS DOUBLE)',
      volume_time: 'CAST(epoch_ms(f.volume_time) / 1000 AS DOUBLE)',
      underlying_price: 'CAST(f.underlying_price AS DOUBLE)',
      iv: 'CAST(f.iv AS DOUBLE)',
      delta: 'CAST(f.delta AS DOUBLE)',
      gamma: 'CAST(f.gamma AS DOUBLE)',
      theta: 'CAST(f.theta AS DOUBLE)',
      vega: 'CAST(f.vega AS DOUBLE)',
    },
  },
  open_interest: {
    session: 'settled_session',
    columns: {
      key: SYMBOL_KEY('f'),
      open_interest: 'CAST(f.open_interest AS DOUBLE)',
      published_at: 'CAST(epoch_ms(f.published_at) / 1000 AS DOUBLE)',
    },
  },
} as const;

/** The tables that have session column files. */
export type SessionColumnsTable = keyof typeof SESSION_COLUMN_READS;
/** The column names of a table's session column files. */
export type SessionColumnName<T extends SessionColumnsTable> =
  keyof (typeof SESSION_COLUMN_READS)[T]['columns'];

/** Whether `table` has session column files. */
export function hasSessionColumns(table: TableName): table is SessionColumnsTable {
  return Object.hasOwn(SESSION_COLUMN_READS, table);
}

/** The session column file of the Parquet file at `parquetPath` (relative or absolute). */
export function sessionColumnsPath(parquetPath: string): string {
  return derivedPath(parquetPath, SESSION_COLUMNS_SUFFIX);
}

/** The Parquet file a session column file belongs to, or undefined when `filePath` is not one. */
export function sessionColumnsOwner(filePath: string): string | undefined {
  return derivedOwner(filePath, SESSION_COLUMNS_SUFFIX);
}

/** What a session column file's trailer says. */
export type SessionColumnsHeader = {
  readonly format: typeof SESSION_COLUMNS_FORMAT;
  /** The content hash of the Parquet file it was made from. */
  readonly parquet: string;
  readonly rows: number;
  readonly columns: readonly string[];
  /**
   * Per session in file order: its day number (days since 1970-01-01), rows, and each column's encoding:
   * its digits' scale (0-9), or `DOUBLES`, `ONE_VALUE` or `ALL_NULL`.
   */
  readonly sessions: readonly {
    readonly day: number;
    readonly rows: number;
    readonly scales: readonly number[];
  }[];
  /** The hash of everything before the trailer: `pitchain verify` checks it. */
  readonly sha256: string;
  /**
   * Whether each session's rows are in option symbol order, as the writer sorts every file it writes and
   * a repair checks (then a reader finds one date's rows by halves, `session-file-rows.ts`). Absent in a
   * file written before it was recorded: its rows are all looked at, and `--repair` writes it again.
   */
  readonly symbolOrder?: boolean;
  /** Where the key sessions section starts, and its keys and words a key (see the file layout). */
  readonly keySessions: { readonly offset: number; readonly keys: number; readonly words: number };
};

/** A file's key sessions section, read (see the file layout). */
export type KeySessions = {
  /** The file's keys, ascending. */
  readonly keys: Float64Array;
  /** Per key, `words` words of bits: bit `s` is set when the key has rows in the file's session `s`. */
  readonly bits: Uint32Array;
  readonly words: number;
};

/** The bytes the key sessions section of `keys` keys and `words` words a key takes. */
export function keySessionsBytes(keys: number, words: number): number {
  return keys * 8 + pad8(keys * words * 4);
}

/** A column's encoding in a session: 64-bit floats. */
export const DOUBLES = -1;
/** A column's encoding in a session: every row has the one 64-bit float written. */
export const ONE_VALUE = -3;
/** A column's encoding in a session: every row is NULL, and nothing is written. */
export const ALL_NULL = -2;

/** The bytes a session's column of `rows` rows takes in encoding `scale`, padded. */
export function encodedBytes(rows: number, scale: number): number {
  if (scale === ALL_NULL || rows === 0) return 0;
  if (scale === ONE_VALUE) return 8;
  return pad8(rows * (scale === DOUBLES ? 8 : 4));
}

/** A 32-bit integer never written as a value's digits: it stands for NULL. */
export const NULL_DIGITS = -0x80000000;
export const POWERS = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

export const pad8 = (bytes: number) => (bytes + 7) & ~7;

/** One session of a session column file, where its columns lie. */
type SessionPlace = {
  readonly rows: number;
  /** Per column: its byte offset in the file, and its encoding (see `SessionColumnsHeader`). */
  readonly offsets: readonly number[];
  readonly scales: readonly number[];
};

/**
 * The files that keep a descriptor open between runs of reads (`SessionColumnsFile.checkIn`), least
 * recently used first, of every store open in the process: at most `IDLE_DESCRIPTORS`, well within the
 * usual limit of 1,024 a process, however many files a store has.
 */
const idleFiles = new Set<SessionColumnsFile>();
const IDLE_DESCRIPTORS = 64;

/**
 * An open session column file's trailer, checked: a reader keeps it per file and reads sessions by it.
 * Reading opens the file each time (a file replaced or removed is noticed there).
 */
export class SessionColumnsFile {
  private readonly places = new Map<number, SessionPlace>();
  /** The sessions' day numbers in file order, and each column's place in a session (asked per request). */
  private readonly dayNumbers: readonly number[];
  private readonly indexOfDay: ReadonlyMap<number, number>;
  private readonly columnIndex: ReadonlyMap<string, number>;

  private constructor(
    readonly path: string,
    private readonly header: SessionColumnsHeader,
  ) {
    let offset = SESSION_COLUMNS_MAGIC.length;
    for (const session of header.sessions) {
      const offsets: number[] = [];
      for (const scale of session.scales) {
        offsets.push(offset);
        offset += encodedBytes(session.rows, scale);
      }
      this.places.set(session.day, { rows: session.rows, offsets, scales: session.scales });
    }
    this.dayNumbers = header.sessions.map((session) => session.day);
    this.indexOfDay = new Map(this.dayNumbers.map((day, s) => [day, s]));
    this.columnIndex = new Map(header.columns.map((name, c) => [name, c]));
  }

  /** The file's columns, in its order. */
  get columns(): readonly string[] {
    return this.header.columns;
  }

  /** Whether each session's rows are in option symbol order (`SessionColumnsHeader.symbolOrder`). */
  get inSymbolOrder(): boolean {
    return this.header.symbolOrder === true;
  }

  /** Whether the file says whether its sessions are in symbol order (one written before it does not). */
  get symbolOrderRecorded(): boolean {
    return this.header.symbolOrder !== undefined;
  }

  /**
   * The file's key sessions section, read each time it is asked: a store's files' sections together
   * would be too much to keep, so look backs keep the ones they read within a budget of bytes
   * (`session-file-rows.ts` `keySessionsOf`).
   */
  keySessions(fd: number): KeySessions {
    const { offset, keys, words } = this.header.keySessions;
    const bytes = new Uint8Array(keySessionsBytes(keys, words));
    readWhole(fd, bytes, offset, this.path);
    return {
      keys: new Float64Array(bytes.buffer, 0, keys),
      bits: new Uint32Array(bytes.buffer, keys * 8, keys * words),
      words,
    };
  }

  /** The position in the file of session `day` (undefined when it has none): its bit in `KeySessions`. */
  sessionIndex(day: number): number | undefined {
    return this.indexOfDay.get(day);
  }

  /**
   * The key of row `row` of session `day` (one read of its 8 bytes: a search by halves reads a few).
   * Throws when the file cannot be read.
   */
  keyAt(day: number, row: number, fd: number): number {
    const one = new Float64Array(1);
    this.readInto(day, 'key', row, row + 1, one, 0, fd);
    return one[0]!;
  }

  /**
   * Reads and checks the trailer of the session column file at `filePath`, made from the Parquet file of
   * content hash `sha256` and `rows` rows: undefined when there is none, or it is not whole or not that
   * file's (the reader then reads the Parquet file).
   */
  static open(filePath: string, sha256: string, rows: number): SessionColumnsFile | undefined {
    const trailer = readTrailer(filePath, SESSION_COLUMNS_MAGIC);
    if (trailer === undefined) return undefined;
    const header = parseHeader(trailer.text);
    if (header === undefined || header.parquet !== sha256 || header.rows !== rows) return undefined;
    try {
      const file = new SessionColumnsFile(filePath, header);
      // The data must end where the trailer begins: a file cut short or grown is not this one.
      return file.dataEnd() === trailer.start ? file : undefined;
    } catch {
      return undefined;
    }
  }

  /** Where the data ends (the trailer begins): after the sessions and the key sessions section. */
  private dataEnd(): number | undefined {
    const last = this.header.sessions.at(-1);
    let end = SESSION_COLUMNS_MAGIC.length;
    if (last !== undefined) {
      const place = this.places.get(last.day)!;
      end = place.offsets.at(-1)! + encodedBytes(place.rows, place.scales.at(-1)!);
    }
    const section = this.header.keySessions;
    // The section follows the sessions, with a word of bits a key for each 32 sessions.
    if (section.offset !== end || section.words !== Math.ceil(this.header.sessions.length / 32))
      return undefined;
    return end + keySessionsBytes(section.keys, section.words);
  }

  /** The day numbers of the sessions the file holds, ascending. */
  days(): readonly number[] {
    return this.dayNumbers;
  }

  /** The rows the file holds of session `day` (0 when none). */
  rowsOf(day: number): number {
    return this.places.get(day)?.rows ?? 0;
  }

  /**
   * Reads rows `from…to` of session `day`'s column `column` into `target` from `at` on (NULL as NaN).
   * Throws when the file cannot be read (the caller reads the Parquet file instead).
   */
  readInto(
    day: number,
    column: string,
    from: number,
    to: number,
    target: Float64Array,
    at: number,
    fd: number,
  ): void {
    const { offset, scale } = this.columnOf(day, column, from, to);
    const count = to - from;
    if (count === 0) return;
    if (scale === ALL_NULL || scale === ONE_VALUE) {
      target.fill(this.oneValue(scale, offset, fd), at, at + count);
      return;
    }
    if (scale === DOUBLES) {
      const bytes = new Uint8Array(target.buffer, target.byteOffset + at * 8, count * 8);
      readWhole(fd, bytes, offset + from * 8, this.path);
      return;
    }
    const digits = scratchDigits(count);
    readWhole(fd, new Uint8Array(digits.buffer, 0, count * 4), offset + from * 4, this.path);
    const power = POWERS[scale]!;
    for (let i = 0; i < count; i++) {
      const d = digits[i]!;
      target[at + i] = d === NULL_DIGITS ? Number.NaN : d / power;
    }
  }

  /**
   * Reads the rows `rows` (ascending) of session `day`'s column `column` into `target` from `at` on, as
   * `readInto` reads them: one read of the range they lie in, into memory used again, and only the
   * picked rows decoded (a random minute's answer picks one row a contract of a session's thousands).
   */
  readPicked(
    day: number,
    column: string,
    rows: Int32Array,
    target: Float64Array,
    at: number,
    fd: number,
  ): void {
    const count = rows.length;
    if (count === 0) return;
    const from = rows[0]!;
    const to = rows[count - 1]! + 1;
    const { offset, scale } = this.columnOf(day, column, from, to);
    if (scale === ALL_NULL || scale === ONE_VALUE) {
      target.fill(this.oneValue(scale, offset, fd), at, at + count);
      return;
    }
    const width = scale === DOUBLES ? 8 : 4;
    const range = scratchBytes((to - from) * width);
    readWhole(fd, range, offset + from * width, this.path);
    if (scale === DOUBLES) {
      const doubles = new Float64Array(range.buffer, 0, to - from);
      for (let i = 0; i < count; i++) target[at + i] = doubles[rows[i]! - from]!;
      return;
    }
    const digits = new Int32Array(range.buffer, 0, to - from);
    const power = POWERS[scale]!;
    for (let i = 0; i < count; i++) {
      const d = digits[rows[i]! - from]!;
      target[at + i] = d === NULL_DIGITS ? Number.NaN : d / power;
    }
  }

  /** Where column `column` of session `day` lies and its encoding; throws unless it has rows `from…to`. */
  private columnOf(day: number, column: string, from: number, to: number): { offset: number; scale: number } {
    const place = this.places.get(day);
    const c = this.columnIndex.get(column) ?? -1;
    if (place === undefined || c === -1 || from < 0 || to > place.rows || from > to) {
      throw new StoreError(`${this.path}: no rows ${from}-${to} of column ${column} on day ${day}`);
    }
    return { offset: place.offsets[c]!, scale: place.scales[c]! };
  }

  /** The value every row of a column in encoding `ALL_NULL` (NaN) or `ONE_VALUE` (the one written) has. */
  private oneValue(scale: number, offset: number, fd: number): number {
    if (scale === ALL_NULL) return Number.NaN;
    const one = new Float64Array(1);
    readWhole(fd, new Uint8Array(one.buffer), offset, this.path);
    return one[0]!;
  }

  /** Opens the file for a run of `readInto` calls; the caller closes the descriptor. */
  openForReading(): number {
    return openSync(this.path, 'r');
  }

  /** The descriptor kept open between runs of reads (`checkIn`), if any. */
  private idle: number | undefined;

  /**
   * A descriptor for a run of `readInto` calls: the one kept from the last run, or a new one; given back
   * with `checkIn` (or closed by the caller). A chain at a session opens its files several times (its
   * quotes, open interest, a look back), and an open and a close cost more than the reads of a small answer.
   */
  checkOut(): number {
    const fd = this.idle;
    if (fd === undefined) return this.openForReading();
    this.idle = undefined;
    idleFiles.delete(this);
    return fd;
  }

  /**
   * Gives back a descriptor from `checkOut` after a run of reads that went well: kept for the next run,
   * or closed when the file keeps one already. The least recently used of more than `IDLE_DESCRIPTORS`
   * files kept open is closed.
   */
  checkIn(fd: number): void {
    if (this.idle !== undefined) {
      closeSync(fd);
      return;
    }
    this.idle = fd;
    idleFiles.add(this);
    if (idleFiles.size > IDLE_DESCRIPTORS) idleFiles.values().next().value!.closeIdle();
  }

  /** Closes the descriptor kept between runs of reads, if any (its store closing). */
  closeIdle(): void {
    const fd = this.idle;
    if (fd === undefined) return;
    this.idle = undefined;
    idleFiles.delete(this);
    closeSync(fd);
  }

  /** Whether the file at `filePath` is a session column file of an earlier format (`earlierFormat`). */
  static ofEarlierFormat(filePath: string): boolean {
    return earlierFormat(filePath, SESSION_COLUMNS_MAGIC, SESSION_COLUMNS_KIND, SESSION_COLUMNS_FORMAT);
  }

  /** Whether the file's content still has the hash its trailer records (`pitchain verify`). */
  static async intact(filePath: string): Promise<boolean> {
    const bytes = await fs.readFile(filePath);
    if (bytes.length < 12) return false;
    const length = bytes.readUInt32LE(bytes.length - 12);
    const start = bytes.length - 12 - length;
    if (start < 0) return false;
    const header = parseHeader(bytes.subarray(start, bytes.length - 12).toString('utf8'));
    if (header === undefined) return false;
    return createHash('sha256').update(bytes.subarray(0, start)).digest('hex') === header.sha256;
  }
}

function readWhole(fd: number, bytes: Uint8Array, position: number, filePath: string): void {
  let done = 0;
  while (done < bytes.length) {
    const read = readSync(fd, bytes, done, bytes.length - done, position + done);
    if (read === 0) throw new StoreError(`${filePath}: ended before its rows`);
    done += read;
  }
}

/** A buffer for digits read before they are divided into doubles, reused: fresh memory is dear to touch. */
let digitsBuffer = new Int32Array(0);
function scratchDigits(count: number): Int32Array {
  if (digitsBuffer.length < count) digitsBuffer = new Int32Array(Math.max(count, 2 * digitsBuffer.length));
  return digitsBuffer;
}

/** A buffer for a range of a column's bytes of which some rows are picked, reused (see `readPicked`). */
let bytesBuffer = new Uint8Array(0);
function scratchBytes(count: number): Uint8Array {
  if (bytesBuffer.length < count) bytesBuffer = new Uint8Array(Math.max(count, 2 * bytesBuffer.length));
  return bytesBuffer.subarray(0, count);
}

/** Whether a header's `keySessions` is well formed (where it lies is checked against the data). */
function validKeySessions(section: unknown): boolean {
  if (typeof section !== 'object' || section === null) return false;
  const { offset, keys, words } = section as Record<string, unknown>;
  return [offset, keys, words].every((n) => Number.isSafeInteger(n) && (n as number) >= 0);
}

/** A trailer's JSON as a header, or undefined when it is not one of this format. */
function parseHeader(text: string): SessionColumnsHeader | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const header = value as SessionColumnsHeader;
  if (
    typeof value !== 'object' ||
    value === null ||
    header.format !== SESSION_COLUMNS_FORMAT ||
    typeof header.parquet !== 'string' ||
    typeof header.sha256 !== 'string' ||
    !Number.isSafeInteger(header.rows) ||
    !Array.isArray(header.columns) ||
    !header.columns.every((name) => typeof name === 'string') ||
    !Array.isArray(header.sessions) ||
    (header.symbolOrder !== undefined && typeof header.symbolOrder !== 'boolean') ||
    !validKeySessions(header.keySessions)
  ) {
    return undefined;
  }
  for (const session of header.sessions) {
    if (
      typeof session !== 'object' ||
      session === null ||
      !Number.isSafeInteger(session.day) ||
      !Number.isSafeInteger(session.rows) ||
      session.rows < 0 ||
      !Array.isArray(session.scales) ||
      session.scales.length !== header.columns.length ||
      !session.scales.every(
        (s: unknown) => typeof s === 'number' && Number.isInteger(s) && s >= ONE_VALUE && s < POWERS.length,
      )
    ) {
      return undefined;
    }
  }
  return header;
}
