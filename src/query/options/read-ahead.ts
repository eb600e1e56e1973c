/**
 * Read-ahead for session loops. A backtest asks one scope (an underlying's chain) at consecutive
 * sessions; a cold Parquet query per session costs tens of milliseconds, while one range scan of the
 * sessions ahead costs about as much as one. Once a scope is asked at a later session than before, the
 * rows of a block of sessions around it are read once and kept in the store's cache; every as-of whose
 * answer the block holds whole is then answered from memory, by the same rules as `snapshot-sql.ts`.
 * Whatever the block cannot prove complete (a contract whose last snapshot may be older than the block)
 * falls back to the query. This file decides whether a request is a loop's and which block answers it
 * (the loop's, or one expiration's session at an instant); outside loops `session-pair.ts` (a random
 * instant's session and the one before) and `whole-history.ts` (an underlying's whole history) answer.
 * `block-read.ts` reads blocks and `block-rows.ts` answers from them.
 */
import {
  nextSession,
  previousSession,
  sessionCloseSeconds,
  sessionOpenSeconds,
} from '../../market-time/index.js';
import { type AsOf, asOfSession, type CurrentAsOf } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import type { Block } from './block.js';
import { contractIndex, loadContracts } from './block-contracts.js';
import { loadBlock, loadInstantBlock, SLICE_ROWS } from './block-read.js';
import { covers, currentRows, datedRows } from './block-rows.js';
import { contractTable, indexOfContract } from './contract-table.js';
import { isoDateOfDay, sessionCount, tryNextSession } from './days.js';
import {
  type ExpirationNeed,
  type ExpirationWindow,
  nextWindow,
  WINDOW_AHEAD_SESSIONS,
  WINDOW_SESSION_ROWS,
  windowHolds,
} from './expiration-window.js';
import { chainOf, type Scope } from './scope.js';
import { type RowSource, rowSource } from './snapshot-sql.js';

/** Sessions a block keeps before the session that started it (a current answer may reach back). */
const LOOKBACK_SESSIONS = 5;
/** Sessions the first block of a loop reads past the session that started it. */
const FIRST_AHEAD_SESSIONS = 30;
/** Rows a block may hold (16 numbers each, about 130 bytes a row with the open interest). */
const ROW_BUDGET = 300_000;
/** Rows the first block of a loop may hold: a dense chain (thousands of contracts) reads fewer sessions. */
const FIRST_ROW_BUDGET = 100_000;
/**
 * Rows a session of a chain holds past which a current request of one date outside an announced loop is
 * answered from that date's block of its session, never from a loop's block. A loop's first block there
 * could hold no more than its session and the one before, of every date of its window (an index's chain
 * quoted every minute: 110,000-185,000 rows a session, its 0DTE date 43,000-130,000), so random minutes
 * that stepped forward twice by chance read blocks of 220,000-412,000 rows (125-433 ms, 5 of 200 random
 * minutes), held against the session cache while the date blocks they spared were read all the same; and
 * a minute loop over 0DTE dates read one at every new session. Past the density from which a loop would
 * read blocks of some dates (`WINDOW_SESSION_ROWS`) their blocks cost more than the session's: on the
 * 26 M-row bench store's SPY (13,000 rows a session) a `dte=30` loop's blocks of its window held 5,600
 * rows a session for the 110 it answered, 3.5-4.0 ms a session against 2.2-2.4 from the dates' session
 * blocks, each carrying its unquoted contracts from the block of the session before.
 */
const ONE_DATE_SESSION_ROWS = WINDOW_SESSION_ROWS;
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

