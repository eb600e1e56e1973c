/**
 * A symbol's stored daily bars, all of them, kept in the session cache for a data version. Stock answers
 * at an instant (quotes, prices, daily candles, whether a symbol exists yet) filter them by what is known
 * at the cutoff instead of asking DuckDB a statement each: a backtest's loop asks a stock quote or a
 * settlement bar now and then, each some 10–25 ms of statements, and a server's random traffic the same.
 *
 * The bars are kept whole (not only those known at one cutoff): entries of the cache belong to a data
 * version, never to an instant, and every reader filters by the knowledge of its request. Daily bars are
 * small (a row per session: 5,000 for twenty years), but a symbol with more than
 * {@link DAILY_HISTORY_ROWS}, or one whose history would take more than a quarter of the session cache,
 * is answered by the statements as before (`undefined` here).
 */
import type { StoreCache } from '../store/cache.js';
import type { SqlSession } from '../store/sql.js';

/** A symbol's daily bars in session order, prices as stored (DECIMAL read as DOUBLE). */
export type DailyHistory = {
  readonly sessions: readonly string[];
  readonly o: Float64Array;
  readonly h: Float64Array;
  readonly l: Float64Array;
  readonly c: Float64Array;
  readonly v: Float64Array;
};

/** The most rows of one symbol's daily bars kept in memory (some 80 years of sessions). */
export const DAILY_HISTORY_ROWS = 20_000;

/** About what one kept bar costs: five numbers and its session's text. */
const BYTES_PER_BAR = 5 * 8 + 64;

/**
 * `symbol`'s daily history, read once per data version; undefined when it is not kept in memory (too
 * many rows for the cache, or a store whose manifest does not say how many) or the symbol has no daily
 * bar file — the caller then asks its statement.
 */
export function dailyHistory(
  sql: SqlSession,
  cache: StoreCache,
  symbol: string,
): Promise<DailyHistory> | undefined {
  const key = `daily-history:${symbol}`;
  const held = cache.heldSized<DailyHistory>(key);
  if (held !== undefined) return held;
  // Decided once per version for a symbol not kept: the manifest walk is not made again on every request.
  const refused = cache.state(REFUSED_KEY, () => new Set<string>());
  if (refused.has(symbol)) return undefined;
  const extent = sql.extent('stock_bars', { symbol, resolution: 'D' });
  if (
    extent === undefined ||
    extent.rows > DAILY_HISTORY_ROWS ||
    extent.rows * BYTES_PER_BAR > cache.sessionCacheCapacity / 4
  ) {
    if (refused.size >= REFUSED_SYMBOLS) refused.clear();
    refused.add(symbol);
    return undefined;
  }
  return cache.sized(key, () => readHistory(sql, symbol), bytesOf);
}

/** Where the store's cache keeps the symbols whose histories are not kept (see `dailyHistory`). */
const REFUSED_KEY = 'daily-history|refused';
/** The most such symbols remembered; past it they are forgotten, all at once (request names are unbounded). */
const REFUSED_SYMBOLS = 10_000;

function bytesOf(history: DailyHistory): number {
  return 256 + history.sessions.length * BYTES_PER_BAR;
}

async function readHistory(sql: SqlSession, symbol: string): Promise<DailyHistory> {
  const source = await sql.from('stock_bars', { symbol, resolution: 'D' });
  // Prices come back as DOUBLE, exactly as the statements they stand for read them.
  const { columns } = await sql.typedColumns(
    `SELECT CAST(session_date AS VARCHAR), CAST(o AS DOUBLE), CAST(h AS DOUBLE), CAST(l AS DOUBLE),
            CAST(c AS DOUBLE), CAST(v AS DOUBLE)
     FROM ${source}
     WHERE symbol = $symbol AND resolution = 'D'
     ORDER BY session_date`,
    { symbol },
  );
  const [sessions, o, h, l, c, v] = columns as [string[], ...Float64Array[]];
  return { sessions, o: o!, h: h!, l: l!, c: c!, v: v! };
}

/** The index of the latest session on or before `date` (YYYY-MM-DD), or -1. */
export function lastOnOrBefore(history: DailyHistory, date: string): number {
  return sessionsThrough(history.sessions, date) - 1;
}

/** The index of the earliest session on or after `date`, or the number of bars when there is none. */
export function firstOnOrAfter(history: DailyHistory, date: string): number {
  return sessionsThrough(history.sessions, date, true);
}

/** How many of the ascending `sessions` are ≤ `date` (or < `date`, `strictly`). */
function sessionsThrough(sessions: readonly string[], date: string, strictly = false): number {
  let low = 0;
  let high = sessions.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const session = sessions[middle]!;
    if (strictly ? session < date : session <= date) low = middle + 1;
    else high = middle;
  }
  return low;
}
