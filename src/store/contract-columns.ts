/**
 * Contract column files: beside each contracts Parquet file, a derived copy of its contracts in option
 * symbol order as plain columns, so that an underlying's contract table (`query/options/contract-table.ts`)
 * is one read of a file. Through DuckDB it is a statement handing over every symbol as text: 185-290 ms
 * for the 121,134 contracts of the 26 M-row bench store's SPY, most of it making the strings and
 * collecting them, paid by the first request of every process and again whenever the cache lets it go.
 *
 * Like a session column file (`session-columns.ts`), the file is derived: written at commit from the
 * Parquet file just written (`writeContractColumns`), named after it (`contractColumnsPath`), bound to its
 * content hash and row count, and removed with it; a reader uses it only when it is there and whole
 * (`readContractColumns`), and reads the Parquet file otherwise. It is written by `contract-columns-write.ts`.
 *
 * Layout (little-endian): the magic; each of `CONTRACT_NUMBER_COLUMNS` as 64-bit floats, one a contract;
 * the end offset of each contract's symbol in the symbol text (u32), padded to 8 bytes; each contract's
 * root as an index into the trailer's roots (u16), padded; the symbols' text (Latin-1, all OCC symbols
 * are ASCII), padded; then the trailer: a JSON header, its byte length (u32) and the magic again.
 */
import { createHash } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import { derivedOwner, derivedPath, earlierFormat } from './derived-path.js';
import { SYMBOL_KEY } from './session-columns.js';

/** The suffix that replaces a contracts Parquet file's `.parquet` in the name of its contract column file. */
export const CONTRACT_COLUMNS_SUFFIX = '.contracts';

export const CONTRACT_COLUMNS_MAGIC = Buffer.from('PCCONT01', 'latin1');
/** Format 1 held DuckDB's `hash` of each symbol (see `SYMBOL_KEY`): its files are passed over and written again. */
export const CONTRACT_COLUMNS_FORMAT = 'pitchain-contract-columns/2';
const CONTRACT_COLUMNS_KIND = 'pitchain-contract-columns/';

const CALL = 1;
const AM = 2;
const MONTHLY = 4;
const WEEKLY = 8;
const QUARTERLY = 16;
const NONSTANDARD = 32;
/** The bits of a contract's `flags`, by name. */
export const CONTRACT_FLAGS = {
  call: CALL,
  am: AM,
  monthly: MONTHLY,
  weekly: WEEKLY,
  quarterly: QUARTERLY,
  nonstandard: NONSTANDARD,
} as const;

const day = (column: string) => `CAST(${column} - DATE '1970-01-01' AS INTEGER)`;
const flag = (condition: string, bit: number) => `CASE WHEN ${condition} THEN ${bit} ELSE 0 END`;

/**
 * The numeric columns of a contract, each with the expression of contracts `c` that gives it as a number:
 * the same for the file's writer and for a read through DuckDB, so that either read makes the same table.
 */
export const CONTRACT_NUMBER_READS = {
  /** A 53-bit hash of the symbol: the session column files' row keys (`SYMBOL_KEY`). */
  hash: SYMBOL_KEY('c'),
  expirationDay: day('c.expiration'),
  expirationTime: 'CAST(epoch_ms(c.expiration_time) / 1000 AS DOUBLE)',
  strike: 'CAST(c.strike AS DOUBLE)',
  firstTradedDay: day('c.first_traded'),
  flags: `CAST(${[
    flag("c.side = 'call'", CALL),
    flag("c.settlement = 'AM'", AM),
    flag('c.monthly', MONTHLY),
    flag('c.weekly', WEEKLY),
    flag('c.quarterly', QUARTERLY),
    flag('c.nonstandard', NONSTANDARD),
  ].join(' + ')} AS INTEGER)`,
} as const;

