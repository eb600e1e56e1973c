/**
 * Stock bars as the candle endpoints see them: candle resolutions, what is known at a cutoff instant, split
 * adjustment, and the aggregation of stored bars ('1' minute and 'D' daily) into candles of any resolution.
 *
 * Known-at (semantics §3 applied to bars): a 1-minute bar starting at t is known at t + 60; a daily bar at
 * its session's close; an aggregated candle only once its whole period is over (an N-minute candle at
 * min(start + N minutes, session close), a weekly candle at the close of the week's last session). A split
 * is known from its ex-date on, so history is adjusted only for splits whose ex-date has come by the
 * request's clock T.
 */
import {
  CALENDAR_FIRST_YEAR,
  CALENDAR_LAST_YEAR,
  etMidnightSeconds,
  etWallToSeconds,
  isEarlyClose,
  isSession,
  lastSessionOfMonth,
  MARKET_ZONE,
  nextSession,
  previousSession,
  sessionCloseSeconds,
  sessionOpenSeconds,
  toEtDate,
} from '../market-time/index.js';
import type { StoreCache } from '../store/cache.js';
import type { SqlSession, SqlValue } from '../store/sql.js';
import { type DailyHistory, dailyHistory, firstOnOrAfter, lastOnOrBefore } from './daily-history.js';
import type { AsOf } from './types.js';

/** A candle resolution: N minutes (hours are 60·N minutes) or N sessions, weeks, months or years. */
export type Resolution =
  | { readonly unit: 'minutes'; readonly count: number }
  | { readonly unit: 'days' | 'weeks' | 'months' | 'years'; readonly count: number };

// Maps, not object literals: the words come from the request path, and `constructor` is no resolution.
const RESOLUTION_WORDS: ReadonlyMap<string, Resolution> = new Map([
  ['minutely', { unit: 'minutes', count: 1 }],
  ['hourly', { unit: 'minutes', count: 60 }],
  ['daily', { unit: 'days', count: 1 }],
  ['weekly', { unit: 'weeks', count: 1 }],
  ['monthly', { unit: 'months', count: 1 }],
  ['yearly', { unit: 'years', count: 1 }],
]);

const RESOLUTION_LETTERS: ReadonlyMap<string, 'hours' | Resolution['unit']> = new Map([
  ['h', 'hours'],
  ['d', 'days'],
  ['w', 'weeks'],
  ['m', 'months'],
  ['y', 'years'],
]);

/** The largest N accepted in a resolution (`999999`, `999999D`). */
const MAX_RESOLUTION_COUNT = 999_999;

/**
 * Reads a resolution as the candles endpoint spells it, case-insensitively: `minutely`, `1`, `5`, any N
 * (minutes); `hourly`, `H`, `1H`, `4H` (hours); `daily`, `D`, `2D`; `weekly`, `W`; `monthly`, `M`;
 * `yearly`, `Y`. Returns undefined for anything else.
 */
export function parseResolution(text: string): Resolution | undefined {
  const lower = text.trim().toLowerCase();
  const word = RESOLUTION_WORDS.get(lower);
  if (word !== undefined) return word;
  const match = /^(\d{0,6})([a-z]?)$/.exec(lower);
  if (match === null || lower === '') return undefined;
  const [, digits, letter] = match;
  const count = digits === '' ? 1 : Number(digits);
  if (!(count >= 1 && count <= MAX_RESOLUTION_COUNT)) return undefined;
  if (letter === '') return { unit: 'minutes', count };
  const unit = RESOLUTION_LETTERS.get(letter!);
  if (unit === undefined) return undefined;
  return unit === 'hours' ? { unit: 'minutes', count: count * 60 } : { unit, count };
}

/** Whether a resolution is built from minute bars (minutes and hours). */
export function isIntraday(resolution: Resolution): boolean {
  return resolution.unit === 'minutes';
}

