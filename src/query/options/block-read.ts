/**
 * Reading a block: a scope's snapshots and open interest of a range of sessions, in slices, numbered to
 * the block's contracts, put in order and indexed, with each contract's latest rows from before the block
 * carried in (`carriedRows`) so that a current as-of can be answered from the block alone.
 */
import { previousSession } from '../../market-time/index.js';
import type { SqlSession } from '../../store/sql.js';
import type { Block } from './block.js';
import { type Carried, carriedRows } from './block-carry.js';
import {
  concatenated,
  countingOrder,
  INTEREST_NAMES,
  inSessionOrder,
  interestColumns,
  QUOTE_COLUMNS,
  type QuoteColumns,
  sessionRanges,
} from './block-columns.js';
import { numbered, type ScopeContracts } from './block-contracts.js';
import { interestColumnsSql, quoteColumnsSql, withEmpty } from './block-sql.js';
import { tryNextSession } from './days.js';
import { contractSymbolsSql, type ExpirationWindow } from './expiration-window.js';
import type { Scope } from './scope.js';
import { latestRows, partRuns } from './session-file-rows.js';

/** How a loop's block is read (a block of a random request has none of it). */
export type BlockReading = {
  /** The scope's rows a session, about: the sessions one query reads. */
  readonly rowsPerSession: number;
  /** Rows one query reads. */
  readonly sliceRows: number;
  /** The loop's block before this one, whose rows may carry contracts into it (`carriedRows`). */
  readonly previous?: Block | undefined;
  /**
   * The most rows (at `rowsPerSession`) that the search for contracts not quoted on the block's first
   * session may scan; a longer search is not made, and the answers that would need it go to the query.
   * Unbounded when absent.
   */
  readonly carryRows?: number;
};

/**
 * Rows a growing loop's block reads in one query: its blocks are read while the loop waits, and a block
 * of a year read at once peaked at twice the memory.
 */
export const SLICE_ROWS = 50_000;

/**
 * Reads the scope's snapshots of the sessions `first`…`last` (and the open interest settled from the
 * session before `first`). The rows are read in the files' own order (session, symbol, quote time) with
 * their symbols, which the scope's contract index numbers: no join, no sort beyond the files' own.
 */