export type ContractNumberColumn = keyof typeof CONTRACT_NUMBER_READS;
export const CONTRACT_NUMBER_COLUMNS = Object.keys(CONTRACT_NUMBER_READS) as ContractNumberColumn[];

/** An underlying's contracts in symbol order, as a contract column file holds them. */
export type ContractColumns = {
  readonly count: number;
  /** Every symbol, one after another; contract i's is `symbolText.slice(symbolEnds[i - 1] ?? 0, symbolEnds[i])`. */
  readonly symbolText: string;
  readonly symbolEnds: Uint32Array;
  readonly roots: readonly string[];
  /** Per contract: its root's index in `roots`. */
  readonly root: Uint16Array;
} & Readonly<Record<ContractNumberColumn, Float64Array>>;

/** Each contract's root as an index into the distinct roots, in the order they first appear. */
export function rootIndices(rootTexts: readonly string[]): { roots: string[]; root: Uint16Array } {
  const roots: string[] = [];
  const indexOf = new Map<string, number>();
  const root = new Uint16Array(rootTexts.length);
  for (const [i, name] of rootTexts.entries()) {
    let index = indexOf.get(name);
    if (index === undefined) {
      index = roots.push(name) - 1;
      indexOf.set(name, index);
    }
    root[i] = index;
  }
  return { roots, root };
}

/** What a contract column file's trailer says. */
export type ContractColumnsHeader = {
  readonly format: typeof CONTRACT_COLUMNS_FORMAT;
  /** The content hash of the Parquet file it was made from. */
  readonly parquet: string;
  readonly rows: number;
  readonly roots: readonly string[];
  readonly symbolBytes: number;
  /** The SHA-256 of the bytes between the magic and the trailer (`verify` checks it). */
  readonly data: string;
};

/** The contract column file of the Parquet file at `parquetPath` (relative or absolute). */
export function contractColumnsPath(parquetPath: string): string {
  return derivedPath(parquetPath, CONTRACT_COLUMNS_SUFFIX);
}

/** The Parquet file whose contract column file is at `filePath`; undefined when it is not one. */
export function contractColumnsOwner(filePath: string): string | undefined {
  return derivedOwner(filePath, CONTRACT_COLUMNS_SUFFIX);
}

/** Zero bytes that pad `bytes` to a multiple of 8. */
export const pad8 = (bytes: number) => (8 - (bytes % 8)) % 8;

/** Where each part of a file of `rows` contracts and `symbolBytes` bytes of symbols begins, and where its data ends. */
function layoutOf(rows: number, symbolBytes: number) {
  let at = CONTRACT_COLUMNS_MAGIC.length;
  const numbers = at;
  at += CONTRACT_NUMBER_COLUMNS.length * rows * 8;
  const ends = at;
  at += rows * 4 + pad8(rows * 4);
  const roots = at;
  at += rows * 2 + pad8(rows * 2);
  const text = at;
  at += symbolBytes + pad8(symbolBytes);
  return { numbers, ends, roots, text, dataEnd: at };
}

/**
 * The contracts of the contract column file at `filePath`, made from the Parquet file of content hash
 * `sha256` and `rows` rows: undefined when there is none, or it is not whole or not that file's (the
 * reader then reads the Parquet file). The columns are views of the one read of the file.
 */
