/**
 * What the stock and market endpoints share: the requested symbols, the "Symbol not found." and "Market
 * closed on this date." answers, and per-session summaries of the bars known at a cutoff (the ground of
 * stock quotes, prices and bulk candles). Their parameters are read with `../params.ts`.
 */
import { MarketDataError } from '../../errors.js';
import { isSession, toEtDate } from '../../market-time/index.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession, SqlValue } from '../../store/sql.js';
import {
  closeOf,
  type Knowledge,
  loadSplits,
  minuteBarsParams,
  minuteBarsSql,
  splitFactor,
} from '../candles.js';
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
  const found = await symbolFound(sql, symbol, knowledge);
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

/** `symbolKnown`, asked of the store. */
async function symbolFound(sql: SqlSession, symbol: string, knowledge: Knowledge): Promise<boolean> {
  const lastClosed = knowledge.lastClosedSession ?? '0001-01-01';
  const daily = await sql.from('stock_bars', { symbol, resolution: 'D' }, { last: lastClosed });
  const found = await sql.value<boolean>(
    `SELECT count(*) > 0 FROM (
       SELECT 1 FROM ${daily}
       WHERE symbol = $symbol AND resolution = 'D' AND session_date <= CAST($lastClosed AS DATE) LIMIT 1)`,
    { symbol, lastClosed },
  );
  if (found === true) return true;
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

/**
 * The latest `count` sessions of each symbol known at the cutoff, latest first. A session whose daily
 * bar is known is that bar; a later session (the one in progress, or one stored only as minute bars) is
 * summarised from its minute bars known at the cutoff (t + 60 ≤ cutoff).
 */
export async function latestSessions(
  sql: SqlSession,
  symbols: readonly string[],
  knowledge: Knowledge,
  options: SessionOptions,
): Promise<Map<string, SessionSummary[]>> {
  const params: Record<string, SqlValue> = {
    symbols: symbols.join(','),
    lastClosed: knowledge.lastClosedSession ?? '0001-01-01',
    minuteLimit: knowledge.cutoffSeconds - 60,
    count: options.count,
  };
  const onlySessionOf = (column: string) =>
    options.session === undefined ? '' : `AND ${column} = CAST($session AS DATE)`;
  const onlySession = onlySessionOf('session_date');
  if (options.session !== undefined) params['session'] = options.session;
  Object.assign(params, minuteBarsParams());
  // Minute bars matter only for sessions after the symbol's latest known daily bar. That bound depends on
  // the symbol, and the scan reads every minute bar under it; the earliest of the symbols' latest daily
  // bars, found first, is a constant the scan skips row groups by.
  params['minuteFloor'] =
    (await sql.value<string | null>(
      `SELECT CASE WHEN count(*) = count(last) THEN CAST(min(last) AS VARCHAR) END
       FROM (SELECT req.symbol, max(b.session_date) AS last
             FROM (SELECT DISTINCT unnest(string_split($symbols, ',')) AS symbol) req
             LEFT JOIN stock_bars b ON b.symbol = req.symbol AND b.resolution = 'D'
               AND b.session_date <= CAST($lastClosed AS DATE) ${onlySessionOf('b.session_date')}
             GROUP BY req.symbol)`,
      {
        symbols: params['symbols']!,
        lastClosed: params['lastClosed']!,
        ...(options.session === undefined ? {} : { session: options.session }),
      },
    )) ?? '0001-01-01';
  const minuteWhere = `symbol IN (SELECT symbol FROM req) AND t <= to_timestamp($minuteLimit)
    AND session_date > CAST($minuteFloor AS DATE)
    AND session_date > coalesce((SELECT daily_last FROM last_daily WHERE daily_symbol = symbol), DATE '0001-01-01')
    ${onlySession}`;
  const rows = await sql.all<{
    symbol: string;
    session_date: string;
    o: number;
    h: number;
    l: number;
    c: number;
    v: number;
    known_at: number | null;
  }>(
    `WITH req AS (SELECT DISTINCT unnest(string_split($symbols, ',')) AS symbol),
     daily AS (
       SELECT symbol, session_date, o, h, l, c, v, CAST(NULL AS DOUBLE) AS known_at
       FROM stock_bars
       WHERE resolution = 'D' AND symbol IN (SELECT symbol FROM req)
         AND session_date <= CAST($lastClosed AS DATE) ${onlySession}
     ),
     last_daily AS (SELECT symbol AS daily_symbol, max(session_date) AS daily_last FROM daily GROUP BY symbol),
     ${minuteBarsSql(minuteWhere, options.extended)},
     minute AS (
       SELECT symbol, session_date, arg_min(o, t) AS o, max(h) AS h, min(l) AS l, arg_max(c, t) AS c,
              sum(v) AS v, epoch(max(t)) + 60 AS known_at
       FROM minute_bars GROUP BY symbol, session_date
     ),
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
    list.push({
      symbol: row.symbol,
      session: row.session_date,
      o: row.o,
      h: row.h,
      l: row.l,
      c: row.c,
      v: row.v,
      knownAt: row.known_at ?? closeOf(row.session_date),
    });
    bySymbol.set(row.symbol, list);
  }
  return bySymbol;
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
  symbols: readonly string[],
  knowledge: Knowledge,
  extended: boolean,
): Promise<Map<string, StockSnapshot>> {
  const sessions = await latestSessions(sql, symbols, knowledge, { count: 2, extended });
  const splits = await loadSplits(sql, [...sessions.keys()], knowledge.splitsThrough);
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
