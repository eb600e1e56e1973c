/**
 * The contracts of one block, picked from the underlying's contract table, and the numbering of a read's
 * rows to them: by their symbols' hashes, or by their symbols when two contracts share a hash.
 */
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import { byDay, gathered } from './block-columns.js';
import { type Contract, callBits, contractAt, contractTable } from './contract-table.js';
import { dayNumberOfIso } from './days.js';
import type { ExpirationWindow } from './expiration-window.js';
import { KeyIndex } from './key-index.js';
import { contractRanges } from './listed-groups.js';
import type { Scope } from './scope.js';
import { type SymbolOrder, symbolOrderOf } from './session-file-rows.js';
import { indexInOrder } from './sorted-search.js';

/** The contracts of a block: numbered in symbol order, with their order by expiration. */
export type ScopeContracts = {
  /** In symbol order (a symbol's number is found by halves). */
  readonly contracts: readonly Contract[];
  /**
   * The contracts' numbers by a 53-bit hash of their symbols, which DuckDB hands over as numbers (its
   * strings cost more to read than the rest of a session's columns); undefined when two contracts of the
   * underlying share a hash, and rows are then matched by their symbols.
   */
  readonly keys: ContractKeys | undefined;
  /**
   * How their rows are found by halves in a session in symbol order: their numbers in the underlying's
   * contract table, which numbers every row's contract; undefined with `keys`.
   */
  readonly order: SymbolOrder | undefined;
  readonly byExpiration: Int32Array;
  readonly expirations: readonly string[];
  /** Per contract: its first traded session as a day number (a loop compares it for every contract). */
  readonly firstTradedDay: Float64Array;
  /** Per contract: its terms as numbers, which an answer's columns gather. */
  readonly terms: ContractTermColumns;
  readonly bytes: number;
};

/** The terms of a block's contracts as numbers, per contract number, as the contract table holds them. */
export type ContractTermColumns = {
  readonly isCall: Uint8Array;
  readonly strike: Float64Array;
  readonly expirationTime: Float64Array;
  /** Day numbers (days since 1970-01-01). */
  readonly expirationDay: Float64Array;
};

/**
 * A block's contract numbers by the hashes of their symbols: `get` for any hash, and each number's hash
 * (`hashOf`), with which a row is matched by one comparison when it names the contract after the previous
 * row's (rows come in symbol order within a session, and contracts are numbered in symbol order).
 */
type ContractKeys = {
  get(key: number): number | undefined;
  /** Whether a key is one of the block's contracts, by an index of theirs alone (made once, on first use). */
  has(key: number): boolean;
  readonly hashOf: Float64Array;
};

/** About what one contract of a block costs: its object, its entries in the block's indexes, its terms. */
const CONTRACT_BYTES = 300;

/**
 * The scope's contracts that can answer at a session from `first` to `last` (listed by `last`, not
 * expired before `first`: a contract's first snapshot is no earlier than its first_traded), in symbol
 * order, made into objects and indexed for one block.
 */
export async function loadContracts(
  sql: SqlSession,
  cache: StoreCache,
  scope: Exclude<Scope, { optionSymbol: string }>,
  first: string,
  last: string,
  window?: ExpirationWindow,
): Promise<ScopeContracts> {
  const table = await contractTable(sql, cache, scope.underlying);
  const firstDay = dayNumberOfIso(first);
  const lastDay = dayNumberOfIso(last);
  const root = scope.root === undefined ? -1 : table.roots.indexOf(scope.root);
  // A one-expiration block's contracts are that date's only; a windowed block's, its dates'.
  const dates = scope.expiration === undefined ? window : { low: scope.expiration, high: scope.expiration };
  const low = dates === undefined ? firstDay : Math.max(firstDay, dayNumberOfIso(dates.low));
  const high = dates === undefined ? Number.POSITIVE_INFINITY : dayNumberOfIso(dates.high);
  // One date's contracts lie in a range of symbols per root: a few hundred looked at, not the whole table.
  const ranges =
    scope.expiration === undefined ? [[0, table.count] as const] : contractRanges(table, scope.expiration);
  const picked: number[] = [];
  // In symbol order: the ranges are disjoint and ascending.
  for (const [from, to] of ranges) {
    for (let i = from; i < to; i++) {
      if (scope.root !== undefined && table.root[i] !== root) continue;
      const expires = table.expirationDay[i]!;
      if (expires >= low && expires <= high && table.firstTradedDay[i]! <= lastDay) picked.push(i);
    }
  }
  const global = Int32Array.from(picked);
  const contracts = picked.map((i) => contractAt(table, i));
  const byExpiration = byDay(gathered(table.expirationDay, picked));
  const expirations = Array.from(byExpiration, (id) => contracts[id]!.expiration);
  // A row's hash names a contract of the table; its number in this block is its place among the picked.
  let keys: ContractKeys | undefined;
  let order: SymbolOrder | undefined;
  if (table.keys !== undefined) {
    const index = table.keys;
    const hashOf = gathered(table.hashes, global);
    keys = blockNumbering(index, global, table.count, hashOf);
    order = symbolOrderOf((key) => index.get(key), global);
  }
  const firstTradedDay = gathered(table.firstTradedDay, picked);
  const terms = {
    isCall: callBits(table, picked),
    strike: gathered(table.strike, picked),
    expirationTime: gathered(table.expirationTime, picked),
    expirationDay: gathered(table.expirationDay, picked),
  };
  return {
    contracts,
    keys,
    order,
    byExpiration,
    expirations,
    firstTradedDay,
    terms,
    bytes: contracts.length * CONTRACT_BYTES,
  };
}