/** What the store may serve at a request's as-of: instants up to `cutoffSeconds`, and the splits by then. */
export type Knowledge = {
  /** Values known at or before this instant (epoch seconds) may be served. */
  readonly cutoffSeconds: number;
  /** The latest session whose daily bar is known (its close ≤ cutoff), or null when none is. */
  readonly lastClosedSession: string | null;
  /** Splits with an ex-date on or before this ET date are known: the date of the request's clock T. */
  readonly splitsThrough: string;
};

const DAY_MS = 86_400_000;

/** An instant before any stored bar, standing for "nothing is known yet". */
const NOTHING_KNOWN_SECONDS = -2_208_988_800;

/** The close of a session, or 16:00 ET for a date outside the calendar's years. */
export function closeOf(date: string): number {
  try {
    return sessionCloseSeconds(date);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return etWallToSeconds(date, '16:00');
  }
}

function yearOf(date: string): number {
  return Number(date.slice(0, 4));
}

/** The latest session whose close is at or before `cutoffSeconds`, or null before the calendar starts. */
export function lastClosedSessionAt(cutoffSeconds: number): string | null {
  if (cutoffSeconds <= NOTHING_KNOWN_SECONDS) return null;
  const date = toEtDate(cutoffSeconds);
  const year = yearOf(date);
  if (year < CALENDAR_FIRST_YEAR) return null;
  if (year > CALENDAR_LAST_YEAR) return lastSessionOfMonth(CALENDAR_LAST_YEAR, 12);
  if (isSession(date) && sessionCloseSeconds(date) <= cutoffSeconds) return date;
  const previous = previousSession(date);
  return yearOf(previous) < CALENDAR_FIRST_YEAR ? null : previous;
}

/**
 * What is known at a request's as-of (types.ts `AsOf`) and clock T: a dated request knows session D
 * through its close; a current one everything up to its cutoff, and with `eodOnly` nothing after the close
 * of `maxSession` (nothing at all without one). Splits are known by their ex-date at T in either case: a
 * request made at T sees history adjusted for the splits that have happened by then, as the service does.
 */
export function knowledgeAt(asOf: AsOf, nowSeconds: number): Knowledge {
  let cutoff: number;
  if (asOf.kind === 'dated') cutoff = closeOf(asOf.session);
  else if (!asOf.eodOnly) cutoff = asOf.cutoffSeconds;
  else if (asOf.maxSession === null) cutoff = NOTHING_KNOWN_SECONDS;
  else cutoff = Math.min(asOf.cutoffSeconds, closeOf(asOf.maxSession));
  return {
    cutoffSeconds: cutoff,
    lastClosedSession: lastClosedSessionAt(cutoff),
    splitsThrough: toEtDate(nowSeconds),
  };
}

/** Regular hours 09:30–close; extended hours as the service counts them, 04:00–20:00 ET. */
const EXTENDED_OPEN = '04:00';
const EXTENDED_CLOSE = '20:00';

/**
 * The latest start `t` of a minute bar that may go into a complete candle of `widthSeconds` at the cutoff.
 * Candles are aligned to 09:30 ET of their session; within the trading window of the cutoff's session
 * the candle in progress is left out whole, outside it every minute bar known (t + 60 ≤ cutoff) counts.
 */
export function minuteLimitSeconds(cutoffSeconds: number, widthSeconds: number, extended: boolean): number {
  const known = cutoffSeconds - 60;
  if (cutoffSeconds <= NOTHING_KNOWN_SECONDS) return known;
  const date = toEtDate(cutoffSeconds);
  let open: number;
  let windowOpen: number;
  let windowClose: number;
  try {
    if (!isSession(date)) return known;
    open = sessionOpenSeconds(date);
    windowOpen = extended ? etWallToSeconds(date, EXTENDED_OPEN) : open;
    windowClose = extended ? etWallToSeconds(date, EXTENDED_CLOSE) : sessionCloseSeconds(date);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return known;
  }
  if (cutoffSeconds < windowOpen || cutoffSeconds >= windowClose) return known;
  const candleStart = open + Math.floor((cutoffSeconds - open) / widthSeconds) * widthSeconds;
  return Math.min(candleStart - 60, known);
}

