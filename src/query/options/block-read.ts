/**
 * Reading a block: a scope's snapshots and open interest of a range of sessions, in slices, numbered to
 * the block's contracts, put in order and indexed, with each contract's latest rows from before the block
 * carried in (`carriedRows`) so that a current as-of can be answered from the block alone.
 */
import { previousSession } from '../../market-time/index.js';
import type { SqlSession } from '../../store/sql.js';
import {
  concatenated,
  countingOrder,
  INTEREST_NAMES,
  type InterestColumns,
  inSessionOrder,
  interestColumns,
  QUOTE_COLUMNS,
  type QuoteColumns,
  type SessionRange,
  sessionRanges,
} from './block-columns.js';
import { type ContractTerms, contractIndex, numbered, type ScopeContracts } from './block-contracts.js';
import { interestColumnsSql, quoteColumnsSql, withEmpty } from './block-sql.js';
import type { Contract } from './contract-table.js';
import { dayNumberOfIso, isoDateOfDay, sessionCount, tryNextSession } from './days.js';
import { contractSymbolsSql, type ExpirationWindow } from './expiration-window.js';
import type { Scope } from './scope.js';
import { latestByKey, latestRows, partRuns, type SymbolOrder, symbolOrder } from './session-file-rows.js';

/**
 * A scope's snapshots of a range of sessions: the contracts once, the rows as numeric columns ordered by
 * session, contract and quote time (strings are what make reading rows slow), open interest per contract.
 */
export type Block = {
  readonly first: string;
  readonly last: string;
  /** The expiration dates it holds (a one-date loop's, `expiration-window.ts`); undefined: every date. */
  readonly window: ExpirationWindow | undefined;
  readonly contracts: readonly Contract[];
  readonly quotes: QuoteColumns;
  readonly sessions: ReadonlyMap<string, SessionRange>;
  /** Per contract index, its rows (in session, then quote time order): `byContract[offsets[id]…offsets[id+1])`. */
  readonly offsets: Int32Array;
  readonly byContract: Int32Array;
  /** Contract indices in expiration order, and their expirations: the contracts alive at a session are a suffix. */
  readonly byExpiration: Int32Array;
  readonly expirations: readonly string[];
  /** Per contract index: its first traded session as a day number. */
  readonly firstTradedDay: Float64Array;
  /** Per contract index: its terms as numbers (what an answer's columns gather). */
  readonly terms: ContractTerms;
  /** Per contract index: its open interest rows in settled-session order. */
  readonly interest: InterestColumns;
  /**
   * Per contract index, 1 when the block holds its latest snapshot (open interest) from before the block
   * too, found by looking back to its first traded session: then it has no older one than the block holds.
   */
  readonly carriedQuotes: Uint8Array | undefined;
  readonly carriedInterest: Uint8Array | undefined;
  /** About how many bytes the block holds (what the session cache counts). */
  readonly bytes: number;
};

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

/** What a loop's block carries from before its first session (see `carriedRows`). */
type Carried = {
  readonly quotes: QuoteColumns;
  readonly interest: Record<'contract' | 'settled' | 'openInterest' | 'publishedAt', Float64Array>;
  readonly quoteSearched: Uint8Array;
  readonly interestSearched: Uint8Array;
};

/**
 * For the contracts of a block listed before its first session and not quoted on it (or with no open
 * interest settled the session before), each one's latest snapshot and open interest before the block:
 * from the loop's previous block when it reaches the session before this one's first and knows the
 * contract's history (its rows, its own carried row), else one query each over the sessions since the
 * earliest of the rest was first traded. Undefined when no contract lacks them, or when that query would
 * look back over more than `mostSessions` sessions.
 */
