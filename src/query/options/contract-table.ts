/**
 * An underlying's contracts, read once per data version into compact columns in symbol order, and made
 * into the terms every row of a contract shares. Loop blocks, session blocks, listed groups and the
 * library's contract look-ups all read their contracts from here, and whether the store lists an
 * underlying or root is answered from here when its table is held.
 */
import type { StoreCache } from '../../store/cache.js';
import {
  CONTRACT_FLAGS,
  CONTRACT_NUMBER_COLUMNS,
  CONTRACT_NUMBER_READS,
  type ContractNumberColumn,
  rootIndices,
} from '../../store/contract-columns.js';
import type { SqlSession } from '../../store/sql.js';
import { gathered } from './block-columns.js';
import { isoDateOfDay } from './days.js';
import { KeyIndex } from './key-index.js';
import type { SnapshotRow } from './snapshot-sql.js';
import { indexInOrder } from './sorted-search.js';

/**
 * An underlying's contracts, read once per data version into compact columns in symbol order (an
 * underlying lists a hundred thousand contracts over the years; a block needs the few thousand alive in
 * its sessions, made into objects from here).
 */
export type ContractTable = {
  readonly underlying: string;
  /** How many contracts it holds. */
  readonly count: number;
  /** Contract `index`'s option symbol (made on asking: a block needs a few thousand of a hundred thousand). */
  readonly symbolAt: (index: number) => string;
  /** Per contract: its root's index in `roots`. */
  readonly root: Uint16Array;
  readonly roots: readonly string[];
  readonly expirationDay: Float64Array;
  readonly expirationTime: Float64Array;
  readonly strike: Float64Array;
  readonly firstTradedDay: Float64Array;
  /** Bits: call, AM-settled, monthly, weekly, quarterly, nonstandard (`CONTRACT_FLAGS`). */
  readonly flags: Float64Array;
  /** Contract index by the 53-bit hash of its symbol; undefined when two symbols share one. */
  readonly keys: KeyIndex | undefined;
  /** Per contract: the 53-bit hash of its symbol. */
  readonly hashes: Float64Array;
  readonly bytes: number;
};

export { CONTRACT_FLAGS };

/** A contract of the block, with the columns every one of its rows shares. */
export type Contract = Omit<
  SnapshotRow,
  | 'session_date'
  | 'quote_time'
  | 'bid'
  | 'ask'
  | 'bid_size'
  | 'ask_size'
  | 'last'
  | 'volume'
  | 'volume_time'
  | 'underlying_price'
  | 'iv'
  | 'delta'
  | 'gamma'
  | 'theta'
  | 'vega'
  | 'open_interest'
  | 'oi_published_at'
>;

/** Contract `symbol`'s index in the table (its symbols are sorted), or -1. */
export function indexOfContract(table: ContractTable, symbol: string): number {
  return indexInOrder(table.count, table.symbolAt, symbol);
}

/** Per contract of `ids` (numbers in the table), 1 if it is a call, else 0. */
export function callBits(table: ContractTable, ids: ArrayLike<number>): Uint8Array {
  const bits = new Uint8Array(ids.length);
  for (let k = 0; k < ids.length; k++) bits[k] = table.flags[ids[k]!]! & CONTRACT_FLAGS.call ? 1 : 0;
  return bits;
}

/** Contract `index` of an underlying's contract table, its flags and day numbers made into its terms. */
export function contractAt(table: ContractTable, index: number): Contract {
  const flags = table.flags[index]!;
  return {
    option_symbol: table.symbolAt(index),
    underlying: table.underlying,
    root: table.roots[table.root[index]!]!,
    expiration: isoDateOfDay(table.expirationDay[index]!),
    expiration_time: table.expirationTime[index]!,
    side: flags & CONTRACT_FLAGS.call ? 'call' : 'put',
    strike: table.strike[index]!,
    settlement: flags & CONTRACT_FLAGS.am ? 'AM' : 'PM',
    monthly: (flags & CONTRACT_FLAGS.monthly) !== 0,
    weekly: (flags & CONTRACT_FLAGS.weekly) !== 0,
    quarterly: (flags & CONTRACT_FLAGS.quarterly) !== 0,
    nonstandard: (flags & CONTRACT_FLAGS.nonstandard) !== 0,
    first_traded: isoDateOfDay(table.firstTradedDay[index]!),
  };
}

