/**
 * What the stock and market endpoints share: the requested symbols, the "Symbol not found." and "Market
 * closed on this date." answers, and per-session summaries of the bars known at a cutoff (the ground of
 * stock quotes, prices and bulk candles). Their parameters are read with `../params.ts`.
 */
import { MarketDataError } from '../../errors.js';
import { isSession, toEtDate } from '../../market-time/index.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession, SqlValue } from '../../store/sql.js';
import { closeOf, type Knowledge, loadSplits, minuteBarsSql, splitFactor } from '../candles.js';
import { type DailyHistory, dailyHistory, lastOnOrBefore } from '../daily-history.js';
import { normalizeSymbol } from '../params.js';
import type { AsOf, Field, FieldKind } from '../types.js';

/** A 400 refusal with `{"s":"error","errmsg":…}`. */
export function badRequest(errmsg: string): MarketDataError {
  return new MarketDataError(400, errmsg);
}

/** Whether the exchange held a session on `date`; outside the calendar's years, every weekday counts. */
export function isTradingDay(date: string): boolean {
  try {
    return isSession(date);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    const weekday = new Date(`${date}T12:00:00Z`).getUTCDay();
    return weekday !== 0 && weekday !== 6;
  }
}

/** The day of a historical request: the pipeline's dated session, else the endpoint's own `date`. */
export function requestedDay(asOf: AsOf, date: string | undefined): string | undefined {
  return asOf.kind === 'dated' ? asOf.session : date;
}

/** One column of an answer. */
export function field(key: string, human: string, kind: FieldKind, values: readonly unknown[]): Field {
  return { key, human, kind, values };
}

/** A number rounded to 4 decimals (changes and their fractions, as the service prints them). */
export function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/** Every symbol with a stored bar, ascending (`snapshot=true`). */
export async function allSymbols(sql: SqlSession): Promise<string[]> {
  const rows = await sql.all<{ symbol: string }>('SELECT DISTINCT symbol FROM stock_bars ORDER BY symbol');
  return rows.map((row) => row.symbol);
}

/** Where the store's cache keeps, per symbol, a knowledge at which it was known (see `symbolKnown`). */
const KNOWN_SINCE_KEY = 'stocks|known-since';

/**
 * Whether `symbol` has any bar known at the cutoff (the stock's existence is known from its first bar): a
 * daily bar of a closed session, else a minute bar ended by the cutoff. Each asks only the symbol's files
 * of that resolution up to the cutoff (the whole table's view would plan and scan every symbol's). Once
 * known, a symbol stays known at any later cutoff: a loop going forward asks the store once.
 */
export async function symbolKnown(
  sql: SqlSession,
  cache: StoreCache,
  symbol: string,
  knowledge: Knowledge,
): Promise<boolean> {
  const knownSince = cache.state(KNOWN_SINCE_KEY, () => new Map<string, Knowledge>());
  const since = knownSince.get(symbol);
  if (since !== undefined && knows(knowledge, since)) return true;
  const found = await symbolFound(sql, cache, symbol, knowledge);
  // The earliest knowledge it was found at is kept: it answers for every knowledge at or after it.
  if (found && (since === undefined || knows(since, knowledge))) knownSince.set(symbol, knowledge);
  return found;
}

/** Whether everything known at `earlier` is known at `later` too (both its closes and its cutoff). */
function knows(later: Knowledge, earlier: Knowledge): boolean {
  return (
    later.cutoffSeconds >= earlier.cutoffSeconds &&
    (later.lastClosedSession ?? '') >= (earlier.lastClosedSession ?? '')
  );
}

