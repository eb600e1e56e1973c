/**
 * Read-ahead for session loops. A backtest asks one scope (an underlying's chain) at consecutive
 * sessions; a cold Parquet query per session costs tens of milliseconds, while one range scan of the
 * sessions ahead costs about as much as one. Once a scope is asked at a later session than before, the
 * rows of a block of sessions around it are read once and kept in the store's cache; every as-of whose
 * answer the block holds whole is then answered from memory, by the same rules as `snapshot-sql.ts`.
 * Whatever the block cannot prove complete (a contract whose last snapshot may be older than the block)
 * falls back to the query.
 */
import { nextSession, previousSession } from '../../market-time/index.js';
import { type AsOf, asOfSession, lastSessionOf } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import { quoteLiteral, type SqlSession } from '../../store/sql.js';
import { dayNumberOfIso, isoDateOfDay } from './days.js';
import {
  contractSymbolsSql,
  type ExpirationNeed,
  type ExpirationWindow,
  nextWindow,
  WINDOW_AHEAD_SESSIONS,
  WINDOW_SESSION_ROWS,
  windowHolds,
} from './expiration-window.js';
import { KeyIndex } from './key-index.js';
import { chainOf, type Scope } from './scope.js';
import { type RowSource, rowSource, type SnapshotRow } from './snapshot-sql.js';

/** Sessions a block keeps before the session that started it (a current answer may reach back). */
const LOOKBACK_SESSIONS = 5;
/** Sessions the first block of a loop reads past the session that started it. */
const FIRST_AHEAD_SESSIONS = 30;
/** Rows a block may hold (16 numbers each, about 130 bytes a row with the open interest). */
const ROW_BUDGET = 300_000;
/** Rows the first block of a loop may hold: a dense chain (thousands of contracts) reads fewer sessions. */
const FIRST_ROW_BUDGET = 100_000;
/** How much larger each next block of a loop may be than the last, and the most sessions one reads. */
const GROWTH = 4;
const MAX_AHEAD_SESSIONS = 1_000;
/** Rows a block of an announced loop may hold (about 70 MB at its widest: the loop within 512 MB). */
const ANNOUNCED_ROW_BUDGET = 500_000;
/** Where the store's cache keeps an announced loop's period. */
const SESSION_LOOP_KEY = 'read-ahead|announced-loop';
type SessionLoop = { from?: string; to?: string };
/** How far past the last asked session a request still counts as the loop going on. */
const LOOP_STRIDE_SESSIONS = 10;
/** How many forward steps in a row make a loop (random requests at a server take one now and then). */
const LOOP_STEPS = 2;

/** One session's rows of a block: the half-open range of row indices. */
type SessionRange = { readonly start: number; readonly end: number };

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

/** The snapshot columns of a block, one Float64Array each (NULL as NaN), in `QUOTE_COLUMNS` order. */
export type QuoteColumns = Record<(typeof QUOTE_COLUMNS)[number], Float64Array>;

/**
 * A scope's snapshots of a range of sessions: the contracts once, the rows as numeric columns ordered by
 * session, contract and quote time (strings are what make reading rows slow), open interest per contract.
 */