export function readContractColumns(
  filePath: string,
  sha256: string,
  rows: number,
): ContractColumns | undefined {
  // The numbers are in the writer's byte order, little-endian: a big-endian machine reads through DuckDB.
  if (os.endianness() !== 'LE') return undefined;
  let bytes: Buffer;
  try {
    bytes = readFileSync(filePath);
  } catch {
    return undefined;
  }
  // The columns are views of the bytes read: their start must be 8-aligned (a large read's always is).
  if (bytes.byteOffset % 8 !== 0) {
    const aligned = new Uint8Array(new ArrayBuffer(bytes.length));
    aligned.set(bytes);
    bytes = Buffer.from(aligned.buffer);
  }
  const found = headerOf(bytes);
  if (found === undefined) return undefined;
  const { header, trailerStart } = found;
  if (header.parquet !== sha256 || header.rows !== rows) return undefined;
  const layout = layoutOf(rows, header.symbolBytes);
  // The data must end where the trailer begins: a file cut short or grown is not this one.
  if (layout.dataEnd !== trailerStart) return undefined;
  const { buffer, byteOffset } = bytes;
  const numbers = {} as Record<ContractNumberColumn, Float64Array>;
  for (const [c, name] of CONTRACT_NUMBER_COLUMNS.entries()) {
    numbers[name] = new Float64Array(buffer, byteOffset + layout.numbers + c * rows * 8, rows);
  }
  return {
    count: rows,
    symbolText: bytes.toString('latin1', layout.text, layout.text + header.symbolBytes),
    symbolEnds: new Uint32Array(buffer, byteOffset + layout.ends, rows),
    roots: header.roots,
    root: new Uint16Array(buffer, byteOffset + layout.roots, rows),
    ...numbers,
  };
}

/**
 * Whether the contract column file at `filePath` is whole, its Parquet file's (`sha256`, `rows`), and its
 * data what its trailer records: `missing` when there is none.
 */
export async function contractColumnsState(
  filePath: string,
  sha256: string,
  rows: number,
): Promise<'intact' | 'missing' | 'damaged'> {
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(filePath);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'damaged';
  }
  const found = headerOf(bytes);
  // A file of an earlier format is not used, as if it were not there: a repair writes it again.
  if (found === undefined)
    return earlierFormat(filePath, CONTRACT_COLUMNS_MAGIC, CONTRACT_COLUMNS_KIND, CONTRACT_COLUMNS_FORMAT)
      ? 'missing'
      : 'damaged';
  const { header, trailerStart } = found;
  if (header.parquet !== sha256 || header.rows !== rows) return 'damaged';
  if (layoutOf(rows, header.symbolBytes).dataEnd !== trailerStart) return 'damaged';
  const data = createHash('sha256')
    .update(bytes.subarray(CONTRACT_COLUMNS_MAGIC.length, trailerStart))
    .digest('hex');
  return data === header.data ? 'intact' : 'damaged';
}

/** A file's trailer and where it begins; undefined when the file does not end in a readable one. */
function headerOf(bytes: Buffer): { header: ContractColumnsHeader; trailerStart: number } | undefined {
  const magic = CONTRACT_COLUMNS_MAGIC.length;
  if (bytes.length < 2 * magic + 4) return undefined;
  if (!bytes.subarray(0, magic).equals(CONTRACT_COLUMNS_MAGIC)) return undefined;
  if (!bytes.subarray(bytes.length - magic).equals(CONTRACT_COLUMNS_MAGIC)) return undefined;
  const length = bytes.readUInt32LE(bytes.length - magic - 4);
  const trailerStart = bytes.length - magic - 4 - length;
  if (trailerStart < magic) return undefined;
  let header: unknown;
  try {
    header = JSON.parse(bytes.toString('utf8', trailerStart, trailerStart + length));
  } catch {
    return undefined;
  }
  return isHeader(header) ? { header, trailerStart } : undefined;
}

function isHeader(value: unknown): value is ContractColumnsHeader {
  if (typeof value !== 'object' || value === null) return false;
  const header = value as Record<string, unknown>;
  return (
    header['format'] === CONTRACT_COLUMNS_FORMAT &&
    typeof header['parquet'] === 'string' &&
    Number.isSafeInteger(header['rows']) &&
    (header['rows'] as number) >= 0 &&
    Number.isSafeInteger(header['symbolBytes']) &&
    (header['symbolBytes'] as number) >= 0 &&
    typeof header['data'] === 'string' &&
    Array.isArray(header['roots']) &&
    (header['roots'] as unknown[]).every((root) => typeof root === 'string')
  );
}