async function carriedRows(
  sql: SqlSession,
  scope: Exclude<Scope, { optionSymbol: string }>,
  first: string,
  known: ScopeContracts,
  /** The block's first slice of quotes (its first sessions' rows), if any. */
  firstQuotes: QuoteColumns | undefined,
  interestParts: readonly Record<'contract' | 'settled', Float64Array>[],
  previous: Block | undefined,
  mostSessions?: number,
): Promise<Carried | undefined> {
  const count = known.contracts.length;
  const firstDay = dayNumberOfIso(first);
  const oiFirst = previousSession(first);
  const oiFirstDay = dayNumberOfIso(oiFirst);
  const quoted = firstQuotes === undefined ? new Uint8Array(count) : quotedOn(firstQuotes, firstDay, count);
  const settled = new Uint8Array(count);
  for (const part of interestParts) markSettledOn(part, oiFirstDay, settled);
  const quoteSearched = new Uint8Array(count);
  const interestSearched = new Uint8Array(count);
  const symbols: string[] = [];
  let since = Number.POSITIVE_INFINITY;
  const reaches = previous !== undefined && previous.first < first && previousSession(first) <= previous.last;
  const held = reaches ? heldHistory(previous!, firstDay, oiFirstDay) : undefined;
  const quoteRows: [id: number, row: number][] = [];
  const interestRows: [id: number, row: number][] = [];
  let searched = 0;
  for (let id = 0; id < count; id++) {
    const firstTraded = known.firstTradedDay[id]!;
    const needsQuote = firstTraded < firstDay && !quoted[id];
    // Open interest may be settled the session before a contract's first traded session (a vendor that
    // files each session's open interest as of the session before, as Lean's universes do): a contract
    // traded before the block may have some settled before the block's open interest starts.
    const needsInterest = firstTraded < firstDay && !settled[id];
    if (!needsQuote && !needsInterest) continue;
    quoteSearched[id] = 1;
    interestSearched[id] = 1;
    searched++;
    const symbol = known.contracts[id]!.option_symbol;
    const fromPrevious = held?.(symbol);
    if (fromPrevious !== undefined) {
      if (fromPrevious.quote !== -1) quoteRows.push([id, fromPrevious.quote]);
      if (fromPrevious.interest !== -1) interestRows.push([id, fromPrevious.interest]);
      continue;
    }
    symbols.push(symbol);
    if (firstTraded < since) since = firstTraded;
  }
  if (searched === 0) return undefined;
  const quotesHeld = copiedQuotes(previous, quoteRows);
  const interestHeld = copiedInterest(previous, interestRows);
  if (symbols.length === 0) {
    return { quotes: quotesHeld, interest: interestHeld, quoteSearched, interestSearched };
  }
  const from = isoDateOfDay(since);
  // Too long a search through DuckDB (a contract listed years ago and never quoted since): the block
  // carries nothing, and the answers that would need it go to the query.
  if (
    mostSessions !== undefined &&
    sessionCount(from, first) > mostSessions &&
    !lookBackInFiles(sql, scope.underlying, known, from, first)
  ) {
    return undefined;
  }
  const before = previousSession(first);
  const { underlying } = scope;
  const quotesFound = await latestRowsBefore(
    sql,
    underlying,
    known,
    symbols,
    from,
    before,
    quoteLookBack(known),
  );
  // From the session before the earliest first traded session (see needsInterest above).
  const oiFrom = previousSession(from);
  const oiBefore = previousSession(oiFirst);
  const interestFound = await latestRowsBefore(
    sql,
    underlying,
    known,
    symbols,
    oiFrom,
    oiBefore,
    interestLookBack(known),
  );
  return {
    quotes: concatenated([quotesHeld, ...quotesFound], QUOTE_COLUMNS),
    interest: concatenated([interestHeld, ...interestFound], INTEREST_NAMES),
    quoteSearched,
    interestSearched,
  };
}

/**
 * Whether the look back for carried rows before `first`, from `from` on, reads session column files
 * (`latestFromFiles`) for both tables: it then costs the few sessions that hold the rows it finds (the
 * files say which), however long its span, where a scan through DuckDB reads every row of the span.
 */
export function lookBackInFiles(
  sql: SqlSession,
  underlying: string,
  known: ScopeContracts,
  from: string,
  first: string,
): boolean {
  if (known.keys === undefined) return false;
  const before = previousSession(first);
  return (
    sql.sessionColumns('option_quotes', { underlying }, { first: from, last: before }) !== undefined &&
    sql.sessionColumns(
      'open_interest',
      { underlying },
      { first: previousSession(from), last: previousSession(before) },
    ) !== undefined
  );
}

/** Sessions the first step of a look back for carried rows covers (`latestRowsBefore`). */
export const CARRY_FIRST_STEP_SESSIONS = 20;
/** How many times longer each next step of the look back is than the one before. */
const CARRY_STEP_GROWTH = 4;

/** One table's look back: its rows' columns (of `alias`), its session column, its latest-first order. */
export type LookBack<N extends readonly string[]> = {
  readonly table: 'option_quotes' | 'open_interest';
  readonly alias: 'q' | 'o';
  readonly select: string;
  readonly session: string;
  readonly latestFirst: string;
  readonly names: N;
  /** Per name, the session column file's column it is read from (`day`: the row's session). */
  readonly fileColumns: { readonly [K in N[number]]: string };
};