export async function loadBlock(
  sql: SqlSession,
  scope: Exclude<Scope, { optionSymbol: string }>,
  first: string,
  last: string,
  contractsOf: ScopeContracts | Promise<ScopeContracts>,
  loop?: BlockReading,
  window?: ExpirationWindow,
): Promise<Block> {
  // A whole chain's reads need nothing of its contracts but whether rows are named by their symbols'
  // hashes (they are unless two of the underlying's contracts share one): they start while the contracts
  // are read and made. Some dates' reads bound the symbols by their contracts': they wait.
  const some = scope.expiration !== undefined || window !== undefined;
  const early = !some && contractsOf instanceof Promise;
  if (early) contractsOf.catch(() => undefined); // failed below, when awaited
  const ready = early ? undefined : await contractsOf;
  // Before the contracts are read, rows are named by their hashes (any object says so).
  const keys = ready === undefined ? {} : ready.keys;
  const rowsPerSession = loop?.rowsPerSession;
  const underlying = { underlying: scope.underlying };
  const slices = sessionSlices(first, last, rowsPerSession, loop?.sliceRows);
  const empty = emptyQuoteColumns(sql, scope.underlying, first, last);
  // The wide columns every value of which fits in 32 bits in the files read go so (half the bytes).
  const narrow = sql.narrowColumns('option_quotes', underlying, { first, last });
  const interestNarrow = sql.narrowColumns('open_interest', underlying, {
    first: previousSession(first),
    last,
  });
  const quoteParts: QuoteColumns[] = [];
  const interestParts: Record<(typeof INTEREST_NAMES)[number], Float64Array>[] = [];
  const symbols = (alias: string) =>
    ready === undefined || !some ? '' : contractSymbolsSql(alias, ready.contracts);
  let numbering: ScopeContracts | undefined = ready;
  // From the session column files when every session has them: the whole block in one read of the rows'
  // bytes (slices bound what a statement hands over at once), with room before its rows for the rows a
  // loop's block carries from before it (`withCarried`).
  const files = sql.sessionColumns('option_quotes', underlying, { first, last }) !== undefined;
  const fromFiles = files
    ? blockFromFiles(sql, scope.underlying, { first, last }, await contractsOf, {
        some,
        empty,
        carries: loop !== undefined,
      })
    : undefined;
  if (fromFiles !== undefined) {
    numbering = fromFiles.known;
    quoteParts.push(fromFiles.quotes);
    interestParts.push(fromFiles.interest);
  }
  for (const [i, slice] of (fromFiles === undefined ? slices : []).entries()) {
    // Open interest settled from the session before the block's first.
    const oiSlice = i === 0 ? { first: previousSession(slice.first), last: slice.last } : slice;
    const quoteSource = await sql.from('option_quotes', underlying, slice);
    const interestSource = await sql.from('open_interest', underlying, oiSlice);
    const quoteRead = sql.typedColumns(
      `SELECT ${quoteColumnsSql(keys, empty, narrow)}
       FROM ${quoteSource} q
       WHERE q.underlying = $underlying AND q.session_date BETWEEN CAST($first AS DATE) AND CAST($last AS DATE)
         ${symbols('q')}`,
      { underlying: scope.underlying, ...slice },
    );
    // Asked at once: DuckDB scans the open interest while the quotes are handed over and numbered here.
    const interestRead = sql.typedColumns(
      `SELECT ${interestColumnsSql(keys, interestNarrow)}
       FROM ${interestSource} o
       WHERE o.underlying = $underlying
         AND o.settled_session BETWEEN CAST($first AS DATE) AND CAST($last AS DATE)
         ${symbols('o')}`,
      { underlying: scope.underlying, ...oiSlice },
    );
    // The second read's failure is the first's to report when both fail, and never unhandled.
    interestRead.catch(() => undefined);
    const read = await quoteRead;
    numbering ??= await contractsOf;
    if (numbering.keys === undefined && keys !== undefined) {
      // Two of the underlying's contracts share a hash (never seen): read again, rows named by their symbols.
      await interestRead.catch(() => undefined);
      return loadBlock(sql, scope, first, last, numbering, loop, window);
    }
    // Each slice put in order on its own (slices are consecutive sessions): a block is never copied whole.
    quoteParts.push(inSessionOrder(numbered(withEmpty(read.columns, empty), numbering, QUOTE_COLUMNS)));
    interestParts.push(numbered((await interestRead).columns, numbering, INTEREST_NAMES));
  }
  const known = numbering ?? (await contractsOf);
  // A loop's block also holds, for a contract listed before it and not quoted (or without open interest
  // settled) on its first session, the contract's latest row before it: a current as-of answers with a
  // snapshot however old (a deep LEAPS not quoted for weeks), which the block would otherwise send to the query.
  // The carried rows come first, and the block's columns are put together once (a copy of a 300,000-row
  // block is some 40 MB).
  let carried: Carried | undefined;
  if (rowsPerSession !== undefined) {
    const carrySessions =
      loop?.carryRows === undefined ? undefined : Math.floor(loop.carryRows / Math.max(1, rowsPerSession));
    const read = await carriedRows(
      sql,
      scope,
      first,
      known,
      quoteParts[0],
      interestParts,
      loop?.previous,
      carrySessions,
    );
    if (read !== undefined) {
      carried = read;
      quoteParts.unshift(inSessionOrder(read.quotes));
      interestParts.unshift(read.interest);
      // The carried rows go into the room left before the block's rows read from files, not a copy of all.
      if (fromFiles !== undefined) quoteParts.splice(0, 2, withCarried(quoteParts[0]!, fromFiles));
    }
  }
  return assembled(
    {
      first,
      last,
      window:
        window ??
        (scope.expiration === undefined ? undefined : { low: scope.expiration, high: scope.expiration }),
    },
    known,
    quoteParts,
    interestParts,
    carried,
  );
}

/**
 * A block of one date's rows of the as-of's session holding, per contract, only its latest snapshot by the
 * as-of's cutoff, read from the session column files: what a random instant of an intraday session needs
 * of its hundreds of snapshots a contract. It answers that cutoff alone (`currentRows`, by the same rules
 * as any block) and carries no rows from before the session: a contract with no snapshot of the session
 * by the cutoff leaves the answer undefined, for the session's whole block to give. Undefined when the
 * session has no session column files or its rows are named by symbols.
 */