/** `symbolKnown`, asked of the store (the daily bars from the symbol's history in memory when kept). */
async function symbolFound(
  sql: SqlSession,
  cache: StoreCache,
  symbol: string,
  knowledge: Knowledge,
): Promise<boolean> {
  const lastClosed = knowledge.lastClosedSession ?? '0001-01-01';
  const history = await dailyHistory(sql, cache, symbol);
  if (history !== undefined) {
    if (lastOnOrBefore(history, lastClosed) >= 0) return true;
  } else {
    const daily = await sql.from('stock_bars', { symbol, resolution: 'D' }, { last: lastClosed });
    const found = await sql.value<boolean>(
      `SELECT count(*) > 0 FROM (
         SELECT 1 FROM ${daily}
         WHERE symbol = $symbol AND resolution = 'D' AND session_date <= CAST($lastClosed AS DATE) LIMIT 1)`,
      { symbol, lastClosed },
    );
    if (found === true) return true;
  }
  const known = knowledge.cutoffSeconds - 60;
  const minutes = await sql.from(
    'stock_bars',
    { symbol, resolution: '1' },
    { last: toEtDate(Math.max(0, knowledge.cutoffSeconds)) },
  );
  const minute = await sql.value<boolean>(
    `SELECT count(*) > 0 FROM (
       SELECT 1 FROM ${minutes} WHERE symbol = $symbol AND resolution = '1' AND t <= to_timestamp($known) LIMIT 1)`,
    { symbol, known },
  );
  return minute === true;
}

/** One session of one symbol as known at a cutoff: its daily bar, or its minute bars so far. */
export type SessionSummary = {
  readonly symbol: string;
  readonly session: string;
  readonly o: number;
  readonly h: number;
  readonly l: number;
  readonly c: number;
  readonly v: number;
  /** When the latest value in it became known: the close (daily bar) or the last minute bar's end. */
  readonly knownAt: number;
};

/** Options of `latestSessions`. */
export type SessionOptions = {
  /** How many sessions per symbol, latest first. */
  readonly count: number;
  /** Whether minute bars outside regular hours count. */
  readonly extended: boolean;
  /** Only this session. */
  readonly session?: string;
};

/** The most symbols whose daily histories one answer reads into memory; more ask the statements. */
const HISTORY_SYMBOLS = 8;

/**
 * The latest `count` sessions of each symbol known at the cutoff, latest first. A session whose daily
 * bar is known is that bar; a later session (the one in progress, or one stored only as minute bars) is
 * summarised from its minute bars known at the cutoff (t + 60 ≤ cutoff).
 */