/** Picked contracts past which a block's numbering goes through the table's index, not one of their own. */
const OWN_INDEX_MOST = 4_096;

/**
 * The numbering of rows' keys to a block's contracts (`global`: their numbers in the table, `hashOf`
 * their keys). A few contracts (one date's) get an index of their own, which stays in the processor's
 * cache, costs no table-sized array and also answers `has`; more go through the table's index and a
 * table-sized map to the block's numbers (a fresh array of a dense table's 120,000 contracts cost more
 * than the rest of a date's block), and `has` gets an index of theirs when first asked.
 */
function blockNumbering(
  index: KeyIndex,
  global: Int32Array,
  tableSize: number,
  hashOf: Float64Array,
): ContractKeys {
  // The table's keys are distinct, and so are theirs.
  if (global.length <= OWN_INDEX_MOST) {
    const own = KeyIndex.of(hashOf)!;
    return { get: (key) => own.get(key), has: (key) => own.get(key) !== undefined, hashOf };
  }
  const local = new Int32Array(tableSize).fill(-1);
  for (let id = 0; id < global.length; id++) local[global[id]!] = id;
  let member: ((key: number) => boolean) | undefined;
  return {
    get: (key) => {
      const at = index.get(key);
      const id = at === undefined ? -1 : local[at]!;
      return id === -1 ? undefined : id;
    },
    has: (key) => {
      member ??= KeyIndex.membership(hashOf)!;
      return member(key);
    },
    hashOf,
  };
}

/** A contract's number in a block (contracts are in symbol order), or -1. */
export function contractIndex(contracts: readonly Contract[], optionSymbol: string): number {
  return indexInOrder(contracts.length, (i) => contracts[i]!.option_symbol, optionSymbol);
}

/**
 * Columns read with the contract's symbol (or its hash) first, as numeric columns with the contract's number first
 * (named `names`), leaving out the rows of contracts the scope does not hold (another root's).
 */
export function numbered<const N extends readonly string[]>(
  columns: readonly (Float64Array | (string | null)[])[],
  known: ScopeContracts,
  names: N,
): Record<N[number], Float64Array> {
  const symbols = columns[0]!;
  const kept =
    symbols instanceof Float64Array
      ? numberByHash(symbols, known.keys!, columns)
      : numberBySymbol(symbols, known.contracts, columns);
  const out = columns.map((column, c) =>
    (c === 0 ? kept.contract : (column as Float64Array)).subarray(0, kept.count),
  );
  return Object.fromEntries(names.map((name, i) => [name, out[i]!])) as Record<N[number], Float64Array>;
}

/**
 * `numbered` of rows named by their symbols' hashes: the hashes' own column takes the numbers (a row's is
 * read before it is written over). Its own function, with the previous hash kept as a number: a variable
 * that may also hold a text boxes every number stored in it.
 */
function numberByHash(
  hashes: Float64Array,
  keys: ContractKeys,
  columns: readonly (Float64Array | (string | null)[])[],
): { count: number; contract: Float64Array } {
  const { hashOf } = keys;
  let lastKey = Number.NaN;
  let lastId = -1;
  let kept = 0;
  for (let i = 0; i < hashes.length; i++) {
    const key = hashes[i]!;
    if (key !== lastKey) {
      // Most rows name the contract after the previous row's: one comparison instead of a search.
      const next = lastId + 1;
      lastId = next < hashOf.length && hashOf[next] === key ? next : (keys.get(key) ?? -1);
      lastKey = key;
    }
    if (lastId === -1) continue;
    hashes[kept] = lastId;
    if (kept !== i) moveRow(columns, i, kept);
    kept++;
  }
  return { count: kept, contract: hashes };
}

/** `numbered` of rows named by their symbols (two contracts of the underlying share a hash). */
function numberBySymbol(
  symbols: readonly (string | null)[],
  contracts: readonly Contract[],
  columns: readonly (Float64Array | (string | null)[])[],
): { count: number; contract: Float64Array } {
  const contract = new Float64Array(symbols.length);
  let lastSymbol: string | null | undefined;
  let lastId = -1;
  let kept = 0;
  for (let i = 0; i < symbols.length; i++) {
    // A contract's rows of a session are next to each other: its number is looked up once for them.
    const symbol = symbols[i];
    if (symbol !== lastSymbol) {
      lastId = symbol === null || symbol === undefined ? -1 : contractIndex(contracts, symbol);
      lastSymbol = symbol;
    }
    if (lastId === -1) continue;
    contract[kept] = lastId;
    if (kept !== i) moveRow(columns, i, kept);
    kept++;
  }
  return { count: kept, contract };
}

/**
 * Row `from` of the numeric columns (all but the first) written over row `to`: rows of other contracts
 * are rare (another root's), so the columns are compacted only when there are.
 */
function moveRow(columns: readonly (Float64Array | (string | null)[])[], from: number, to: number): void {
  for (let c = 1; c < columns.length; c++)
    (columns[c] as Float64Array)[to] = (columns[c] as Float64Array)[from]!;
}