type Block = {
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

/** The contracts of a block: numbered in symbol order, with their order by expiration. */
type ScopeContracts = {
  /** In symbol order (a symbol's number is found by halves). */
  readonly contracts: readonly Contract[];
  /**
   * The contracts' numbers by a 53-bit hash of their symbols, which DuckDB hands over as numbers (its
   * strings cost more to read than the rest of a session's columns); undefined when two contracts of the
   * underlying share a hash, and rows are then matched by their symbols.
   */
  readonly keys: ContractKeys | undefined;
  readonly byExpiration: Int32Array;
  readonly expirations: readonly string[];
  /** Per contract: its first traded session as a day number (a loop compares it for every contract). */
  readonly firstTradedDay: Float64Array;
  readonly bytes: number;
};

/**
 * A block's contract numbers by the hashes of their symbols: `get` for any hash, and each number's hash
 * (`hashOf`), with which a row is matched by one comparison when it names the contract after the previous
 * row's (rows come in symbol order within a session, and contracts are numbered in symbol order).
 */
type ContractKeys = { get(key: number): number | undefined; readonly hashOf: Float64Array };

/**
 * A block's open interest as columns (a block of a year holds hundreds of thousands of rows: as objects
 * they were most of its bytes and of the loop's garbage collection). Contract `id`'s rows are
 * `offsets[id]…offsets[id+1]`, in settled-session order (one row per settled session, the table's key).
 */
export type InterestColumns = {
  readonly offsets: Int32Array;
  /** The settled session as a day number. */
  readonly settledDay: Float64Array;
  /** NULL as NaN. */
  readonly openInterest: Float64Array;
  readonly publishedAt: Float64Array;
  /** Per contract: 1 when its rows' publication instants never go back (then searched by halves). */
  readonly rising: Uint8Array;
};

/** The snapshot columns a block reads, all as DOUBLE. */
export const QUOTE_COLUMNS = [
  'contract',
  'day',
  'quote_time',
  'bid',
  'ask',
  'bid_size',
  'ask_size',
  'last',
  'volume',
  'volume_time',
  'underlying_price',
  'iv',
  'delta',
  'gamma',
  'theta',
  'vega',
] as const;

/** The key of a chain's loop state in the store's cache: one loop per chain (an underlying, or a root of it). */
const loopStateKey = (scope: Exclude<Scope, { optionSymbol: string }>) =>
  `read-ahead|${scope.underlying}|${scope.root ?? ''}`;

/** What the store's cache remembers of a scope between requests. */
type LoopState = {
  lastSession: string | undefined;
  /** The cutoff of the last current as-of: a later one in the same session is a step of an intraday loop. */
  lastCutoff: number | undefined;
  /** How many requests in a row each went forward by at most LOOP_STRIDE_SESSIONS sessions. */
  forward: number;
  block: Promise<Block> | undefined;
  /** Sessions the next block reads ahead: grows while the loop goes on, within the row budget. */
  ahead: number;
  /**
   * Whether a request has asked the whole chain since the loop's block was made: the next block then holds
   * every date (a loop that asked it once, at its start, goes back to blocks of its dates).
   */
  wholeAsked: boolean;
  /** The rows a session of the whole chain holds, as last counted (whether the loop reads some dates). */
  chainRows: number;
};

/**
 * The scope's answer rows at an as-of from a read-ahead block, or undefined when this request does not
 * look like part of a session loop, or the block cannot answer it whole (then the caller queries).
 */
export async function readAheadRows(
  sql: SqlSession,
  cache: StoreCache,
  asOf: AsOf,
  scope: Scope,
): Promise<RowSource | undefined> {
  if ('optionSymbol' in scope) {
    // One contract in a loop (a backtest marking what it holds) rides on its underlying's chain block:
    // the block answers every contract alive at the session (of its dates), so the contract's rows cost a
    // lookup. A contract the underlying does not list asks for no date: no block holds a row of it.
    const need = async () => {
      const table = await contractTable(sql, cache, scope.underlying);
      const at = indexOfContract(table, scope.optionSymbol);
      return at === -1 ? '' : isoDateOfDay(table.expirationDay[at]!);
    };
    const block = await loopBlock(sql, cache, asOf, { underlying: scope.underlying }, need);
    if (block === undefined) return undefined;
    const id = contractIndex(block.contracts, scope.optionSymbol);
    // The block holds every contract of its dates listed by its last session and not expired before its
    // first: one it does not hold has no row at any as-of the block covers.
    if (id === -1) return rowSource([]);
    return asOf.kind === 'dated' ? datedRows(block, asOf.session, id) : currentRows(block, asOf, id);
  }
  // A current chain of one date: a block of that expiration's rows of the session, once read, answers
  // every instant of the session it can prove (a minute loop, or random minutes of it).
  const oneExpiration = scope.expiration !== undefined && asOf.kind === 'current';
  const key = oneExpiration ? `read-ahead|expiration|${JSON.stringify(scope)}|${asOfSession(asOf)}` : '';
  if (oneExpiration) {
    const held = cache.heldSized<Block>(key);
    if (held !== undefined) {
      const block = await held;
      if (covers(block, asOf)) return currentRows(block, asOf as CurrentAsOf, undefined, scope.expiration);
    }
  }
  // One loop per chain, whichever of its expirations each request asks.
  const block = await loopBlock(sql, cache, asOf, chainOf(scope), scope.expiration);
  if (block !== undefined) {
    return asOf.kind === 'dated'
      ? datedRows(block, asOf.session, undefined, scope.expiration)
      : currentRows(block, asOf, undefined, scope.expiration);
  }
  if (!oneExpiration) return undefined;
  const session = asOfSession(asOf);
  const one = await cache.sized(
    key,
    async () => {
      // The session alone: a contract not quoted in it is carried from its latest snapshot before it
      // (`carriedRows`); an instant before a contract's first snapshot of the session goes to the query.
      const known = await loadContracts(sql, cache, scope, session, session);
      return loadBlock(sql, scope, session, session, known, {
        rowsPerSession: SLICE_ROWS,
        sliceRows: SLICE_ROWS,
      });
    },
    (block) => block.bytes,
  );
  return covers(one, asOf) ? currentRows(one, asOf as CurrentAsOf, undefined, scope.expiration) : undefined;
}

type CurrentAsOf = Extract<AsOf, { kind: 'current' }>;

/**
 * Rows the block of a current request outside a loop may hold (its session and the one before): sessions
 * denser than half of it (an index's chain snapshotted every minute) are left to the query.
 */
const SESSION_PAIR_ROWS = 200_000;
/**
 * Rows the search for its contracts not quoted in the two sessions may scan (`carriedRows`): a longer one
 * costs as much as the query it would spare.
 */
const SESSION_PAIR_CARRY_ROWS = 1_000_000;

/**
 * A current answer outside a session loop (a request at a random instant), from a block of the as-of's
 * session and the one before, read once and kept in the store's session cache for the session's other
 * instants. A contract's latest snapshot by the cutoff is in one of the two sessions, or is carried from
 * before them (`carriedRows`). Undefined when the block cannot prove the answer, or the sessions are too
 * dense for one: the query answers then. A whole chain at one instant by query scans its contracts' terms
 * and every snapshot before the cutoff (about half a second on a 26 M-row store).
 */
export async function sessionPairRows(
  sql: SqlSession,
  cache: StoreCache,
  asOf: CurrentAsOf,
  scope: Exclude<Scope, { optionSymbol: string }>,
): Promise<RowSource | undefined> {
  const session = asOfSession(asOf);
  const first = previousSession(session);
  const block = await cache.sized(
    `read-ahead|session-pair|${JSON.stringify(scope)}|${session}`,
    async () => {
      const quoted = await quotedKeys(sql, scope.underlying, first);
      if (quoted.length * 2 > SESSION_PAIR_ROWS) return undefined;
      const known = await loadContracts(sql, cache, scope, first, session);
      const rowsPerSession = Math.max(1, quoted.length);
      // A look back too long to make (`carriedRows`) would leave the block unable to answer: the block is
      // not read, and the query answers at no more than its own cost.
      const since = unquotedSince(known, quoted, dayNumberOfIso(first));
      if (since !== undefined && sessionCount(since, first) * rowsPerSession > SESSION_PAIR_CARRY_ROWS)
        return undefined;
      return loadBlock(sql, scope, first, session, known, {
        rowsPerSession,
        sliceRows: SESSION_PAIR_ROWS,
        carryRows: SESSION_PAIR_CARRY_ROWS,
      });
    },
    (block) => block?.bytes ?? 0,
  );
  if (block === undefined || !covers(block, asOf)) return undefined;
  return currentRows(block, asOf, undefined, scope.expiration);
}

/** Distinct sessions asked of an underlying outside loops before its whole history is read at once. */
const WHOLE_HISTORY_AFTER_SESSIONS = 8;
/** About what a block holds a quote row (its columns and index) and an open interest row. */
const QUOTE_ROW_BYTES = QUOTE_COLUMNS.length * 8 + 8;
const INTEREST_ROW_BYTES = 32;

/** What an underlying's random requests have asked, for `wholeHistoryRows`. */
type WholeHistoryState = { readonly asked: Set<string>; read: boolean };

/**
 * An answer outside a loop from a block of the underlying's whole history, read once its requests have
 * asked `WHOLE_HISTORY_AFTER_SESSIONS` distinct sessions (a server's random traffic, a notebook's
 * exploring) when the history fits in half the session cache (on the sample, SPY's two years are some
 * 50 MB): every later chain and contract of any session of it is then answered from memory, dated or at
 * any instant. Read at most once per data version: a block the cache has let go is not read again (two
 * such histories taking turns would read each other out). Undefined otherwise, or when the block cannot
 * prove the answer: the session paths and the query answer then.
 */
export async function wholeHistoryRows(
  sql: SqlSession,
  cache: StoreCache,
  asOf: AsOf,
  scope: Scope,
): Promise<RowSource | undefined> {
  if (!('optionSymbol' in scope) && scope.root !== undefined) return undefined;
  const underlying = scope.underlying;
  const key = `read-ahead|whole|${underlying}`;
  let pending = cache.heldSized<Block>(key);
  if (pending === undefined) {
    const state = cache.state<WholeHistoryState>(key, () => ({ asked: new Set(), read: false }));
    if (state.read) return undefined;
    state.asked.add(asOfSession(asOf));
    if (state.asked.size < WHOLE_HISTORY_AFTER_SESSIONS) return undefined;
    // Decided once, read or not: the manifest is not walked again on every request after.
    state.read = true;
    const quotes = sql.extent('option_quotes', { underlying });
    const interest = sql.extent('open_interest', { underlying });
    if (quotes === undefined) return undefined;
    const bytes = quotes.rows * QUOTE_ROW_BYTES + (interest?.rows ?? 0) * INTEREST_ROW_BYTES;
    if (bytes > cache.sessionCacheCapacity / 2) return undefined;
    const whole = { underlying };
    const sessions = Math.max(1, sessionCount(quotes.first, quotes.last) + 1);
    pending = cache.sized(
      key,
      () =>
        loadBlock(
          sql,
          whole,
          quotes.first,
          quotes.last,
          loadContracts(sql, cache, whole, quotes.first, quotes.last),
          {
            rowsPerSession: Math.max(1, quotes.rows / sessions),
            sliceRows: quotes.rows,
          },
        ),
      (block) => block.bytes,
    );
  }
  // Only a way to answer sooner: a history that could not be read leaves the answer to the other paths.
  const block = await pending.catch(() => undefined);
  if (block === undefined || !covers(block, asOf)) return undefined;
  let only: number | undefined;
  if ('optionSymbol' in scope) {
    only = contractIndex(block.contracts, scope.optionSymbol);
    // The block holds every contract of the history: one it does not hold has no row at any instant of it.
    if (only === -1) return rowSource([]);
  }
  const expiration = 'optionSymbol' in scope ? undefined : scope.expiration;
  return asOf.kind === 'dated'
    ? datedRows(block, asOf.session, only, expiration)
    : currentRows(block, asOf, only, expiration);
}

/** The symbol hashes (`SYMBOL_KEY`) of the underlying's quote rows of a session, one per row. */
async function quotedKeys(sql: SqlSession, underlying: string, session: string): Promise<Float64Array> {
  const quotes = await sql.from('option_quotes', { underlying }, { first: session, last: session });
  const { columns } = await sql.doubleColumns(
    `SELECT ${SYMBOL_KEY('q')} FROM ${quotes} q
     WHERE q.underlying = $underlying AND q.session_date = CAST($session AS DATE)`,
    { underlying, session },
  );
  return columns[0] ?? new Float64Array(0);
}

/**
 * Of the contracts traded before `firstDay` and not quoted on it (their hashes not among `quoted`): the
 * earliest first traded session, where the look back for their latest snapshots starts (`carriedRows`);
 * undefined when there are none, or when contracts are not named by hashes (the look back is then made).
 */
export function unquotedSince(
  known: Pick<ScopeContracts, 'firstTradedDay'> & {
    readonly keys: { readonly hashOf: Float64Array } | undefined;
  },
  quoted: Float64Array,
  firstDay: number,
): string | undefined {
  const hashOf = known.keys?.hashOf;
  if (hashOf === undefined) return undefined;
  const seen = new Set(quoted);
  let since = Number.POSITIVE_INFINITY;
  for (let id = 0; id < hashOf.length; id++) {
    const firstTraded = known.firstTradedDay[id]!;
    if (firstTraded < firstDay && firstTraded < since && !seen.has(hashOf[id]!)) since = firstTraded;
  }
  return since === Number.POSITIVE_INFINITY ? undefined : isoDateOfDay(since);
}

/**
 * The block of the scope's session loop that covers the as-of: the one held, or a new one read when the
 * request continues a forward loop past it; undefined when the request is not part of a loop.
 */
async function loopBlock(
  sql: SqlSession,
  cache: StoreCache,
  asOf: AsOf,
  scope: Exclude<Scope, { optionSymbol: string }>,
  /** The date the request asks (or how to find it: only a request of a loop looks it up). */
  asked: ExpirationNeed | (() => Promise<ExpirationNeed>),
): Promise<Block | undefined> {
  const state = cache.state<LoopState>(loopStateKey(scope), () => ({
    lastSession: undefined,
    lastCutoff: undefined,
    forward: 0,
    block: undefined,
    ahead: FIRST_AHEAD_SESSIONS,
    wholeAsked: false,
    chainRows: 0,
  }));
  const session = asOfSession(asOf);
  const previous = state.lastSession;
  state.lastSession = session;
  // Several requests at one session (a backtest's several questions at one instant) neither make nor break it.
  if (session !== previous) {
    state.forward = previous !== undefined && loopContinues(previous, session) ? state.forward + 1 : 0;
  } else if (
    asOf.kind === 'current' &&
    state.lastCutoff !== undefined &&
    asOf.cutoffSeconds > state.lastCutoff
  ) {
    // Minute by minute through one session of intraday snapshots: a loop that never changes session.
    state.forward++;
  }
  if (asOf.kind === 'current') state.lastCutoff = asOf.cutoffSeconds;
  let block = state.block === undefined ? undefined : await state.block;
  const announced = cache.state<SessionLoop>(SESSION_LOOP_KEY, () => ({}));
  const inAnnounced =
    announced.from !== undefined &&
    announced.to !== undefined &&
    session >= announced.from &&
    session <= announced.to;
  if (block === undefined && !inAnnounced && state.forward < LOOP_STEPS) return undefined;
  const need = typeof asked === 'function' ? await asked() : asked;
  if (need === undefined) state.wholeAsked = true;
  if (block !== undefined && covers(block, asOf) && windowHolds(block.window, need, session)) return block;
  /** Rows a session of the scope holds, about: how many sessions one query of the block reads. */
  let density: number;
  let span: { lookback: number; ahead: number };
  /** Rows one query of the block reads. */
  let sliceRows = SLICE_ROWS;
  if (inAnnounced) {
    // A loop announced by its caller (a backtest over a period): one scan reads the rest of the period
    // at once, as far as the announced budget holds at this session's density.
    const rows = await sessionRows(sql, scope.underlying, session);
    density = rows;
    state.chainRows = rows;
    const left = sessionCount(session, announced.to!);
    span = blockSpan(left, Math.floor(ANNOUNCED_ROW_BUDGET / Math.max(1, rows)));
    // In one query: slices cost a statement each and re-read the row groups they share, and an
    // announced block is read once.
    sliceRows = ANNOUNCED_ROW_BUDGET;
  } else if (state.forward < LOOP_STEPS) {
    // Random requests go forward now and then; a loop goes forward every time. Until it has, each request
    // is answered on its own (a dated one from its session's rows).
    return undefined;
  } else if (block === undefined) {
    // The first block: as many sessions as the first budget holds at this session's density.
    const rows = await sessionRows(sql, scope.underlying, session);
    density = rows;
    state.chainRows = rows;
    span = blockSpan(FIRST_AHEAD_SESSIONS, Math.floor(FIRST_ROW_BUDGET / Math.max(1, rows)));
  } else {
    // The loop outran a block: read further ahead next time, as far as the row budget allows.
    const rowsPerSession = Math.max(1, block.quotes.day.length / Math.max(1, block.sessions.size));
    density = rowsPerSession;
    if (block.window === undefined) state.chainRows = rowsPerSession;
    span = blockSpan(
      Math.min(Math.max(1, state.ahead) * GROWTH, MAX_AHEAD_SESSIONS),
      Math.floor(ROW_BUDGET / rowsPerSession),
    );
  }
  // A whole chain's block if a request asked the whole chain since the last block, this one included
  // (another request of the loop may have made a block, and cleared the flag, while this one read the
  // session's density), or if the chain is sparse: its whole block reaches far in a few statements. A
  // block of some dates reads a bounded span ahead, as its window grows with it.
  const whole =
    state.wholeAsked || need === undefined || state.chainRows < (cache.loopWindowRows ?? WINDOW_SESSION_ROWS);
  state.wholeAsked = false;
  state.ahead = whole ? span.ahead : Math.min(span.ahead, WINDOW_AHEAD_SESSIONS);
  let first = session;
  for (let i = 0; i < span.lookback; i++) first = previousSession(first);
  let last = session;
  for (let i = 0; i < state.ahead; i++) {
    const next = tryNextSession(last);
    if (next === undefined) break; // the calendar's end
    last = next;
  }
  const window = whole ? undefined : nextWindow(block?.window, need as string, session, last);
  const pending = loadBlock(
    sql,
    scope,
    first,
    last,
    loadContracts(sql, cache, scope, first, last, window),
    { rowsPerSession: density, sliceRows, previous: block },
    window,
  );
  state.block = pending;
  pending.catch(() => {
    if (state.block === pending) state.block = undefined;
  });
  block = await pending;
  return covers(block, asOf) && windowHolds(block.window, need, session) ? block : undefined;
}

/**
 * The dates the loop block of a chain holds now: a window, undefined for every date, or null when the
 * chain has no loop block (what a loop reads, for its tests and diagnostics).
 */
export async function loopBlockDates(
  cache: StoreCache,
  scope: Exclude<Scope, { optionSymbol: string }>,
): Promise<ExpirationWindow | undefined | null> {
  const state = cache.heldState<LoopState>(loopStateKey(scope));
  const block = state?.block === undefined ? undefined : await state.block.catch(() => undefined);
  return block === undefined ? null : block.window;
}

/**
 * The sessions a block reads before and after the one asked: at most `most` ahead, and `fit` sessions'
 * rows within the row budget. A sparse chain reads the lookback and at least as many sessions ahead; a
 * dense one (an intraday store quotes a chain every minute: a hundred thousand rows a session) reads the
 * session before (the latest rows before a session's first snapshot) and only what the budget holds
 * ahead: contracts not quoted in the session before are carried by `carriedRows`.
 */
function blockSpan(most: number, fit: number): { lookback: number; ahead: number } {
  if (fit > LOOKBACK_SESSIONS) {
    return { lookback: LOOKBACK_SESSIONS, ahead: Math.max(Math.min(most, fit), LOOKBACK_SESSIONS + 1) };
  }
  return { lookback: 1, ahead: Math.max(0, Math.min(most, fit - 2)) };
}

/** A contract's number in a block (contracts are in symbol order), or -1. */
function contractIndex(contracts: readonly Contract[], optionSymbol: string): number {
  return indexInOrder(contracts.length, (i) => contracts[i]!.option_symbol, optionSymbol);
}

/** The index of `symbol` among `count` symbols in ascending order, each read by `at`, or -1. */
function indexInOrder(count: number, at: (index: number) => string, symbol: string): number {
  const low = firstNot(0, count, (i) => at(i) < symbol);
  return low < count && at(low) === symbol ? low : -1;
}

/** The rows an underlying has on one session: how dense its blocks are. */
async function sessionRows(sql: SqlSession, underlying: string, session: string): Promise<number> {
  const quotes = await sql.from('option_quotes', { underlying }, { first: session, last: session });
  const rows = await sql.value<number>(
    `SELECT count(*) FROM ${quotes} q WHERE underlying = $underlying AND session_date = CAST($session AS DATE)`,
    { underlying, session },
  );
  return Number(rows);
}

/** Sessions after `from` up to `to` (0 when `to` is not after it). */
function sessionCount(from: string, to: string): number {
  let count = 0;
  for (let at = tryNextSession(from); at !== undefined && at <= to; at = tryNextSession(at)) count++;
  return count;
}

/**
 * Tells the store's read-ahead that a session loop will ask about the sessions `from`…`to` (a backtest's
 * period): the first request inside it reads the rest of the period in one scan, instead of proving a
 * loop first and then growing blocks.
 */
export function announceSessionLoop(cache: StoreCache, from: string, to: string): void {
  const loop = cache.state<SessionLoop>(SESSION_LOOP_KEY, () => ({}));
  loop.from = from;
  loop.to = to;
}

/** Whether a request at `session` after one at `previous` continues a forward session loop. */
function loopContinues(previous: string, session: string): boolean {
  if (session <= previous) return false;
  let at = previous;
  for (let i = 0; i < LOOP_STRIDE_SESSIONS; i++) {
    at = nextSession(at);
    if (at >= session) return true;
  }
  return false;
}

/** Whether every row an as-of may use lies in the block's sessions (older ones are checked later). */
function covers(block: Block, asOf: AsOf): boolean {
  if (asOf.kind === 'dated') return asOf.session >= block.first && asOf.session <= block.last;
  const through = lastSessionOf(asOf);
  const after = tryNextSession(block.last);
  return through >= block.first && (after === undefined || through < after);
}

/**
 * An underlying's contracts, read once per data version into compact columns in symbol order (an
 * underlying lists a hundred thousand contracts over the years; a block needs the few thousand alive in
 * its sessions, made into objects from here).
 */
export type ContractTable = {
  readonly underlying: string;
  readonly symbols: readonly string[];
  /** Per contract: its root's index in `roots`. */
  readonly root: Uint16Array;
  readonly roots: readonly string[];
  readonly expirationDay: Float64Array;
  readonly expirationTime: Float64Array;
  readonly strike: Float64Array;
  readonly firstTradedDay: Float64Array;
  /** Bits: call, AM-settled, monthly, weekly, quarterly, nonstandard. */
  readonly flags: Float64Array;
  /** Contract index by the 53-bit hash of its symbol; undefined when two symbols share one. */
  readonly keys: KeyIndex | undefined;
  /** Per contract: the 53-bit hash of its symbol. */
  readonly hashes: Float64Array;
  readonly bytes: number;
};

const CALL = 1;
const AM = 2;
const MONTHLY = 4;
const WEEKLY = 8;
const QUARTERLY = 16;
const NONSTANDARD = 32;
/** The bits of `ContractTable.flags`, by name. */
export const CONTRACT_FLAGS = {
  call: CALL,
  am: AM,
  monthly: MONTHLY,
  weekly: WEEKLY,
  quarterly: QUARTERLY,
  nonstandard: NONSTANDARD,
} as const;

/** Contract `symbol`'s index in the table (its symbols are sorted), or -1. */
export function indexOfContract(table: ContractTable, symbol: string): number {
  const { symbols } = table;
  return indexInOrder(symbols.length, (i) => symbols[i]!, symbol);
}

/** Contract `index` of an underlying's contract table, its flags and day numbers made into its terms. */
export function contractAt(table: ContractTable, index: number): Contract {
  const flags = table.flags[index]!;
  return {
    option_symbol: table.symbols[index]!,
    underlying: table.underlying,
    root: table.roots[table.root[index]!]!,
    expiration: isoDateOfDay(table.expirationDay[index]!),
    expiration_time: table.expirationTime[index]!,
    side: flags & CALL ? 'call' : 'put',
    strike: table.strike[index]!,
    settlement: flags & AM ? 'AM' : 'PM',
    monthly: (flags & MONTHLY) !== 0,
    weekly: (flags & WEEKLY) !== 0,
    quarterly: (flags & QUARTERLY) !== 0,
    nonstandard: (flags & NONSTANDARD) !== 0,
    first_traded: isoDateOfDay(table.firstTradedDay[index]!),
  };
}

/** Puts a read's rows in the order of its first column (symbols), unless they already are. */
export function inSymbolOrder(columns: (Float64Array | (string | null)[])[]): void {
  const symbols = (columns[0] ?? []) as string[];
  let sorted = true;
  for (let i = 1; i < symbols.length && sorted; i++) sorted = symbols[i - 1]! < symbols[i]!;
  if (sorted) return;
  const order = Int32Array.from(symbols.keys()).sort((a, b) =>
    symbols[a]! < symbols[b]! ? -1 : symbols[a]! > symbols[b]! ? 1 : 0,
  );
  for (const [c, column] of columns.entries()) {
    columns[c] =
      column instanceof Float64Array
        ? Float64Array.from(order, (i) => column[i]!)
        : Array.from(order, (i) => column[i] ?? null);
  }
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

async function readContractTable(sql: SqlSession, underlying: string): Promise<ContractTable> {
  const from = await sql.from('contracts', { underlying });
  const day = dayNumberSql;
  const flag = (condition: string, bit: number) => `CASE WHEN ${condition} THEN ${bit} ELSE 0 END`;
  const { columns } = await sql.typedColumns(
    `SELECT ${SYMBOL_PIECES.map((piece) => piece('option_symbol')).join(', ')}, root, ${day('expiration')}, CAST(epoch_ms(expiration_time) / 1000 AS DOUBLE),
       CAST(strike AS DOUBLE), ${day('first_traded')},
       CAST(${[
         flag("side = 'call'", CALL),
         flag("settlement = 'AM'", AM),
         flag('monthly', MONTHLY),
         flag('weekly', WEEKLY),
         flag('quarterly', QUARTERLY),
         flag('nonstandard', NONSTANDARD),
       ].join(' + ')} AS DOUBLE),
       ${SYMBOL_KEY('c')}
     FROM ${from} c WHERE c.underlying = $underlying`,
    { underlying },
  );
  const read = [joinedPieces(columns.splice(0, SYMBOL_PIECES.length) as string[][]), ...columns];
  // In symbol order: the files are written so, and sorting here costs less than DuckDB's ORDER BY of the text.
  inSymbolOrder(read);
  const symbols = (read[0] ?? []) as string[];
  const rootTexts = (read[1] ?? []) as string[];
  const [expirationDay, expirationTime, strike, firstTradedDay, flags, hashes] = read
    .slice(2)
    .map((column) => column as Float64Array);
  const roots: string[] = [];
  const rootIndex = new Map<string, number>();
  const root = new Uint16Array(symbols.length);
  rootTexts.forEach((text, i) => {
    let index = rootIndex.get(text);
    if (index === undefined) {
      index = roots.push(text) - 1;
      rootIndex.set(text, index);
    }
    root[i] = index;
  });
  return {
    underlying,
    symbols,
    root,
    roots,
    expirationDay: expirationDay ?? new Float64Array(0),
    expirationTime: expirationTime ?? new Float64Array(0),
    strike: strike ?? new Float64Array(0),
    firstTradedDay: firstTradedDay ?? new Float64Array(0),
    flags: flags ?? new Float64Array(0),
    keys: KeyIndex.of(hashes ?? new Float64Array(0)),
    hashes: hashes ?? new Float64Array(0),
    bytes: symbols.length * CONTRACT_TABLE_BYTES,
  };
}

/**
 * The scope's contracts that can answer at a session from `first` to `last` (listed by `last`, not
 * expired before `first`: a contract's first snapshot is no earlier than its first_traded), in symbol
 * order, made into objects and indexed for one block.
 */
async function loadContracts(
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
  const picked: number[] = [];
  for (let i = 0; i < table.symbols.length; i++) {
    if (scope.root !== undefined && table.root[i] !== root) continue;
    const expires = table.expirationDay[i]!;
    if (expires >= low && expires <= high && table.firstTradedDay[i]! <= lastDay) picked.push(i);
  }
  const global = Int32Array.from(picked);
  const contracts = picked.map((i) => contractAt(table, i));
  const byExpiration = byDay(Float64Array.from(picked, (i) => table.expirationDay[i]!));
  const expirations = Array.from(byExpiration, (id) => contracts[id]!.expiration);
  // A row's hash names a contract of the table; its number in this block is its place among the picked.
  let keys: ContractKeys | undefined;
  if (table.keys !== undefined) {
    const index = table.keys;
    const local = new Int32Array(table.symbols.length).fill(-1);
    for (let id = 0; id < global.length; id++) local[global[id]!] = id;
    keys = {
      get(key: number): number | undefined {
        const at = index.get(key);
        const id = at === undefined ? -1 : local[at]!;
        return id === -1 ? undefined : id;
      },
      hashOf: Float64Array.from(global, (at) => table.hashes[at]!),
    };
  }
  const firstTradedDay = Float64Array.from(picked, (i) => table.firstTradedDay[i]!);
  return {
    contracts,
    keys,
    byExpiration,
    expirations,
    firstTradedDay,
    bytes: contracts.length * CONTRACT_BYTES,
  };
}

/**
 * The numbers 0…n-1 ordered by their days (`days[i]`, whole day numbers), numbers of one day in order: a
 * counting sort, as a block's contracts (in symbol order) are put in expiration order and its rows (runs
 * of a file each) in session order.
 */
function byDay(days: Float64Array): Int32Array {
  if (days.length === 0) return new Int32Array(0);
  const [low, high] = lowAndHigh(days);
  return countingOrder(days, low, high - low + 1).order;
}

/** The least and the greatest of `values` (not empty). */
function lowAndHigh(values: Float64Array): [low: number, high: number] {
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    if (value < low) low = value;
    if (value > high) high = value;
  }
  return [low, high];
}

/** The 53-bit hash of a row's contract symbol, exact as a double. */
export const SYMBOL_KEY = (alias: string) => `CAST(hash(${alias}.option_symbol) >> 11 AS DOUBLE)`;

/**
 * How rows of `alias` name their contract when read as columns: the symbol's hash when the contracts have
 * one key each (`keys`), else the symbol itself (two of the underlying's symbols share a hash).
 */
export function contractKeySql(alias: string, keys: object | undefined): string {
  return keys === undefined ? `${alias}.option_symbol` : SYMBOL_KEY(alias);
}

/** An SQL expression as DOUBLE: the one type the store's columns are read in as typed arrays. */
export const asDouble = (expression: string) => `CAST(${expression} AS DOUBLE)`;

/** A DATE column as its day number (days since 1970-01-01, `days.ts`), as DOUBLE. */
export const dayNumberSql = (column: string) => asDouble(`${column} - DATE '1970-01-01'`);

/** Each of `QUOTE_COLUMNS` after the contract: the store's column of quotes `q` it reads, as DOUBLE. */
const QUOTE_READS: Record<Exclude<(typeof QUOTE_COLUMNS)[number], 'contract'>, readonly [string, string]> = {
  day: ['session_date', dayNumberSql('q.session_date')],
  quote_time: ['quote_time', asDouble('epoch_ms(q.quote_time) / 1000')],
  bid: ['bid', asDouble('q.bid')],
  ask: ['ask', asDouble('q.ask')],
  bid_size: ['bid_size', asDouble('q.bid_size')],
  ask_size: ['ask_size', asDouble('q.ask_size')],
  last: ['last', asDouble('q."last"')],
  volume: ['volume', asDouble('q.volume')],
  volume_time: ['volume_time', asDouble('epoch_ms(q.volume_time) / 1000')],
  underlying_price: ['underlying_price', asDouble('q.underlying_price')],
  iv: ['iv', asDouble('q.iv')],
  delta: ['delta', asDouble('q.delta')],
  gamma: ['gamma', asDouble('q.gamma')],
  theta: ['theta', asDouble('q.theta')],
  vega: ['vega', asDouble('q.vega')],
};

/** The reads of `QUOTE_COLUMNS` after the contract, in their order. */
const QUOTE_READ_ORDER = QUOTE_COLUMNS.slice(1).map((name) => QUOTE_READS[name as keyof typeof QUOTE_READS]);

/**
 * The `QUOTE_COLUMNS` of quotes `q`, all as DOUBLE, the contract as its symbol's hash (with `keys`) or as
 * its symbol; but for the store columns in `empty` (NULL in every file read), which are not read:
 * `withEmpty` puts them back as NaN. Each column costs about as much to hand over from DuckDB as to read.
 */
function quoteColumnsSql(keys: object | undefined, empty: ReadonlySet<string> = new Set()): string {
  return [
    contractKeySql('q', keys),
    ...QUOTE_READ_ORDER.flatMap(([column, sql]) => (empty.has(column) ? [] : [sql])),
  ].join(', ');
}

/** A quote read's columns in `QUOTE_COLUMNS` order, with a NaN column for each left out (see `quoteColumnsSql`). */
function withEmpty(
  columns: readonly (Float64Array | (string | null)[])[],
  empty: ReadonlySet<string>,
): (Float64Array | (string | null)[])[] {
  if (empty.size === 0) return [...columns];
  // One NaN column serves every empty one (rows are only ever moved within a column, NaN over NaN).
  const none = new Float64Array(columns[0]!.length).fill(Number.NaN);
  let read = 1;
  return [columns[0]!, ...QUOTE_READ_ORDER.map(([column]) => (empty.has(column) ? none : columns[read++]!))];
}

/**
 * The condition keeping rows of `alias` whose symbols carry the date `expiration` under one of `roots`:
 * per root, the range of symbols `ROOTyymmdd…`, a plain range a Parquet scan prunes with (a root that is
 * another's prefix and a digit may let a few other rows through, which the numbering drops); `AND false`
 * without a root. A session block's read of one date (a loop's blocks bound theirs by their contracts'
 * symbols, `contractSymbolsSql`).
 */
export function symbolRangesSql(alias: string, expiration: string, roots: readonly string[]): string {
  const date = expiration.slice(2).replaceAll('-', '');
  const next = String(Number(date) + 1).padStart(6, '0');
  if (roots.length === 0) return 'AND false';
  const ranges = roots.map(
    (root) =>
      `(${alias}.option_symbol >= ${quoteLiteral(root + date)} AND ${alias}.option_symbol < ${quoteLiteral(root + next)})`,
  );
  return `AND (${ranges.join(' OR ')})`;
}

/** Open interest `o`'s contract, settled session (a day number), open interest and publication, as DOUBLE. */
function interestColumnsSql(keys: object | undefined): string {
  const double = asDouble;
  return [
    contractKeySql('o', keys),
    dayNumberSql('o.settled_session'),
    double('o.open_interest'),
    double('epoch_ms(o.published_at) / 1000'),
  ].join(', ');
}

/** About what one contract of a contract table costs: its symbol, its columns, its hash's entry. */
const CONTRACT_TABLE_BYTES = 200;

/** About what one contract of a block costs: its object, its entries in the block's indexes. */
const CONTRACT_BYTES = 300;

/**
 * Reads the scope's snapshots of the sessions `first`…`last` (and the open interest settled from the
 * session before `first`). The rows are read in the files' own order (session, symbol, quote time) with
 * their symbols, which the scope's contract index numbers: no join, no sort beyond the files' own.
 */
async function loadBlock(
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
  // Of the columns a block's rows must have, the ones no file of its sessions holds (a vendor without Greeks).
  const empty = new Set(
    [...sql.emptyColumns('option_quotes', underlying, { first, last })].filter(
      (column) => column !== 'session_date' && column !== 'quote_time',
    ),
  );
  const quoteParts: QuoteColumns[] = [];
  const interestParts: Record<(typeof INTEREST_NAMES)[number], Float64Array>[] = [];
  const symbols = (alias: string) =>
    ready === undefined || !some ? '' : contractSymbolsSql(alias, ready.contracts);
  let numbering: ScopeContracts | undefined = ready;
  for (const [i, slice] of slices.entries()) {
    const quoteSource = await sql.from('option_quotes', underlying, slice);
    // Open interest settled from the session before the block's first.
    const oiSlice = i === 0 ? { first: previousSession(slice.first), last: slice.last } : slice;
    const interestSource = await sql.from('open_interest', underlying, oiSlice);
    const quoteRead = sql.typedColumns(
      `SELECT ${quoteColumnsSql(keys, empty)}
       FROM ${quoteSource} q
       WHERE q.underlying = $underlying AND q.session_date BETWEEN CAST($first AS DATE) AND CAST($last AS DATE)
         ${symbols('q')}`,
      { underlying: scope.underlying, ...slice },
    );
    // Asked at once: DuckDB scans the open interest while the quotes are handed over and numbered here.
    const interestRead = sql.typedColumns(
      `SELECT ${interestColumnsSql(keys)}
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
  const { contracts, byExpiration, expirations } = known;
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
    }
  }
  const quotes = concatenated(quoteParts, QUOTE_COLUMNS);
  const interest = interestColumns(concatenated(interestParts, INTEREST_NAMES), contracts.length);
  // Each contract's rows, in the block's order (session, then quote time): a compressed row index.
  const { offsets, order: byContract } = countingOrder(quotes.contract, 0, contracts.length);
  const sessions = sessionRanges(quotes.day);
  const rows = quotes.day.length;
  return {
    first,
    last,
    window:
      window ??
      (scope.expiration === undefined ? undefined : { low: scope.expiration, high: scope.expiration }),
    contracts,
    quotes,
    sessions,
    offsets,
    byContract,
    byExpiration,
    expirations,
    firstTradedDay: known.firstTradedDay,
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

/** The bytes of the buffers under `arrays`, each counted once however many views share it. */
function distinctBytes(arrays: readonly Float64Array[]): number {
  const buffers = new Set(arrays.map((array) => array.buffer));
  let bytes = 0;
  for (const buffer of buffers) bytes += buffer.byteLength;
  return bytes;
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
  // Too long a search (a contract listed years ago and never quoted since): the block carries nothing, and
  // the answers that would need it go to the query.
  if (mostSessions !== undefined && sessionCount(from, first) > mostSessions) return undefined;
  const before = previousSession(first);
  const underlying = { underlying: scope.underlying };
  const params = { underlying: scope.underlying, from, symbols: symbols.join(',') };
  const quoteSource = await sql.from('option_quotes', underlying, { first: from, last: before });
  const quoteRead = await sql.typedColumns(
    `SELECT ${quoteColumnsSql(known.keys)}
     FROM ${quoteSource} q
     WHERE q.underlying = $underlying AND q.session_date BETWEEN CAST($from AS DATE) AND CAST($before AS DATE)
       AND q.option_symbol IN (SELECT unnest(string_split($symbols, ',')))
     QUALIFY row_number() OVER (PARTITION BY q.option_symbol ORDER BY q.session_date DESC, q.quote_time DESC) = 1`,
    { ...params, before },
  );
  const oiBefore = previousSession(oiFirst);
  // From the session before the earliest first traded session (see needsInterest above).
  const oiFrom = previousSession(from);
  const interestSource = await sql.from('open_interest', underlying, { first: oiFrom, last: oiBefore });
  const interestRead = await sql.typedColumns(
    `SELECT ${interestColumnsSql(known.keys)}
     FROM ${interestSource} o
     WHERE o.underlying = $underlying
       AND o.settled_session BETWEEN CAST($from AS DATE) AND CAST($before AS DATE)
       AND o.option_symbol IN (SELECT unnest(string_split($symbols, ',')))
     QUALIFY row_number() OVER (PARTITION BY o.option_symbol ORDER BY o.settled_session DESC) = 1`,
    { ...params, from: oiFrom, before: oiBefore },
  );
  return {
    quotes: concatenated([quotesHeld, numbered(quoteRead.columns, known, QUOTE_COLUMNS)], QUOTE_COLUMNS),
    interest: concatenated(
      [interestHeld, numbered(interestRead.columns, known, INTEREST_NAMES)],
      INTEREST_NAMES,
    ),
    quoteSearched,
    interestSearched,
  };
}

const INTEREST_NAMES = ['contract', 'settled', 'openInterest', 'publishedAt'] as const;

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

/** Whether contract `id` has an open interest row settled before `day`. */
function interestBefore(interest: InterestColumns, id: number, day: number): boolean {
  const start = interest.offsets[id]!;
  return start < interest.offsets[id + 1]! && interest.settledDay[start]! < day;
}

/**
 * Rows a growing loop's block reads in one query: its blocks are read while the loop waits, and a block
 * of a year read at once peaked at twice the memory.
 */
const SLICE_ROWS = 50_000;

/** How a loop's block is read (a block of a random request has none of it). */
type BlockReading = {
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

/** Parts' columns one after another (the one part as it is). */
function concatenated<K extends string>(
  parts: readonly Record<K, Float64Array>[],
  names: readonly K[],
): Record<K, Float64Array> {
  if (parts.length === 1) return parts[0]!;
  const length = parts.reduce((sum, part) => sum + part[names[0]!].length, 0);
  const out = {} as Record<K, Float64Array>;
  for (const name of names) {
    const column = new Float64Array(length);
    let offset = 0;
    for (const part of parts) {
      column.set(part[name], offset);
      offset += part[name].length;
    }
    out[name] = column;
  }
  return out;
}

/**
 * The block's rows in session, contract (symbol) and quote time order. Each file is sorted so and holds
 * sessions of its own, so rows read without an ORDER BY (DuckDB sorting a block cost about as much as
 * reading it) come as sorted runs, a file's each: a counting sort of their days puts the runs in order,
 * and a full sort is left for rows that still are not.
 */
export function inSessionOrder(quotes: QuoteColumns): QuoteColumns {
  if (inOrder(quotes)) return quotes;
  const { day } = quotes;
  const order = byDay(day);
  const bySession = permuted(quotes, order);
  if (inOrder(bySession)) return bySession;
  const { contract, quote_time: quoteTime } = quotes;
  order.sort((a, b) => day[a]! - day[b]! || contract[a]! - contract[b]! || quoteTime[a]! - quoteTime[b]!);
  return permuted(quotes, order);
}

/** Whether a block's rows are in session, contract, quote time order. */
function inOrder({ day, contract, quote_time: quoteTime }: QuoteColumns): boolean {
  for (let i = 1; i < day.length; i++) {
    if (day[i] !== day[i - 1]) {
      if (day[i]! < day[i - 1]!) return false;
    } else if (contract[i] !== contract[i - 1]) {
      if (contract[i]! < contract[i - 1]!) return false;
    } else if (quoteTime[i]! < quoteTime[i - 1]!) return false;
  }
  return true;
}

/** The columns with their rows in the given order. */
function permuted(quotes: QuoteColumns, order: Int32Array): QuoteColumns {
  const out = {} as Record<string, Float64Array>;
  for (const name of QUOTE_COLUMNS) out[name] = gathered(quotes[name], order);
  return out as QuoteColumns;
}

/**
 * Open interest rows (read in the files' order) as columns grouped by contract, each contract's in
 * settled-session order: a stable counting sort by contract keeps the files' settled order, and a
 * contract whose rows came from files out of order is sorted on its own.
 */
export function interestColumns(
  read: Record<'contract' | 'settled' | 'openInterest' | 'publishedAt', Float64Array>,
  count: number,
): InterestColumns {
  const { offsets, order } = countingOrder(read.contract, 0, count);
  runsInOrder(order, offsets, read.settled);
  const publishedAt = gathered(read.publishedAt, order);
  return {
    offsets,
    settledDay: gathered(read.settled, order),
    openInterest: gathered(read.openInterest, order),
    publishedAt,
    rising: risingRuns(publishedAt, offsets),
  };
}

// Each of the helpers below holds one loop over a block's rows: V8 optimizes a long loop while it runs
// (on-stack replacement), and a function of several such loops was thrown back to the interpreter at the
// next one, which had not run yet (a two-year block's indexing took 47 ms in a process's second backtest,
// 7 ms once warm).

/**
 * Rows by their whole-number keys `keys[i]` in `low`…`low + count - 1` (a counting sort): the rows of key
 * `low + k` are `order[offsets[k]…offsets[k + 1]]`, in the order they come.
 */
function countingOrder(
  keys: Float64Array,
  low: number,
  count: number,
): { offsets: Int32Array; order: Int32Array } {
  const offsets = new Int32Array(count + 1);
  countKeys(keys, low, offsets);
  for (let k = 0; k < count; k++) offsets[k + 1]! += offsets[k]!;
  return { offsets, order: placedByKey(keys, low, offsets) };
}

/** Adds one to `counts[key - low + 1]` for each key. */
function countKeys(keys: Float64Array, low: number, counts: Int32Array): void {
  for (let i = 0; i < keys.length; i++) counts[keys[i]! - low + 1]!++;
}

/** Rows in key order, each key's at its offset (`offsets`, as `countingOrder` makes them). */
function placedByKey(keys: Float64Array, low: number, offsets: Int32Array): Int32Array {
  const fill = offsets.slice(0, offsets.length - 1);
  const order = new Int32Array(keys.length);
  for (let i = 0; i < keys.length; i++) order[fill[keys[i]! - low]!++] = i;
  return order;
}

/** Sorts each run `order[offsets[id]…offsets[id + 1]]` by `by` of its rows, unless it already is. */
function runsInOrder(order: Int32Array, offsets: Int32Array, by: Float64Array): void {
  for (let id = 0; id + 1 < offsets.length; id++) {
    const start = offsets[id]!;
    const end = offsets[id + 1]!;
    for (let k = start + 1; k < end; k++) {
      if (by[order[k]!]! < by[order[k - 1]!]!) {
        order.subarray(start, end).sort((a, b) => by[a]! - by[b]!);
        break;
      }
    }
  }
}

/** `from`'s values in the order of `order`'s rows. */
function gathered(from: Float64Array, order: Int32Array): Float64Array {
  const to = new Float64Array(order.length);
  for (let i = 0; i < order.length; i++) to[i] = from[order[i]!]!;
  return to;
}

/** Per run `values[offsets[id]…offsets[id + 1]]`: 1 if it never falls, else 0. */
function risingRuns(values: Float64Array, offsets: Int32Array): Uint8Array {
  const rising = new Uint8Array(offsets.length - 1);
  for (let id = 0; id < rising.length; id++) {
    let up = 1;
    for (let k = offsets[id]! + 1; k < offsets[id + 1]! && up; k++) if (values[k]! < values[k - 1]!) up = 0;
    rising[id] = up;
  }
  return rising;
}

/** A block's sessions and their rows (`days` in session order: a run of rows a session). */
function sessionRanges(days: Float64Array): Map<string, SessionRange> {
  const sessions = new Map<string, SessionRange>();
  let start = 0;
  for (let i = 1; i <= days.length; i++) {
    if (i === days.length || days[i] !== days[start]) {
      sessions.set(isoDateOfDay(days[start]!), { start, end: i });
      start = i;
    }
  }
  return sessions;
}

/** Contract `id`'s open interest row settled on `settledDay`, or -1. */
function settledInterest(interest: InterestColumns, id: number, settledDay: number): number {
  let low = interest.offsets[id]!;
  let high = interest.offsets[id + 1]!;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (interest.settledDay[middle]! < settledDay) low = middle + 1;
    else high = middle;
  }
  return low < interest.offsets[id + 1]! && interest.settledDay[low] === settledDay ? low : -1;
}

/**
 * Contract `id`'s latest settled session's open interest published by the cutoff (the last of its rows,
 * in settled order, published by then), or -1.
 */
function latestInterest(interest: InterestColumns, id: number, cutoff: number): number {
  const start = interest.offsets[id]!;
  const end = interest.offsets[id + 1]!;
  const publishedAt = interest.publishedAt;
  if (interest.rising[id]) {
    let low = start;
    let high = end;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (publishedAt[middle]! <= cutoff) low = middle + 1;
      else high = middle;
    }
    return low - 1;
  }
  for (let k = end - 1; k >= start; k--) if (publishedAt[k]! <= cutoff) return k;
  return -1;
}

/** Whether contract `id` has open interest published by the cutoff. */
function interestPublishedBy(interest: InterestColumns, id: number, cutoff: number): boolean {
  const start = interest.offsets[id]!;
  if (start === interest.offsets[id + 1]!) return false;
  return interest.rising[id]
    ? interest.publishedAt[start]! <= cutoff
    : latestInterest(interest, id, cutoff) !== -1;
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

/** The first index in `low…high` where `holds` stops holding (it holds for a prefix of the range). */
function firstNot(low: number, high: number, holds: (index: number) => boolean): number {
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (holds(middle)) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The session after `date`, or undefined past the calendar's end. */
function tryNextSession(date: string): string | undefined {
  try {
    return nextSession(date);
  } catch {
    return undefined;
  }
}

/** A NaN read for NULL, back to null. */
export function nullable(value: number): number | null {
  return Number.isNaN(value) ? null : value;
}

/** The store row of a block's row `i`, with the open interest row that answers it (-1: none). */
function rowAt(block: Block, i: number, interestRow: number, session: string): SnapshotRow {
  const q = block.quotes;
  const interest = block.interest;
  const contract = block.contracts[q.contract[i]!]!;
  // Every field named, in one order: one object shape for all rows (a spread of the driver's row
  // objects made each row slow to build and to read).
  return {
    option_symbol: contract.option_symbol,
    underlying: contract.underlying,
    root: contract.root,
    expiration: contract.expiration,
    expiration_time: contract.expiration_time,
    side: contract.side,
    strike: contract.strike,
    settlement: contract.settlement,
    monthly: contract.monthly,
    weekly: contract.weekly,
    quarterly: contract.quarterly,
    nonstandard: contract.nonstandard,
    first_traded: contract.first_traded,
    session_date: session,
    quote_time: q.quote_time[i]!,
    bid: nullable(q.bid[i]!),
    ask: nullable(q.ask[i]!),
    bid_size: nullable(q.bid_size[i]!),
    ask_size: nullable(q.ask_size[i]!),
    last: nullable(q.last[i]!),
    volume: nullable(q.volume[i]!),
    volume_time: nullable(q.volume_time[i]!),
    underlying_price: nullable(q.underlying_price[i]!),
    iv: nullable(q.iv[i]!),
    delta: nullable(q.delta[i]!),
    gamma: nullable(q.gamma[i]!),
    theta: nullable(q.theta[i]!),
    vega: nullable(q.vega[i]!),
    open_interest: interestRow === -1 ? null : nullable(interest.openInterest[interestRow]!),
    oi_published_at: interestRow === -1 ? null : interest.publishedAt[interestRow]!,
  };
}

/**
 * A dated as-of: each contract's latest snapshot of session D, open interest settled from D−1 (only
 * contract `only`, or only the contracts of one expiration, when given).
 */
function datedRows(block: Block, session: string, only?: number, expiration?: string): RowSource {
  const range = block.sessions.get(session);
  const rows: number[] = [];
  if (range !== undefined) {
    const contractOf = block.quotes.contract;
    for (let i = range.start; i < range.end; i++) {
      const id = contractOf[i]!;
      if (only !== undefined && id !== only) continue;
      if (i + 1 < range.end && contractOf[i + 1] === id) continue; // not the contract's latest snapshot
      const expires = block.contracts[id]!.expiration;
      if (expires >= session && (expiration === undefined || expires === expiration)) rows.push(i);
    }
  }
  const settledDay = dayNumberOfIso(previousSession(session));
  return blockSource(block, rows, (id) => settledInterest(block.interest, id, settledDay));
}

/** The rows of a block chosen for an as-of, made into store rows only when asked for. */
function blockSource(
  block: Block,
  rows: readonly number[],
  interestOf: (contract: number) => number,
): RowSource {
  const contractOf = block.quotes.contract;
  return {
    length: rows.length,
    groupOf: (index) => block.contracts[contractOf[rows[index]!]!]!,
    row: (index) => {
      const row = rows[index]!;
      return rowAt(block, row, interestOf(contractOf[row]!), isoDateOfDay(block.quotes.day[row]!));
    },
  };
}

/**
 * A current as-of: per listed contract the latest snapshot with q ≤ cutoff (with `eodOnly`, among the
 * sessions' last snapshots), and the latest open interest published by the cutoff. Undefined when a
 * contract may have an older snapshot or open interest than the block holds.
 */
function currentRows(
  block: Block,
  asOf: Extract<AsOf, { kind: 'current' }>,
  only?: number,
  expiration?: string,
): RowSource | undefined {
  const session = asOfSession(asOf);
  const through = lastSessionOf(asOf);
  const cutoff = asOf.cutoffSeconds;
  const throughDay = dayNumberOfIso(through);
  const { day, quote_time: quoteTime } = block.quotes;
  const { offsets, byContract, byExpiration, expirations, firstTradedDay } = block;
  const firstDay = dayNumberOfIso(block.first);
  const interestFloorDay = dayNumberOfIso(previousSession(block.first));
  // Only contracts that expire on or after the as-of session are listed: a suffix in expiration order.
  const low = firstNot(0, expirations.length, (i) => expirations[i]! < session);
  const rows: number[] = [];
  // One contract (`only`): the same walk over a one-element suffix, empty when it expired before. One
  // expiration: its contracts only, a run of the suffix (a minute loop over a 0DTE chain asks one date of
  // an index's thousands of contracts).
  let suffix: Int32Array;
  if (only !== undefined) {
    suffix = block.contracts[only]!.expiration >= session ? Int32Array.of(only) : new Int32Array(0);
  } else if (expiration !== undefined) {
    const start =
      expiration < session
        ? byExpiration.length
        : firstNot(low, expirations.length, (i) => expirations[i]! < expiration);
    suffix = byExpiration.subarray(
      start,
      firstNot(start, expirations.length, (i) => expirations[i]! === expiration),
    );
  } else suffix = byExpiration.subarray(low);
  for (const id of suffix) {
    const firstTraded = firstTradedDay[id]!;
    if (firstTraded > throughDay) continue;
    const found = latestRow(offsets[id]!, offsets[id + 1]!);
    if (found === -1) {
      // A contract traded before the block may have its latest snapshot before it: only the query knows.
      if (firstTraded < firstDay && !block.carriedQuotes?.[id]) return undefined;
      continue;
    }
    // Open interest settled before the block may be the latest published: only the query knows. (It may
    // be settled as early as the session before the contract's first traded session: see `carriedRows`.)
    if (
      firstTraded < firstDay &&
      !interestPublishedBy(block.interest, id, cutoff) &&
      !(block.carriedInterest?.[id] && !interestBefore(block.interest, id, interestFloorDay))
    ) {
      return undefined;
    }
    rows.push(found);
  }
  // Which open interest answers is found only for the rows made into records.
  return blockSource(block, rows, (id) => latestInterest(block.interest, id, cutoff));

  /** The contract's latest row on or before `through` with q ≤ cutoff (`eodOnly`: its sessions' last rows). */
  function latestRow(start: number, end: number): number {
    const dayOf = (k: number) => day[byContract[k]!]!;
    // The last of the contract's rows on or before `through`, by halves over its sessions.
    const first = firstNot(start, end, (k) => dayOf(k) <= throughDay);
    let k = first - 1;
    if (!asOf.eodOnly && k >= start) {
      // The latest session's rows are in quote time order: the last one by the cutoff is found by halves
      // (an intraday session holds hundreds of snapshots a contract), else the walk goes on before them.
      const lastDay = dayOf(k);
      const sessionStart = firstNot(start, k, (j) => dayOf(j) < lastDay);
      k = firstNot(sessionStart, first, (j) => quoteTime[byContract[j]!]! <= cutoff) - 1;
    }
    for (; k >= start; k--) {
      const row = byContract[k]!;
      if (asOf.eodOnly) {
        // Only a session's last snapshot counts; one taken after the cutoff leaves its session out.
        const lastOfSession = k + 1 === end || day[byContract[k + 1]!] !== day[row];
        if (!lastOfSession) continue;
      }
      if (quoteTime[row]! <= cutoff) return row;
    }
    return -1;
  }
}