/** Puts a read's rows in the order of its first column (symbols), unless they already are. */
export function inSymbolOrder(columns: (Float64Array | (string | null)[])[]): void {
  const symbols = (columns[0] ?? []) as string[];
  let sorted = true;
  for (let i = 1; i < symbols.length && sorted; i++) sorted = symbols[i - 1]! < symbols[i]!;
  if (sorted) return;
  // A plain array: its sort merges the sorted runs the rows come in (a file written in expiration order
  // leaves symbol order where a date's root sorts before the last date's), where a typed array's sort
  // compares them all over (an intraday SPX table, 11,508 contracts in 5 runs: about 1 ms against 4).
  const order = Array.from(symbols.keys()).sort((a, b) =>
    symbols[a]! < symbols[b]! ? -1 : symbols[a]! > symbols[b]! ? 1 : 0,
  );
  for (const [c, column] of columns.entries()) {
    columns[c] = column instanceof Float64Array ? gathered(column, order) : gatheredTexts(column, order);
  }
}

/** `from`'s texts in the order of `order`'s rows (a loop: see `gathered`). */
function gatheredTexts(from: readonly (string | null)[], order: readonly number[]): (string | null)[] {
  const to = new Array<string | null>(order.length);
  for (let i = 0; i < order.length; i++) to[i] = from[order[i]!] ?? null;
  return to;
}

/**
 * A symbol read in pieces of at most 12 bytes, which DuckDB hands over inline: read whole, each of a
 * table's symbols (21 bytes, OCC) cost the driver a native call and a buffer. The last piece is the
 * rest, empty for any symbol of up to 24 bytes.
 */
const SYMBOL_PIECES = [
  (column: string) => `substr(${column}, 1, 12)`,
  (column: string) => `substr(${column}, 13, 12)`,
  (column: string) => `substr(${column}, 25)`,
] as const;

/** Each row's symbol from its `SYMBOL_PIECES`. */
function joinedPieces(pieces: readonly (readonly string[])[]): string[] {
  const [head = [], middle = [], rest = []] = pieces;
  return Array.from(head, (text, i) => text + middle[i]! + rest[i]!);
}

/** The underlying's contract table if the session cache holds it (read or being read), without reading it. */
export function heldContractTable(cache: StoreCache, underlying: string): Promise<ContractTable> | undefined {
  return cache.heldSized<ContractTable>(contractTableKey(underlying));
}

const contractTableKey = (underlying: string) => `contracts|${underlying}`;

/**
 * Whether the store holds any contract of the underlying (optionally of one root). From the underlying's
 * contract table when the session cache holds it (a chain asked of a root without monthlies for its front
 * month has read it, and found no group), else by a statement: one per such request cost some 1.5 ms of
 * CPU over DuckDB's threads on the 213 M-row bench store.
 */
export async function underlyingKnown(
  sql: SqlSession,
  cache: StoreCache,
  underlying: string,
  root?: string,
): Promise<boolean> {
  const table = await heldContractTable(cache, underlying)?.catch(() => undefined);
  if (table !== undefined) {
    // A table's roots are those of its contracts (`rootIndices`).
    return root === undefined ? table.count > 0 : table.roots.includes(root);
  }
  const found = await sql.value<number>(
    root === undefined
      ? 'SELECT count(*) FROM (SELECT 1 FROM contracts WHERE underlying = $underlying LIMIT 1)'
      : 'SELECT count(*) FROM (SELECT 1 FROM contracts WHERE underlying = $underlying AND root = $root LIMIT 1)',
    root === undefined ? { underlying } : { underlying, root },
  );
  return Number(found) > 0;
}