let earlyCloseList: string | undefined;

/** Every early-close session of the calendar, comma-joined (a bound parameter of the hours filter). */
export function earlyCloseDates(): string {
  if (earlyCloseList === undefined) {
    const dates: string[] = [];
    const last = dayIndex(`${CALENDAR_LAST_YEAR}-12-31`);
    for (let day = dayIndex(`${CALENDAR_FIRST_YEAR}-01-01`); day <= last; day++) {
      const date = dateOfIndex(day);
      if (isEarlyClose(date)) dates.push(date);
    }
    earlyCloseList = dates.join(',');
  }
  return earlyCloseList;
}

/** The CTEs of `minuteBarsSql` and the parameters they bind (spread them into the statement's). */
export type MinuteBarsSql = { readonly sql: string; readonly params: Readonly<Record<string, string>> };

/**
 * SQL of the CTEs over the stored minute bars matching `where` (which may use bound parameters), ending
 * in `minute_bars`: the bars inside regular hours unless `extended`, with `open_s` (09:30 ET of their
 * session, as epoch seconds) when `opens` is asked. A statement that needs a session's open, or its
 * regular hours, gets `minute_raw` (the bars) and `minute_days` (per session: `open_s`, computed once per
 * session with DuckDB's time zones so DST days are exact, and the regular session's length), which bind
 * the early-close sessions and the market's zone (from `market-time/`, like every other Eastern-time
 * rule). One that needs neither (a session summary with extended hours) reads the bars alone: planning
 * `minute_days` was some 4 ms of a one-session summary's 10. `source` names the bars read: the whole
 * table's view, or one partition's files (`SqlSession.from`).
 */
export function minuteBarsSql(
  where: string,
  { extended, opens = false, source = 'stock_bars' }: { extended: boolean; opens?: boolean; source?: string },
): MinuteBarsSql {
  const raw = `minute_raw AS (
       SELECT symbol, session_date, t, o, h, l, c, v FROM ${source} WHERE resolution = '1' AND ${where}
     )`;
  if (extended && !opens) return { sql: `${raw}, minute_bars AS (SELECT * FROM minute_raw)`, params: {} };
  return {
    sql: `${raw}, minute_days AS (
       SELECT session_date,
              epoch(timezone($zone, CAST(session_date AS TIMESTAMP) + INTERVAL 570 MINUTE)) AS open_s,
              CASE WHEN session_date IN (SELECT CAST(unnest(string_split($early, ',')) AS DATE)) THEN 12600 ELSE 23400 END AS regular_s
       FROM (SELECT DISTINCT session_date FROM minute_raw)
     ), minute_bars AS (
       SELECT minute_raw.*, open_s FROM minute_raw JOIN minute_days USING (session_date)
       ${extended ? '' : 'WHERE epoch(t) >= open_s AND epoch(t) < open_s + regular_s'}
     )`,
    params: { early: earlyCloseDates(), zone: MARKET_ZONE },
  };
}

/** One split: from `exDate` on, one old share is `ratio` new shares. */
export type Split = { readonly exDate: string; readonly ratio: number };

/** The splits of `symbols` known by `through` (ex-date ≤ through), ascending by ex-date, by symbol. */
export async function loadSplits(
  sql: SqlSession,
  cache: StoreCache,
  symbols: readonly string[],
  through: string,
): Promise<Map<string, Split[]>> {
  const wanted = new Set(symbols);
  const bySymbol = new Map<string, Split[]>();
  for (const row of await allSplits(sql, cache)) {
    if (!wanted.has(row.symbol) || row.exDate > through) continue;
    const list = bySymbol.get(row.symbol) ?? [];
    list.push({ exDate: row.exDate, ratio: row.ratio });
    bySymbol.set(row.symbol, list);
  }
  return bySymbol;
}