/** The look back for contracts' latest snapshots (`latestRowsBefore`). */
export function quoteLookBack(known: ScopeContracts): LookBack<typeof QUOTE_COLUMNS> {
  return {
    table: 'option_quotes',
    alias: 'q',
    select: quoteColumnsSql(known.keys),
    session: 'session_date',
    latestFirst: 'q.session_date DESC, q.quote_time DESC',
    names: QUOTE_COLUMNS,
    fileColumns: Object.fromEntries(
      QUOTE_COLUMNS.map((name) => [name, name === 'contract' ? 'key' : name]),
    ) as LookBack<typeof QUOTE_COLUMNS>['fileColumns'],
  };
}

/** The look back for contracts' latest open interest (`latestRowsBefore`). */
function interestLookBack(known: ScopeContracts): LookBack<typeof INTEREST_NAMES> {
  return {
    table: 'open_interest',
    alias: 'o',
    select: interestColumnsSql(known.keys),
    session: 'settled_session',
    latestFirst: 'o.settled_session DESC',
    names: INTEREST_NAMES,
    fileColumns: {
      contract: 'key',
      settled: 'day',
      openInterest: 'open_interest',
      publishedAt: 'published_at',
    },
  };
}

/**
 * Each of `symbols`' latest row of `table` in the sessions `from`…`before`, as numbered parts: searched
 * newest first, in steps that grow from `CARRY_FIRST_STEP_SESSIONS` sessions, each for the symbols no later
 * step found. A scan costs what it reads, and one scan from the earliest first traded session read years of
 * the chain for rows that were often weeks old: on the 26 M-row bench store, a 2019 SPY loop's look backs
 * took 1.25 s in one scan each and 0.75 s in steps (answers identical), where contracts last quoted at the
 * year before's end are found by the first steps and only those never quoted since their first year are
 * looked for over the whole span, in a few statements more.
 */
export async function latestRowsBefore<const N extends readonly string[]>(
  sql: SqlSession,
  underlying: string,
  known: ScopeContracts,
  symbols: readonly string[],
  from: string,
  before: string,
  lookBack: LookBack<N>,
): Promise<Record<N[number], Float64Array>[]> {
  const fromFiles = latestFromFiles(sql, underlying, known, symbols, from, before, lookBack);
  if (fromFiles !== undefined) return [fromFiles];
  const parts: Record<N[number], Float64Array>[] = [];
  const left = new Set(symbols);
  let last = before;
  let size = CARRY_FIRST_STEP_SESSIONS;
  while (left.size > 0 && last >= from) {
    let start = last;
    for (let i = 1; i < size && start > from; i++) start = previousSession(start);
    if (start < from) start = from;
    const source = await sql.from(lookBack.table, { underlying }, { first: start, last });
    const a = lookBack.alias;
    const read = await sql.typedColumns(
      `SELECT ${lookBack.select}
       FROM ${source} ${a}
       WHERE ${a}.underlying = $underlying
         AND ${a}.${lookBack.session} BETWEEN CAST($from AS DATE) AND CAST($before AS DATE)
         AND ${a}.option_symbol IN (SELECT unnest(string_split($symbols, ',')))
       QUALIFY row_number() OVER (PARTITION BY ${a}.option_symbol ORDER BY ${lookBack.latestFirst}) = 1`,
      { underlying, from: start, before: last, symbols: [...left].join(',') },
    );
    const part = numbered(read.columns, known, lookBack.names) as Record<N[number], Float64Array> & {
      contract: Float64Array;
    };
    for (const id of part.contract) left.delete(known.contracts[id]!.option_symbol);
    parts.push(part);
    if (start <= from) break;
    last = previousSession(start);
    size *= CARRY_STEP_GROWTH;
  }
  return parts;
}

/**
 * `latestRowsBefore` from the session column files, when every session of `from`…`before` has them: the
 * sessions walked newest first, each symbol's key looked for until every one is found (no steps: a
 * session read costs its keys, not a scan). Undefined when they are to be read through DuckDB.
 */
function latestFromFiles<const N extends readonly string[]>(
  sql: SqlSession,
  underlying: string,
  known: ScopeContracts,
  symbols: readonly string[],
  from: string,
  before: string,
  lookBack: LookBack<N>,
): Record<N[number], Float64Array> | undefined {
  const index = known.keys;
  if (index === undefined || from > before) return undefined;
  const parts = sql.sessionColumns(lookBack.table, { underlying }, { first: from, last: before });
  if (parts === undefined) return undefined;
  const wanted = new Set<number>();
  const ids: number[] = [];
  for (const symbol of symbols) {
    const id = contractIndex(known.contracts, symbol);
    if (id === -1) continue;
    wanted.add(index.hashOf[id]!);
    ids.push(id);
  }
  // The wanted contracts' rows found by halves in sessions in symbol order (a date's unquoted few).
  const order = known.order === undefined ? undefined : wantedOrder(known.order, index.hashOf, ids);
  const names = lookBack.names as readonly N[number][];
  const read = names.filter(
    (name) => lookBack.fileColumns[name] !== 'key' && lookBack.fileColumns[name] !== 'day',
  );
  try {
    const rows = latestByKey(
      parts,
      wanted,
      read.map((name) => lookBack.fileColumns[name]),
      order,
    );
    const columns = new Map(read.map((name, c) => [name, rows.values[c]!]));
    const out = {} as Record<N[number], Float64Array>;
    for (const name of names) {
      const column = lookBack.fileColumns[name];
      out[name] =
        column === 'key'
          ? rows.keys.map((key) => index.get(key) ?? -1)
          : column === 'day'
            ? rows.days
            : columns.get(name)!;
    }
    return out;
  } catch {
    return undefined; // read through DuckDB instead
  }
}