/** The underlying's contract table, from the session cache or read. */
export function contractTable(
  sql: SqlSession,
  cache: StoreCache,
  underlying: string,
): Promise<ContractTable> {
  return cache.sized(
    contractTableKey(underlying),
    () => readContractTable(sql, underlying),
    (table) => table.bytes,
  );
}

/**
 * The underlying's contracts: from its contract column file when the store has one (a read of its bytes,
 * the symbols cut from one text only when asked for), else by a statement over its contracts file.
 */
async function readContractTable(sql: SqlSession, underlying: string): Promise<ContractTable> {
  const filed = sql.contractColumns(underlying);
  if (filed !== undefined) {
    const { symbolText, symbolEnds } = filed;
    const keys = KeyIndex.of(filed.hash);
    return {
      underlying,
      count: filed.count,
      // A symbol cut from the text keeps the text (some 2.5 MB for 121,000 contracts) alive while an
      // answer holds it: one per underlying's table, against a string made for each of its contracts.
      symbolAt: (index) => symbolText.slice(index === 0 ? 0 : symbolEnds[index - 1]!, symbolEnds[index]!),
      root: filed.root,
      roots: filed.roots,
      expirationDay: filed.expirationDay,
      expirationTime: filed.expirationTime,
      strike: filed.strike,
      firstTradedDay: filed.firstTradedDay,
      flags: filed.flags,
      keys,
      hashes: filed.hash,
      // The columns are views of the one read of the file, which they keep whole; its symbols are held
      // again as one text (a byte a character).
      bytes: filed.hash.buffer.byteLength + symbolText.length + (keys?.bytes ?? 0) + TABLE_BYTES,
    };
  }
  const from = await sql.from('contracts', { underlying });
  const { columns } = await sql.typedColumns(
    `SELECT ${SYMBOL_PIECES.map((piece) => piece('option_symbol')).join(', ')}, root,
       ${CONTRACT_NUMBER_COLUMNS.map((name) => CONTRACT_NUMBER_READS[name]).join(', ')}
     FROM ${from} c WHERE c.underlying = $underlying`,
    { underlying },
  );
  const read = [joinedPieces(columns.splice(0, SYMBOL_PIECES.length) as string[][]), ...columns];
  // In symbol order: the files are written so, and sorting here costs less than DuckDB's ORDER BY of the text.
  inSymbolOrder(read);
  const symbols = (read[0] ?? []) as string[];
  const rootTexts = (read[1] ?? []) as string[];
  const numbers = Object.fromEntries(
    CONTRACT_NUMBER_COLUMNS.map((name, c) => [name, (read[2 + c] as Float64Array) ?? new Float64Array(0)]),
  ) as Record<ContractNumberColumn, Float64Array>;
  const { roots, root } = rootIndices(rootTexts);
  const keys = KeyIndex.of(numbers.hash);
  return {
    underlying,
    count: symbols.length,
    symbolAt: (index) => symbols[index]!,
    root,
    roots,
    expirationDay: numbers.expirationDay,
    expirationTime: numbers.expirationTime,
    strike: numbers.strike,
    firstTradedDay: numbers.firstTradedDay,
    flags: numbers.flags,
    keys,
    hashes: numbers.hash,
    bytes:
      symbols.length * (SYMBOL_STRING_BYTES + 2 + CONTRACT_NUMBER_COLUMNS.length * 8) +
      (keys?.bytes ?? 0) +
      TABLE_BYTES,
  };
}

/**
 * What the table holds besides its columns and its key index: its listed groups (`listed-groups.ts`, a
 * few thousand on a dense listing), its roots, the objects themselves.
 */
const TABLE_BYTES = 256 * 1024;
/** A symbol read through DuckDB: its own string (a header and a byte a character) and its place in the array. */
const SYMBOL_STRING_BYTES = 48;