/** About what one kept split costs: its object and its two texts. */
const SPLIT_BYTES = 120;

/**
 * Every split of the store (positive ratios), by symbol then ex-date, read once per data version: a
 * statement per stock answer cost more than the table (a row per split) takes to keep.
 */
function allSplits(
  sql: SqlSession,
  cache: StoreCache,
): Promise<readonly { symbol: string; exDate: string; ratio: number }[]> {
  return cache.sized(
    'splits',
    async () => {
      const rows = await sql.all<{ symbol: string; ex_date: string; ratio: number }>(
        'SELECT symbol, ex_date, ratio FROM splits WHERE ratio > 0 ORDER BY symbol, ex_date',
      );
      return rows.map((row) => ({ symbol: row.symbol, exDate: row.ex_date, ratio: row.ratio }));
    },
    (rows) => 64 + rows.length * SPLIT_BYTES,
  );
}

/** The split factor of a bar of session `date` seen from `basis`: the product of ratios with date < ex-date ≤ basis. */
export function splitFactor(splits: readonly Split[], date: string, basis?: string): number {
  let factor = 1;
  for (const split of splits) {
    if (split.exDate > date && (basis === undefined || split.exDate <= basis)) factor *= split.ratio;
  }
  return factor;
}

/**
 * A SQL expression of the split factor of a row's `session_date` (1 when no split applies), with its
 * bound parameters (`$ex0`, `$f0`, …). `splits` are ascending and already limited to the known ones.
 */
export function splitFactorSql(splits: readonly Split[]): { sql: string; params: Record<string, SqlValue> } {
  if (splits.length === 0) return { sql: '1.0', params: {} };
  const params: Record<string, SqlValue> = {};
  const cases = splits.map((split, i) => {
    params[`ex${i}`] = split.exDate;
    params[`f${i}`] = splitFactor(splits.slice(i), '0000-00-00');
    return `WHEN session_date < CAST($ex${i} AS DATE) THEN CAST($f${i} AS DOUBLE)`;
  });
  return { sql: `(CASE ${cases.join(' ')} ELSE 1.0 END)`, params };
}

/** A price divided by a split factor, to the 4 decimals the store keeps. */
export function adjustPrice(price: number, factor: number): number {
  return factor === 1 ? price : Math.round((price / factor) * 10_000) / 10_000;
}

/** A volume multiplied by a split factor, as a whole number of shares. */
export function adjustVolume(volume: number, factor: number): number {
  return factor === 1 ? volume : Math.round(volume * factor);
}

/** A candle: `t` is its start (intraday) or 00:00 ET of its first session; `knownAt` when it became complete. */
export type Candle = {
  readonly t: number;
  readonly o: number;
  readonly h: number;
  readonly l: number;
  readonly c: number;
  readonly v: number;
  readonly knownAt: number;
};

/** The intraday candles of one symbol in `[fromSeconds, toSeconds]` (by start), or the last `countback`. */
export type IntradayQuery = {
  readonly symbol: string;
  readonly widthSeconds: number;
  readonly fromSeconds: number;
  readonly toSeconds: number;
  /** Keep only the last N candles of the range. */
  readonly countback?: number;
  readonly extended: boolean;
  readonly splits: readonly Split[];
  /** Minute bars starting after this instant are not used (see `minuteLimitSeconds`). */
  readonly limitSeconds: number;
};

/**
 * Aggregates stored 1-minute bars into candles of `widthSeconds` aligned to 09:30 ET of each session
 * (4H candles start 09:30 and 13:30), split-adjusted with `splits`. Only minute bars up to
 * `limitSeconds` are read, so every candle returned is complete.
 */