export async function loadInstantBlock(
  sql: SqlSession,
  scope: Exclude<Scope, { optionSymbol: string }> & { readonly expiration: string },
  session: string,
  cutoff: number,
  known: ScopeContracts,
): Promise<Block | undefined> {
  const underlying = { underlying: scope.underlying };
  const range = { first: session, last: session };
  if (sql.sessionColumns('option_quotes', underlying, range) === undefined) return undefined;
  const empty = emptyQuoteColumns(sql, scope.underlying, session, session);
  const read = blockFromFiles(sql, scope.underlying, range, known, {
    some: true,
    empty,
    carries: false,
    latestBy: cutoff,
  });
  if (read === undefined) return undefined;
  return assembled(
    { ...range, window: { low: scope.expiration, high: scope.expiration } },
    read.known,
    [read.quotes],
    [read.interest],
    undefined,
  );
}

/** Of the columns a block's rows must have, the ones no file of its sessions holds (a vendor without Greeks). */
function emptyQuoteColumns(sql: SqlSession, underlying: string, first: string, last: string): Set<string> {
  return new Set(
    [...sql.emptyColumns('option_quotes', { underlying }, { first, last })].filter(
      (column) => column !== 'session_date' && column !== 'quote_time',
    ),
  );
}

/** A block of the rows read (the carried ones first, if any), put together and indexed. */
function assembled(
  span: Pick<Block, 'first' | 'last' | 'window'>,
  known: ScopeContracts,
  quoteParts: readonly QuoteColumns[],
  interestParts: readonly Record<(typeof INTEREST_NAMES)[number], Float64Array>[],
  carried: Carried | undefined,
): Block {
  const { contracts, byExpiration, expirations } = known;
  const quotes = concatenated(quoteParts, QUOTE_COLUMNS);
  const interest = interestColumns(concatenated(interestParts, INTEREST_NAMES), contracts.length);
  // Each contract's rows, in the block's order (session, then quote time): a compressed row index.
  const { offsets, order: byContract } = countingOrder(quotes.contract, 0, contracts.length);
  const sessions = sessionRanges(quotes.day);
  const rows = quotes.day.length;
  return {
    ...span,
    contracts,
    quotes,
    sessions,
    offsets,
    byContract,
    byExpiration,
    expirations,
    firstTradedDay: known.firstTradedDay,
    terms: known.terms,
    interest,
    carriedQuotes: carried?.quoteSearched,
    carriedInterest: carried?.interestSearched,
    // The quote columns (an empty one shares its NaN column with the others), a row index a row, three
    // numbers an open interest row, the per-contract offsets.
    bytes:
      distinctBytes(Object.values(quotes)) +
      rows * 4 +
      interest.settledDay.length * 24 +
      interest.offsets.byteLength * 2 +
      offsets.byteLength +
      known.bytes,
  };
}

/** A block's rows read from session column files (see `blockFromFiles`). */
type FileBlock = {
  readonly known: ScopeContracts;
  /** The block's quotes in session order, each column a view of `room` rows past the start of its buffer. */
  readonly quotes: QuoteColumns;
  readonly interest: Record<(typeof INTEREST_NAMES)[number], Float64Array>;
  /** Rows left before each quote column's view, for carried rows (`withCarried`). */
  readonly room: number;
  /** The NaN column the empty quote columns share, room included. */
  readonly none: Float64Array | undefined;
};

/** How `blockFromFiles` reads. */
type FileReading = {
  /** Whether the block holds some dates only: the rows of its contracts are kept, no other. */
  readonly some: boolean;
  /** The quote columns no file of the block's sessions holds. */
  readonly empty: ReadonlySet<string>;
  /** Whether to leave room before the quote rows for one carried row a contract (a loop's block). */
  readonly carries: boolean;
  /** Some dates' block of one instant: per contract, only its latest row by this cutoff (`latestRows`). */
  readonly latestBy?: number;
};

/**
 * The block's quote and open interest rows read from the session column files, numbered to `known` and
 * in session order, as the statements and `numbered` give them; undefined when they are to be read
 * through DuckDB (a session without such a file, rows named by symbols, a read that fails). Some dates'
 * reads (`some`) keep their contracts' rows only, as the statements' symbol ranges and the numbering do
 * together. A loop's block (`carries`) leaves room before its quote rows for one carried row a contract.
 */