/** Where the session cache keeps the block of one date's rows of a session (`readAheadRows`). */
const oneDateKey = (scope: Exclude<Scope, { optionSymbol: string }>, session: string) =>
  `read-ahead|expiration|${JSON.stringify(scope)}|${session}`;

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
  const key = oneExpiration ? oneDateKey(scope, asOfSession(asOf)) : '';
  if (oneExpiration) {
    const held = cache.heldSized<Block>(key);
    if (held !== undefined) {
      const block = await held;
      if (covers(block, asOf)) {
        // The loop's state follows the minutes the block answers: where the loop was when its session ends.
        const state = cache.heldState<LoopState>(loopStateKey(chainOf(scope)));
        if (state !== undefined && state.lastSession === asOfSession(asOf))
          state.lastCutoff = Math.max(state.lastCutoff ?? 0, (asOf as CurrentAsOf).cutoffSeconds);
        return currentRows(block, asOf as CurrentAsOf, undefined, scope.expiration);
      }
    }
  }
  // Read before the loop's state moves on to this request.
  const state = cache.heldState<LoopState>(loopStateKey(chainOf(scope)));
  const stepsOn = stepsInSession(state, asOf) || stepsIntoSession(state, asOf);
  // One loop per chain, whichever of its expirations each request asks.
  const block = await loopBlock(sql, cache, asOf, chainOf(scope), scope.expiration, oneExpiration);
  if (block !== undefined) {
    return asOf.kind === 'dated'
      ? datedRows(block, asOf.session, undefined, scope.expiration)
      : currentRows(block, asOf, undefined, scope.expiration);
  }
  if (!oneExpiration) return undefined;
  const session = asOfSession(asOf);
  // A random instant reads each contract's latest snapshot by its cutoff, not the whole session's hundreds
  // a contract: the session's block costs 10-40 ms to read (most of it touching fresh memory), and a cache
  // within its budget holds a third of an intraday quarter's blocks. A request stepping on within the
  // session (a minute loop) reads the block, which answers its every later minute. So does a loop over
  // sessions whose last session's block of this date was read: its latest snapshots could not answer
  // there (a strike not quoted that session), and the strikes a date leaves unquoted stay so for weeks
  // (on the 26 M-row bench store's SPY, a `dte=30` loop's monthly dates: 45 sessions of 2019, each of
  // which read the snapshots for nothing, 1 ms of its 4). So does a minute loop going on from the close of
  // the session before (`stepsIntoSession`): its first minute would read the snapshots, its second the block.
  const previousBlock = cache.heldSized<Block>(oneDateKey(scope, previousSession(session)));
  if (!stepsOn && !asOf.eodOnly && previousBlock === undefined) {
    const instant = await instantRows(sql, cache, asOf as CurrentAsOf, {
      ...scope,
      expiration: scope.expiration!,
    });
    if (instant !== undefined) return instant;
  }
  const one = await cache.sized(
    key,
    async () => {
      // The session alone: a contract not quoted in it is carried from its latest snapshot before it
      // (`carriedRows`); an instant before a contract's first snapshot of the session goes to the query.
      // A loop over sessions asks the same date session after session: the block of the session before,
      // when the cache still holds it, knows those contracts' latest rows before this one, so the look
      // back (some 100 sessions of a dense chain's files for a few unquoted strikes) is made once a run.
      const known = await loadContracts(sql, cache, scope, session, session);
      const previous = await previousBlock?.catch(() => undefined);
      return loadBlock(sql, scope, session, session, known, {
        rowsPerSession: SLICE_ROWS,
        sliceRows: SLICE_ROWS,
        previous,
      });
    },
    (block) => block.bytes,
  );
  return covers(one, asOf) ? currentRows(one, asOf as CurrentAsOf, undefined, scope.expiration) : undefined;
}

/**
 * A current answer of one date from its session's latest snapshots by the cutoff (`loadInstantBlock`), or
 * undefined when they cannot prove it (a contract not yet quoted in the session) or are not in files.
 */