export async function intradayCandles(sql: SqlSession, query: IntradayQuery): Promise<Candle[]> {
  const factor = splitFactorSql(query.splits);
  const order = query.countback === undefined ? 'ASC' : 'DESC';
  const limit = query.countback === undefined ? '' : 'LIMIT $countback';
  const bars = minuteBarsSql(
    'symbol = $symbol AND t >= to_timestamp($readFrom) AND t <= to_timestamp($readTo)',
    {
      extended: query.extended,
      opens: true,
    },
  );
  const params: Record<string, SqlValue> = {
    symbol: query.symbol,
    width: query.widthSeconds,
    from: query.fromSeconds,
    to: query.toSeconds,
    readFrom: query.fromSeconds,
    // A candle starting in range may hold minutes up to one width past `to`.
    readTo: Math.min(query.toSeconds + query.widthSeconds, query.limitSeconds),
    ...bars.params,
    ...factor.params,
  };
  if (query.countback !== undefined) params['countback'] = query.countback;
  const { columns } = await sql.columns(
    `WITH ${bars.sql},
     candles AS (
       SELECT session_date, open_s + floor((epoch(t) - open_s) / $width) * $width AS start,
              arg_min(o, t) AS o, max(h) AS h, min(l) AS l, arg_max(c, t) AS c, sum(v) AS v,
              epoch(max(t)) AS last
       FROM minute_bars GROUP BY session_date, open_s, start
     )
     SELECT start, CAST(o AS DOUBLE), CAST(h AS DOUBLE), CAST(l AS DOUBLE), CAST(c AS DOUBLE),
            CAST(v AS DOUBLE), last, ${factor.sql}
     FROM candles WHERE start >= $from AND start <= $to
     ORDER BY start ${order} ${limit}`,
    params,
  );
  const [t, o, h, l, c, v, last, factors] = numberColumns(columns, 8);
  const candles = t.map((start, i) => {
    const factor = factors[i]!;
    return {
      t: start,
      o: adjustPrice(o[i]!, factor),
      h: adjustPrice(h[i]!, factor),
      l: adjustPrice(l[i]!, factor),
      c: adjustPrice(c[i]!, factor),
      v: adjustVolume(v[i]!, factor),
      knownAt: last[i]! + 60,
    };
  });
  return order === 'DESC' ? candles.reverse() : candles;
}

/** `count` number columns, as a tuple of that length. */
type NumberColumns<N extends number, Acc extends number[][] = []> = Acc['length'] extends N
  ? Acc
  : NumberColumns<N, [...Acc, number[]]>;

/** The first `count` columns of a query result as numbers (a result without rows has no columns). */
function numberColumns<N extends number>(columns: readonly unknown[][], count: N): NumberColumns<N> {
  return Array.from({ length: count }, (_, i) => (columns[i] ?? []) as number[]) as NumberColumns<N>;
}

/** The start of the intraday candle of `widthSeconds` holding a minute bar of session `date` at `t`. */
export function intradayCandleStart(date: string, t: number, widthSeconds: number): number {
  const open = etWallToSeconds(date, '09:30');
  return open + Math.floor((t - open) / widthSeconds) * widthSeconds;
}

/** A stored daily bar (already split-adjusted when the caller wants it). */
export type DailyBar = {
  readonly date: string;
  readonly o: number;
  readonly h: number;
  readonly l: number;
  readonly c: number;
  readonly v: number;
};

/** A daily-or-longer candle before its `t` is computed: its first and last session and whether it is complete. */
export type Period = DailyBar & { readonly lastDate: string; readonly complete: boolean };

/**
 * The known daily bars of `symbol` (session ≤ `through`, and ≥ `from` when given), ascending,
 * split-adjusted when `splits` is given; from the symbol's daily history in memory when it is kept.
 */