export async function latestSessions(
  sql: SqlSession,
  cache: StoreCache,
  symbols: readonly string[],
  knowledge: Knowledge,
  options: SessionOptions,
): Promise<Map<string, SessionSummary[]>> {
  const lastClosed = knowledge.lastClosedSession ?? '0001-01-01';
  const daily =
    symbols.length <= HISTORY_SYMBOLS
      ? await latestDaily(sql, cache, symbols, lastClosed, options.session)
      : undefined;
  if (daily !== undefined && noMinuteBarKnown(daily, knowledge, options.session)) {
    return fromHistories(daily, options, new Map());
  }
  if (daily !== undefined && daily.size === 1) {
    const [symbol, known] = [...daily][0]!;
    const minute = await minuteSessions(sql, symbol, known, knowledge, options);
    return fromHistories(daily, options, new Map([[symbol, minute]]));
  }
  const params: Record<string, SqlValue> = {
    symbols: symbols.join(','),
    lastClosed,
    minuteLimit: knowledge.cutoffSeconds - 60,
    count: options.count,
  };
  const onlySessionOf = (column: string) =>
    options.session === undefined ? '' : `AND ${column} = CAST($session AS DATE)`;
  const onlySession = onlySessionOf('session_date');
  if (options.session !== undefined) params['session'] = options.session;
  const bars = minuteBarsSql(
    `symbol IN (SELECT symbol FROM req) AND t <= to_timestamp($minuteLimit)
     AND session_date > CAST($minuteFloor AS DATE)
     AND session_date > coalesce((SELECT daily_last FROM last_daily WHERE daily_symbol = symbol), DATE '0001-01-01')
     ${onlySession}`,
    { extended: options.extended },
  );
  Object.assign(params, bars.params);
  // Minute bars matter only for sessions after the symbol's latest known daily bar. That bound depends on
  // the symbol, and the scan reads every minute bar under it; the earliest of the symbols' latest daily
  // bars, found first, is a constant the scan skips row groups by.
  params['minuteFloor'] =
    (daily === undefined
      ? await sql.value<string | null>(
          `SELECT CASE WHEN count(*) = count(last) THEN CAST(min(last) AS VARCHAR) END
           FROM (SELECT req.symbol, max(b.session_date) AS last
                 FROM (SELECT DISTINCT unnest(string_split($symbols, ',')) AS symbol) req
                 LEFT JOIN stock_bars b ON b.symbol = req.symbol AND b.resolution = 'D'
                   AND b.session_date <= CAST($lastClosed AS DATE) ${onlySessionOf('b.session_date')}
                 GROUP BY req.symbol)`,
          {
            symbols: params['symbols']!,
            lastClosed,
            ...(options.session === undefined ? {} : { session: options.session }),
          },
        )
      : earliestLatest(daily)) ?? '0001-01-01';
  const rows = await sql.all<SessionRow & { symbol: string }>(
    `WITH req AS (SELECT DISTINCT unnest(string_split($symbols, ',')) AS symbol),
     daily AS (
       SELECT symbol, session_date, o, h, l, c, v, CAST(NULL AS DOUBLE) AS known_at
       FROM stock_bars
       WHERE resolution = 'D' AND symbol IN (SELECT symbol FROM req)
         AND session_date <= CAST($lastClosed AS DATE) ${onlySession}
     ),
     last_daily AS (SELECT symbol AS daily_symbol, max(session_date) AS daily_last FROM daily GROUP BY symbol),
     ${bars.sql},
     minute AS (${MINUTE_SESSIONS_SQL}),
     ranked AS (
       SELECT *, row_number() OVER (PARTITION BY symbol ORDER BY session_date DESC) AS rn
       FROM (SELECT * FROM daily UNION ALL BY NAME SELECT * FROM minute)
     )
     SELECT symbol, CAST(session_date AS VARCHAR) AS session_date, CAST(o AS DOUBLE) AS o, CAST(h AS DOUBLE) AS h,
            CAST(l AS DOUBLE) AS l, CAST(c AS DOUBLE) AS c, CAST(v AS DOUBLE) AS v, known_at
     FROM ranked WHERE rn <= $count ORDER BY symbol, rn`,
    params,
  );
  const bySymbol = new Map<string, SessionSummary[]>();
  for (const row of rows) {
    const list = bySymbol.get(row.symbol) ?? [];
    list.push(summaryOf(row.symbol, row));
    bySymbol.set(row.symbol, list);
  }
  return bySymbol;
}

/** A session summary as the statements read it: a daily bar's `known_at` is NULL (known at its close). */
type SessionRow = {
  session_date: string;
  o: number;
  h: number;
  l: number;
  c: number;
  v: number;
  known_at: number | null;
};

function summaryOf(symbol: string, row: SessionRow): SessionSummary {
  return {
    symbol,
    session: row.session_date,
    o: row.o,
    h: row.h,
    l: row.l,
    c: row.c,
    v: row.v,
    knownAt: row.known_at ?? closeOf(row.session_date),
  };
}

/** A symbol's daily history and the index of its latest bar known (within the session asked), or -1. */
type LatestDaily = { readonly history: DailyHistory; readonly latest: number };

/**
 * Each requested symbol's latest daily bar known at `lastClosed` (only `session`'s, when given), from its
 * history in memory, by symbol in ascending order; undefined when one symbol's history is not kept.
 */