function blockFromFiles(
  sql: SqlSession,
  underlying: string,
  { first, last }: { readonly first: string; readonly last: string },
  known: ScopeContracts,
  reading: FileReading,
): FileBlock | undefined {
  const { some, empty, carries, latestBy } = reading;
  const index = known.keys;
  if (index === undefined) return undefined;
  const partition = { underlying };
  const quoteParts = sql.sessionColumns('option_quotes', partition, { first, last });
  const interestParts = sql.sessionColumns('open_interest', partition, {
    first: previousSession(first),
    last,
  });
  if (quoteParts === undefined || interestParts === undefined) return undefined;
  // Some dates' rows kept by an index of their contracts' keys alone (`ContractKeys.has`).
  const kept = some ? index.has : undefined;
  try {
    // Some dates' rows found by halves in sessions in symbol order.
    const order = some ? known.order : undefined;
    const quoteRuns =
      latestBy === undefined || kept === undefined
        ? partRuns(quoteParts, kept, order)
        : latestRows(quoteParts, kept, latestBy, order);
    const room = carries ? known.contracts.length : 0;
    const rows = quoteRuns.rows;
    const read = QUOTE_COLUMNS.filter((name) => name === 'contract' || !empty.has(name));
    const columns = new Map(read.map((name) => [name, new Float64Array(room + rows).subarray(room)]));
    const none = empty.size === 0 ? undefined : new Float64Array(room + rows).fill(Number.NaN);
    quoteRuns.read(
      read.map((name) => [name === 'contract' ? 'key' : name, columns.get(name)!] as const),
      0,
    );
    const all = QUOTE_COLUMNS.map((name) => columns.get(name) ?? none!.subarray(room));
    const quotes = inSessionOrder(numbered(all, known, QUOTE_COLUMNS));
    const interestRuns = partRuns(interestParts, kept, order);
    const interest = ['key', 'day', 'open_interest', 'published_at'].map(
      () => new Float64Array(interestRuns.rows),
    );
    interestRuns.read(
      ['key', 'day', 'open_interest', 'published_at'].map((name, c) => [name, interest[c]!] as const),
      0,
    );
    return { known, quotes, interest: numbered(interest, known, INTEREST_NAMES), room, none };
  } catch {
    return undefined; // read through DuckDB instead
  }
}

/**
 * The carried rows `carried` and the block's rows read from files, as one set of columns: the carried
 * rows written into the room left before the block's rows (a copy of the block would cost a fresh array a
 * column). The two copied together when the room does not hold them, or the block's rows were reordered.
 */
function withCarried(carried: QuoteColumns, block: FileBlock): QuoteColumns {
  const count = carried.contract.length;
  const { quotes, room, none } = block;
  const roomy = (column: Float64Array) => column.byteOffset === room * 8 && count <= room;
  if (!QUOTE_COLUMNS.every((name) => roomy(quotes[name])))
    return concatenated([carried, quotes], QUOTE_COLUMNS);
  const rows = quotes.contract.length;
  const out = {} as Record<(typeof QUOTE_COLUMNS)[number], Float64Array>;
  for (const name of QUOTE_COLUMNS) {
    let whole = new Float64Array(quotes[name].buffer, 0, room + rows);
    // The empty columns share one NaN column: a carried row with a value there gets a column of its own.
    if (
      none !== undefined &&
      whole.buffer === none.buffer &&
      carried[name].some((value) => !Number.isNaN(value))
    ) {
      whole = new Float64Array(room + rows).fill(Number.NaN);
    }
    whole.set(carried[name], room - count);
    out[name] = whole.subarray(room - count, room + rows);
  }
  return out;
}

/** The bytes of the buffers under `arrays`, each counted once however many views share it. */
function distinctBytes(arrays: readonly Float64Array[]): number {
  const buffers = new Set(arrays.map((array) => array.buffer));
  let bytes = 0;
  for (const buffer of buffers) bytes += buffer.byteLength;
  return bytes;
}

/**
 * The block's sessions `first`…`last` in consecutive slices of about `sliceRows` rows at
 * `rowsPerSession`, each read by a query of its own (one slice when the density is not known).
 */
function sessionSlices(
  first: string,
  last: string,
  rowsPerSession: number | undefined,
  sliceRows = SLICE_ROWS,
): { first: string; last: string }[] {
  if (rowsPerSession === undefined) return [{ first, last }];
  const size = Math.max(1, Math.floor(sliceRows / Math.max(1, rowsPerSession)));
  const slices: { first: string; last: string }[] = [];
  let start: string | undefined = first;
  while (start !== undefined && start <= last) {
    let end = start;
    for (let i = 1; i < size; i++) {
      const next = tryNextSession(end);
      if (next === undefined || next > last) break;
      end = next;
    }
    slices.push({ first: start, last: end });
    start = tryNextSession(end);
  }
  return slices;
}