/** The `SymbolOrder` of some of a block's contracts (`ids`, whose keys are `hashOf[id]`). */
function wantedOrder(
  order: SymbolOrder,
  hashOf: Float64Array,
  ids: readonly number[],
): SymbolOrder | undefined {
  const numbers: [number, number][] = [];
  for (const id of ids) {
    const number = order.numberOf(hashOf[id]!);
    if (number === undefined) return undefined;
    numbers.push([number, number + 1]);
  }
  return symbolOrder(order.numberOf, numbers);
}

/** Per contract: 1 if it has a row on `day`, the day of the block's first rows. */
function quotedOn(quotes: QuoteColumns, day: number, count: number): Uint8Array {
  const quoted = new Uint8Array(count);
  for (let i = 0; i < quotes.day.length && quotes.day[i] === day; i++) quoted[quotes.contract[i]!] = 1;
  return quoted;
}

/** Sets `settled[id]` for each contract with an open interest row of `part` settled on `day`. */
function markSettledOn(
  part: Record<'contract' | 'settled', Float64Array>,
  day: number,
  settled: Uint8Array,
): void {
  for (let i = 0; i < part.contract.length; i++) if (part.settled[i] === day) settled[part.contract[i]!] = 1;
}

/**
 * What a loop's previous block knows of a contract's history before a session (`day`; open interest
 * settled before `oiDay`): its latest row there (-1: none), or undefined when the block cannot tell (the
 * contract may have older rows than the block holds).
 */
function heldHistory(
  previous: Block,
  day: number,
  oiDay: number,
): (symbol: string) => { quote: number; interest: number } | undefined {
  const firstDay = dayNumberOfIso(previous.first);
  const oiFloorDay = dayNumberOfIso(previousSession(previous.first));
  return (symbol) => {
    const id = contractIndex(previous.contracts, symbol);
    if (id === -1) return undefined;
    let quote = -1;
    for (let k = previous.offsets[id + 1]! - 1; k >= previous.offsets[id]!; k--) {
      const row = previous.byContract[k]!;
      if (previous.quotes.day[row]! < day) {
        quote = row;
        break;
      }
    }
    const firstTraded = previous.firstTradedDay[id]!;
    if (quote === -1 && !previous.carriedQuotes?.[id] && firstTraded < firstDay) return undefined;
    const { offsets, settledDay } = previous.interest;
    let interest = -1;
    for (let k = offsets[id + 1]! - 1; k >= offsets[id]!; k--) {
      if (settledDay[k]! < oiDay) {
        interest = k;
        break;
      }
    }
    if (interest === -1 && !previous.carriedInterest?.[id] && firstTraded < oiFloorDay) return undefined;
    return { quote, interest };
  };
}

/** Rows of the previous block's quotes, numbered as the new block's contracts. */
function copiedQuotes(previous: Block | undefined, rows: readonly [number, number][]): QuoteColumns {
  const out = {} as Record<string, Float64Array>;
  for (const name of QUOTE_COLUMNS) {
    out[name] = Float64Array.from(rows, ([id, row]) =>
      name === 'contract' ? id : previous!.quotes[name][row]!,
    );
  }
  return out as QuoteColumns;
}

/** Open interest rows of the previous block, numbered as the new block's contracts. */
function copiedInterest(
  previous: Block | undefined,
  rows: readonly [number, number][],
): Record<(typeof INTEREST_NAMES)[number], Float64Array> {
  const interest = previous?.interest;
  const pick = (column: 'settledDay' | 'openInterest' | 'publishedAt') =>
    Float64Array.from(rows, ([, row]) => interest![column][row]!);
  return {
    contract: Float64Array.from(rows, ([id]) => id),
    settled: pick('settledDay'),
    openInterest: pick('openInterest'),
    publishedAt: pick('publishedAt'),
  };
}