async function latestDaily(
  sql: SqlSession,
  cache: StoreCache,
  symbols: readonly string[],
  lastClosed: string,
  session: string | undefined,
): Promise<Map<string, LatestDaily> | undefined> {
  const histories = [...new Set(symbols)].sort().map((symbol) => {
    const history = dailyHistory(sql, cache, symbol);
    return history === undefined ? undefined : ([symbol, history] as const);
  });
  if (histories.some((entry) => entry === undefined)) return undefined;
  const bySymbol = new Map<string, LatestDaily>();
  for (const [symbol, read] of histories as (readonly [string, Promise<DailyHistory>])[]) {
    const history = await read;
    let latest = lastOnOrBefore(
      history,
      session === undefined || session > lastClosed ? lastClosed : session,
    );
    if (session !== undefined && history.sessions[latest] !== session) latest = -1;
    bySymbol.set(symbol, { history, latest });
  }
  return bySymbol;
}

/**
 * Whether no minute bar counts beside each symbol's latest daily bar known. Minute bars count only for
 * sessions after it; with one session asked, that session's known daily bar leaves none. Otherwise the
 * ingest keeps a minute bar on its session's ET date, so one of a later session starts after that day
 * ends, and is known only once the cutoff (less the bar's minute) has reached a later ET date.
 */
function noMinuteBarKnown(
  daily: ReadonlyMap<string, LatestDaily>,
  knowledge: Knowledge,
  session: string | undefined,
): boolean {
  let minuteDay: string | undefined;
  for (const { history, latest } of daily.values()) {
    if (latest < 0) return false;
    if (session !== undefined) continue;
    minuteDay ??= toEtDate(knowledge.cutoffSeconds - 60);
    if (history.sessions[latest]! < minuteDay) return false;
  }
  return true;
}

/** The earliest of the symbols' latest known daily bars; null when a symbol has none (as the statement says). */
function earliestLatest(daily: ReadonlyMap<string, LatestDaily>): string | null {
  let earliest: string | null = null;
  for (const { history, latest } of daily.values()) {
    if (latest < 0) return null;
    const session = history.sessions[latest]!;
    if (earliest === null || session < earliest) earliest = session;
  }
  return earliest;
}

/**
 * `latestSessions` answered from the daily histories and, per symbol, the sessions after its latest daily
 * bar summarised from minute bars (latest first): each symbol's latest `count` sessions, latest first.
 */
function fromHistories(
  daily: ReadonlyMap<string, LatestDaily>,
  options: SessionOptions,
  minutes: ReadonlyMap<string, readonly SessionSummary[]>,
): Map<string, SessionSummary[]> {
  // A session asked alone has one daily bar at most.
  const count = options.session === undefined ? options.count : Math.min(1, options.count);
  const bySymbol = new Map<string, SessionSummary[]>();
  for (const [symbol, { history, latest }] of daily) {
    const list: SessionSummary[] = (minutes.get(symbol) ?? []).slice(0, Math.max(0, options.count));
    for (let i = latest; i >= 0 && i > latest - count && list.length < options.count; i--) {
      const session = history.sessions[i]!;
      list.push({
        symbol,
        session,
        o: history.o[i]!,
        h: history.h[i]!,
        l: history.l[i]!,
        c: history.c[i]!,
        v: history.v[i]!,
        knownAt: closeOf(session),
      });
    }
    if (list.length > 0) bySymbol.set(symbol, list);
  }
  return bySymbol;
}

/** Per symbol and session, what its minute bars (`minute_bars` of `minuteBarsSql`) sum up to, and when it was known. */
const MINUTE_SESSIONS_SQL = `
       SELECT symbol, session_date, arg_min(o, t) AS o, max(h) AS h, min(l) AS l, arg_max(c, t) AS c,
              sum(v) AS v, epoch(max(t)) + 60 AS known_at
       FROM minute_bars GROUP BY symbol, session_date`;

/**
 * One symbol's sessions after its latest daily bar known, summarised from the minute bars known at the
 * cutoff, latest first (at most `count`); read from the symbol's own minute files of those sessions.
 */