export async function knownDailyBars(
  sql: SqlSession,
  cache: StoreCache,
  symbol: string,
  through: string,
  splits: readonly Split[] | undefined,
  from?: string,
): Promise<DailyBar[]> {
  const history = await dailyHistory(sql, cache, symbol);
  const { dates, o, h, l, c, v } =
    history === undefined
      ? await readDailyBars(sql, symbol, through, from)
      : historyBetween(history, from, through);
  return dates.map((date, i) => {
    const factor = splits === undefined ? 1 : splitFactor(splits, date);
    return {
      date,
      o: adjustPrice(o[i]!, factor),
      h: adjustPrice(h[i]!, factor),
      l: adjustPrice(l[i]!, factor),
      c: adjustPrice(c[i]!, factor),
      v: adjustVolume(v[i]!, factor),
    };
  });
}

/** Daily bars as columns, ascending: read by a statement, or sliced from a history kept in memory. */
type DailyColumns = {
  readonly dates: readonly string[];
  readonly o: ArrayLike<number>;
  readonly h: ArrayLike<number>;
  readonly l: ArrayLike<number>;
  readonly c: ArrayLike<number>;
  readonly v: ArrayLike<number>;
};

/** `knownDailyBars` asked of the store, for a symbol whose history is not kept. */
async function readDailyBars(
  sql: SqlSession,
  symbol: string,
  through: string,
  from: string | undefined,
): Promise<DailyColumns> {
  // Prices come back as DOUBLE: converting DECIMAL values one by one in JS costs more than the query.
  const { columns } = await sql.columns(
    `SELECT CAST(session_date AS VARCHAR), CAST(o AS DOUBLE), CAST(h AS DOUBLE), CAST(l AS DOUBLE),
            CAST(c AS DOUBLE), CAST(v AS DOUBLE)
     FROM stock_bars
     WHERE symbol = $symbol AND resolution = 'D' AND session_date <= CAST($through AS DATE)
       AND session_date >= CAST($from AS DATE)
     ORDER BY session_date`,
    { symbol, through, from: from ?? '0001-01-01' },
  );
  const [, o, h, l, c, v] = numberColumns(columns, 6);
  return { dates: (columns[0] ?? []) as string[], o: o!, h: h!, l: l!, c: c!, v: v! };
}

/** The bars of a daily history with `from` ≤ session ≤ `through`. */
function historyBetween(history: DailyHistory, from: string | undefined, through: string): DailyColumns {
  const start = from === undefined ? 0 : firstOnOrAfter(history, from);
  const end = lastOnOrBefore(history, through) + 1;
  const slice = (column: Float64Array) => column.subarray(start, Math.max(start, end));
  return {
    dates: history.sessions.slice(start, Math.max(start, end)),
    o: slice(history.o),
    h: slice(history.h),
    l: slice(history.l),
    c: slice(history.c),
    v: slice(history.v),
  };
}

/**
 * The first calendar day of the daily-or-longer candle holding `date`, so that reading bars from there on
 * builds that candle whole; undefined for `ND` with N > 1, whose runs are counted from the first bar.
 */
export function periodStart(date: string, resolution: Resolution): string | undefined {
  switch (resolution.unit) {
    case 'minutes':
      return date;
    case 'days':
      return resolution.count === 1 ? date : undefined;
    default:
      return groupBounds(
        groupKey(date, resolution.unit, resolution.count),
        resolution.unit,
        resolution.count,
      )[0];
  }
}

/** Calendar days that surely hold `periods` candles of a daily-or-longer resolution (with holidays). */
export function daysForPeriods(periods: number, resolution: Resolution): number {
  const n = periods * resolution.count;
  switch (resolution.unit) {
    case 'minutes':
    case 'days':
      return 2 * n + 10;
    case 'weeks':
      return 7 * n + 7;
    case 'months':
      return 31 * n + 31;
    case 'years':
      return 366 * n + 366;
  }
}

/** `date` moved by whole days. */
export function shiftDate(date: string, days: number): string {
  return dateOfIndex(dayIndex(date) + days);
}

function dayIndex(date: string): number {
  return Date.parse(`${date}T00:00:00Z`) / DAY_MS;
}

function dateOfIndex(index: number): string {
  return new Date(index * DAY_MS).toISOString().slice(0, 10);
}