async function instantRows(
  sql: SqlSession,
  cache: StoreCache,
  asOf: CurrentAsOf,
  scope: Exclude<Scope, { optionSymbol: string }> & { readonly expiration: string },
): Promise<RowSource | undefined> {
  const session = asOfSession(asOf);
  const known = await loadContracts(sql, cache, scope, session, session);
  const block = await loadInstantBlock(sql, scope, session, asOf.cutoffSeconds, known);
  if (block === undefined || !covers(block, asOf)) return undefined;
  return currentRows(block, asOf, undefined, scope.expiration);
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
  /** Whether a block of the asked date's session can answer the request instead (`readAheadRows`). */
  oneDate = false,
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
  // Several requests at one session (a backtest's several questions at one instant) neither make nor break
  // it; minute by minute through one session of intraday snapshots is a loop that never changes session.
  if (stepsInSession({ lastSession: previous, lastCutoff: state.lastCutoff }, asOf)) state.forward++;
  else if (session !== previous) {
    state.forward = previous !== undefined && loopContinues(previous, session) ? state.forward + 1 : 0;
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
  // A dense chain's request of one date at an instant: that date's session block answers it.
  const oneDateRows = cache.oneDateSessionRows ?? ONE_DATE_SESSION_ROWS;
  if (oneDate && !inAnnounced && state.chainRows > oneDateRows) return undefined;
  /** Rows a session of the scope holds, about: how many sessions one query of the block reads. */
  let density: number;
  let span: { lookback: number; ahead: number };
  /** Rows one query of the block reads. */
  let sliceRows = SLICE_ROWS;
  if (inAnnounced) {
    // A loop announced by its caller (a backtest over a period): one scan reads the rest of the period
    // at once, as far as the announced budget holds at the period's density.
    const left = sessionCount(session, announced.to!);
    const rows = await blockDensity(sql, scope.underlying, session, left);
    density = rows;
    state.chainRows = rows;
    span = blockSpan(left, Math.floor(ANNOUNCED_ROW_BUDGET / Math.max(1, rows)));
    // In one query: slices cost a statement each and re-read the row groups they share, and an
    // announced block is read once.
    sliceRows = ANNOUNCED_ROW_BUDGET;
  } else if (state.forward < LOOP_STEPS) {
    // Random requests go forward now and then; a loop goes forward every time. Until it has, each request
    // is answered on its own (a dated one from its session's rows).
    return undefined;
  } else if (block === undefined) {
    // The first block: as many sessions as the first budget holds at the density of those ahead.
    const rows = await blockDensity(sql, scope.underlying, session, FIRST_AHEAD_SESSIONS);
    density = rows;
    state.chainRows = rows;
    if (oneDate && rows > oneDateRows) return undefined;
    span = blockSpan(FIRST_AHEAD_SESSIONS, Math.floor(FIRST_ROW_BUDGET / Math.max(1, rows)));
  } else {
    // The loop outran a block: read further ahead next time, as far as the row budget allows at the
    // density of the block read, or of the sessions ahead where the files count them (denser ones ahead
    // shorten the block).
    const most = Math.min(Math.max(1, state.ahead) * GROWTH, MAX_AHEAD_SESSIONS);
    const read = block.quotes.day.length / Math.max(1, block.sessions.size);
    const ahead =
      block.window === undefined ? densestSession(sql, scope.underlying, session, most) : undefined;
    const rowsPerSession = Math.max(1, read, ahead ?? 0);
    density = rowsPerSession;
    if (block.window === undefined) state.chainRows = rowsPerSession;
    span = blockSpan(most, Math.floor(ROW_BUDGET / rowsPerSession));
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
  // The block the loop holds counts against the session cache's budget, in place of the one before.
  const key = loopStateKey(scope);
  pending.then(
    (made) => {
      if (state.block === pending) cache.hold(key, made.bytes);
    },
    () => {
      if (state.block !== pending) return;
      state.block = undefined;
      cache.hold(key, 0);
    },
  );
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
  const block = await heldLoopBlock(cache, scope);
  return block === undefined ? null : block.window;
}

/**
 * The sessions the loop block of a chain reads now (the lookback included), or null when the chain has no
 * loop block (for tests and diagnostics, as `loopBlockDates`).
 */
export async function loopBlockSessions(
  cache: StoreCache,
  scope: Exclude<Scope, { optionSymbol: string }>,
): Promise<{ first: string; last: string } | null> {
  const block = await heldLoopBlock(cache, scope);
  return block === undefined ? null : { first: block.first, last: block.last };
}

async function heldLoopBlock(
  cache: StoreCache,
  scope: Exclude<Scope, { optionSymbol: string }>,
): Promise<Block | undefined> {
  const state = cache.heldState<LoopState>(loopStateKey(scope));
  return state?.block === undefined ? undefined : await state.block.catch(() => undefined);
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

/**
 * How dense a block starting at `session` is: the rows of the densest session among it, the one before and
 * `ahead` after, as the session column files count them. A block sized on its first session alone read far
 * past its budget when that session was sparse: after a session quoted only at the close, a loop over
 * minute-by-minute sessions read a block of 35 sessions and 5 million rows (2.3 s) for one 0DTE answer.
 * Without the files, the session's own rows (one statement; the sessions ahead would cost a scan each).
 */
async function blockDensity(
  sql: SqlSession,
  underlying: string,
  session: string,
  ahead: number,
): Promise<number> {
  return densestSession(sql, underlying, session, ahead) ?? (await sessionRows(sql, underlying, session));
}

/**
 * The rows of the densest session of `underlying` among `session`, the one before and `ahead` after, from
 * the session column files' trailers (no statement); undefined when a session of them has no such file.
 */
function densestSession(
  sql: SqlSession,
  underlying: string,
  session: string,
  ahead: number,
): number | undefined {
  let last = session;
  for (let i = 0; i < ahead; i++) {
    const next = tryNextSession(last);
    if (next === undefined) break; // the calendar's end
    last = next;
  }
  const parts = sql.sessionColumns(
    'option_quotes',
    { underlying },
    { first: previousSession(session), last },
  );
  if (parts === undefined) return undefined;
  // A session's rows are in one file (`StoreReader.sessionColumns`): a part is a session.
  let densest = 0;
  for (const part of parts) densest = Math.max(densest, part.rows);
  return densest;
}

/** The rows an underlying has on one session: how dense its blocks are. */
async function sessionRows(sql: SqlSession, underlying: string, session: string): Promise<number> {
  // The session column files' trailers count each session's rows: no statement (a count of an intraday
  // session through DuckDB cost 30 ms of wall time and twice that of CPU).
  const parts = sql.sessionColumns('option_quotes', { underlying }, { first: session, last: session });
  if (parts !== undefined) return parts.reduce((sum, part) => sum + part.rows, 0);
  const quotes = await sql.from('option_quotes', { underlying }, { first: session, last: session });
  const rows = await sql.value<number>(
    `SELECT count(*) FROM ${quotes} q WHERE underlying = $underlying AND session_date = CAST($session AS DATE)`,
    { underlying, session },
  );
  return Number(rows);
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

/**
 * Whether a request steps forward within the session the chain's last request asked (`state`, as that
 * request left it): a later instant of the same session, a minute loop's step.
 */
function stepsInSession(
  state: Pick<LoopState, 'lastSession' | 'lastCutoff'> | undefined,
  asOf: AsOf,
): boolean {
  return (
    asOf.kind === 'current' &&
    state?.lastSession === asOfSession(asOf) &&
    state.lastCutoff !== undefined &&
    asOf.cutoffSeconds > state.lastCutoff
  );
}

/** How near a session's close the last request, and its next session's open this one, carry a minute loop over. */
const CARRY_OVER_SECONDS = 30 * 60;

/**
 * Whether a current request near a session's open follows the chain's last request near the close of the
 * session before: a minute loop going on into the next session (a 0DTE strategy over a quarter), whose
 * session block answers its every later minute. A loop over sessions at one time of day is not one.
 */
function stepsIntoSession(
  state: Pick<LoopState, 'lastSession' | 'lastCutoff'> | undefined,
  asOf: AsOf,
): boolean {
  if (asOf.kind !== 'current' || state?.lastSession === undefined || state.lastCutoff === undefined)
    return false;
  const session = asOfSession(asOf);
  return (
    state.lastSession === previousSession(session) &&
    state.lastCutoff >= sessionCloseSeconds(state.lastSession) - CARRY_OVER_SECONDS &&
    asOf.cutoffSeconds <= sessionOpenSeconds(session) + CARRY_OVER_SECONDS
  );
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