async function minuteSessions(
  sql: SqlSession,
  symbol: string,
  { history, latest }: LatestDaily,
  knowledge: Knowledge,
  options: SessionOptions,
): Promise<SessionSummary[]> {
  const floor = latest < 0 ? '0001-01-01' : history.sessions[latest]!;
  const minuteLimit = knowledge.cutoffSeconds - 60;
  const source = await sql.from(
    'stock_bars',
    { symbol, resolution: '1' },
    { first: floor, last: toEtDate(Math.max(0, minuteLimit)) },
  );
  const only = options.session === undefined ? '' : 'AND session_date = CAST($session AS DATE)';
  const bars = minuteBarsSql(
    `symbol = $symbol AND t <= to_timestamp($minuteLimit) AND session_date > CAST($floor AS DATE) ${only}`,
    { extended: options.extended, source },
  );
  const rows = await sql.all<SessionRow>(
    `WITH ${bars.sql},
     minute AS (${MINUTE_SESSIONS_SQL})
     SELECT CAST(session_date AS VARCHAR) AS session_date, CAST(o AS DOUBLE) AS o, CAST(h AS DOUBLE) AS h,
            CAST(l AS DOUBLE) AS l, CAST(c AS DOUBLE) AS c, CAST(v AS DOUBLE) AS v, known_at
     FROM minute ORDER BY session_date DESC LIMIT $count`,
    {
      symbol,
      minuteLimit,
      floor,
      count: Math.max(0, options.count),
      ...bars.params,
      ...(options.session === undefined ? {} : { session: options.session }),
    },
  );
  return rows.map((row) => summaryOf(symbol, row));
}

/** A stock's latest price known at the cutoff, with its change from the previous session's close. */
export type StockSnapshot = {
  readonly symbol: string;
  /** The session of the latest bar known. */
  readonly session: string;
  /** That session so far: its daily bar when known, else its minute bars known. */
  readonly candle: SessionSummary;
  /** The close of the latest bar known. */
  readonly last: number;
  /** `last` minus the previous session's close (split-adjusted to `session`); null without one. */
  readonly change: number | null;
  /** `change` as a fraction of the previous close. */
  readonly changepct: number | null;
  /** The session's volume so far. */
  readonly volume: number;
  /** When the latest bar became known. */
  readonly updated: number;
};

/** The snapshot of each symbol that has a bar known at the cutoff (the others are absent). */
export async function stockSnapshots(
  sql: SqlSession,
  cache: StoreCache,
  symbols: readonly string[],
  knowledge: Knowledge,
  extended: boolean,
): Promise<Map<string, StockSnapshot>> {
  const sessions = await latestSessions(sql, cache, symbols, knowledge, { count: 2, extended });
  const splits = await loadSplits(sql, cache, [...sessions.keys()], knowledge.splitsThrough);
  const snapshots = new Map<string, StockSnapshot>();
  for (const [symbol, [current, previous]] of sessions) {
    if (current === undefined) continue;
    let change: number | null = null;
    let changepct: number | null = null;
    if (previous !== undefined) {
      const factor = splitFactor(splits.get(symbol) ?? [], previous.session, current.session);
      const previousClose = previous.c / factor;
      change = round4(current.c - previousClose);
      changepct = previousClose === 0 ? null : round4((current.c - previousClose) / previousClose);
    }
    snapshots.set(symbol, {
      symbol,
      session: current.session,
      candle: current,
      last: current.c,
      change,
      changepct,
      volume: current.v,
      updated: current.knownAt,
    });
  }
  return snapshots;
}

/**
 * The symbols of a quote-like request: the path's symbol, else `symbols`, else (with `snapshot=true`
 * where allowed) every stored symbol; none of these is a 400.
 */
export async function requestedSymbols(
  sql: SqlSession,
  pathSymbol: string | undefined,
  listed: readonly string[] | undefined,
  snapshot: boolean,
): Promise<string[]> {
  if (pathSymbol !== undefined) return [normalizeSymbol(pathSymbol)];
  if (listed !== undefined) return [...listed];
  if (snapshot) return allSymbols(sql);
  throw badRequest('Invalid parameter symbols: a comma-separated list of symbols is required.');
}