/** A Monday: weeks of `nW` candles are counted from it. */
const WEEK_ANCHOR = dayIndex('1970-01-05');

function yearText(year: number): string {
  return String(year).padStart(4, '0');
}

type CalendarUnit = 'weeks' | 'months' | 'years';

/** The group of a session date: N weeks counted from `WEEK_ANCHOR`, N months from year 0, N years. */
function groupKey(date: string, unit: CalendarUnit, count: number): number {
  if (unit === 'weeks') return Math.floor((dayIndex(date) - WEEK_ANCHOR) / (7 * count));
  const year = yearOf(date);
  if (unit === 'years') return Math.floor(year / count);
  return Math.floor((year * 12 + Number(date.slice(5, 7)) - 1) / count);
}

function monthStart(month: number): string {
  return `${yearText(Math.floor(month / 12))}-${String((month % 12) + 1).padStart(2, '0')}-01`;
}

/** The first and last calendar days of a group. */
function groupBounds(key: number, unit: CalendarUnit, count: number): [string, string] {
  if (unit === 'weeks') {
    const first = WEEK_ANCHOR + key * 7 * count;
    return [dateOfIndex(first), dateOfIndex(first + 7 * count - 1)];
  }
  if (unit === 'years') return [`${yearText(key * count)}-01-01`, `${yearText((key + 1) * count - 1)}-12-31`];
  return [monthStart(key * count), shiftDate(monthStart((key + 1) * count), -1)];
}

/** Whether every session up to `lastDay` has closed, given the latest closed session. */
function closedThrough(lastDay: string, lastClosedSession: string): boolean {
  if (lastDay <= lastClosedSession) return true;
  try {
    return nextSession(lastClosedSession) > lastDay;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return false;
  }
}

/**
 * Groups daily bars into daily-or-longer candles: `ND` = runs of N stored sessions counted from the
 * symbol's first bar; `NW` = N weeks (Monday–Sunday) counted from 1970-01-05; `NM` = N calendar months
 * counted from January of year 0 (3M = quarters); `NY` = N calendar years. A candle is complete when its
 * last session has closed (ND: when it holds N sessions).
 */
export function groupDaily(
  bars: readonly DailyBar[],
  resolution: Resolution,
  lastClosedSession: string,
): Period[] {
  if (resolution.unit === 'minutes') throw new RangeError('groupDaily needs a daily-or-longer resolution');
  const { unit, count } = resolution;
  const periods: Period[] = [];
  let current: { key: number; lastDay: string; bars: DailyBar[] } | undefined;
  const flush = () => {
    if (current === undefined) return;
    const group = current.bars;
    const first = group[0]!;
    const last = group[group.length - 1]!;
    let h = first.h;
    let l = first.l;
    let v = 0;
    for (const bar of group) {
      if (bar.h > h) h = bar.h;
      if (bar.l < l) l = bar.l;
      v += bar.v;
    }
    const complete =
      unit === 'days' ? group.length === count : closedThrough(current.lastDay, lastClosedSession);
    periods.push({ date: first.date, o: first.o, h, l, c: last.c, v, lastDate: last.date, complete });
    current = undefined;
  };
  bars.forEach((bar, index) => {
    const key = unit === 'days' ? Math.floor(index / count) : groupKey(bar.date, unit, count);
    if (current !== undefined && current.key !== key) flush();
    if (current === undefined) {
      const lastDay = unit === 'days' ? bar.date : groupBounds(key, unit, count)[1];
      current = { key, lastDay, bars: [] };
    }
    current.bars.push(bar);
  });
  flush();
  return periods;
}

/** A daily-or-longer candle with its `t` (00:00 ET of its first session) and known-at (its last close). */
export function periodCandle(period: Period): Candle {
  return {
    t: etMidnightSeconds(period.date),
    o: period.o,
    h: period.h,
    l: period.l,
    c: period.c,
    v: period.v,
    knownAt: closeOf(period.lastDate),
  };
}
