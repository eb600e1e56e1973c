/**
 * `GET /v1/stocks/candles/{resolution}/{symbol}/`: candles of any resolution aggregated in Eastern time
 * from the stored bars known at the as-of (see `../candles.ts` for the known-at and alignment rules).
 *
 * - Range: `from` and `to` inclusive (a date `to` covers its whole day), or `countback` candles ending at
 *   `to` (`to` defaults to now), or `date` (one day). No dates: the most recent candle.
 * - 413 when an intraday range spans one year or more in Eastern time (one year minus one second is
 *   allowed); an intraday `countback` looks back less than one year from `to`.
 * - `extended` (default false): minute bars outside 09:30–close are used only when true, and only if the
 *   store holds any (ingest formats usually keep regular hours only, so true usually adds nothing).
 * - `adjustsplits` (default true daily and longer, false intraday) divides prices and multiplies volumes
 *   of bars before each split ex-date known at the as-of. `adjustdividends` (default true daily, false
 *   intraday): the store keeps no dividends, so a "fully adjusted" daily series equals the split-adjusted
 *   one; the service's refusals are kept (daily `adjustsplits=false` without `adjustdividends=false`, and
 *   intraday `adjustdividends=true`, are 400).
 * - Unknown symbol at the as-of: 404 "Symbol not found." (semantics §6 wins over the reference's
 *   markerless 404). No candle in range: 404 no_data with `nextTime`/`prevTime` among known candles.
 */
import { z } from 'zod';
import { MarketDataError } from '../../errors.js';
import {
  type Clock,
  etDateOf,
  etMidnightSeconds,
  type ParsedDate,
  resolveRelative,
} from '../../market-time/index.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import {
  type Candle,
  daysForPeriods,
  groupDaily,
  intradayCandleStart,
  intradayCandles,
  isIntraday,
  type Knowledge,
  knowledgeAt,
  knownDailyBars,
  loadSplits,
  minuteBarsSql,
  minuteLimitSeconds,
  parseResolution,
  periodCandle,
  periodStart,
  type Resolution,
  type Split,
  shiftDate,
} from '../candles.js';
import { MARKET_CLOSED, SYMBOL_NOT_FOUND } from '../no-data.js';
import {
  booleanParam,
  clockedParser,
  countParam,
  dateOrRelativeParam,
  dayParam,
  normalizeSymbol,
  resolveDateParam,
  textParam,
} from '../params.js';
import type { Answer, Endpoint, EndpointContext, EndpointResult, FieldKind, NoData } from '../types.js';
import { badRequest, field, isTradingDay, requestedDay, symbolKnown } from './stocks-common.js';

/** The errmsg of the 413 for an intraday range of one year or more. */
export const INTRADAY_RANGE_TOO_LARGE =
  'Intraday candle requests must span less than one year (checked in Eastern time). Split the range into requests of less than one year each.';

/** The errmsg of the 400 for daily `adjustsplits=false` while `adjustdividends` is true (its default). */
export const DIVIDEND_ONLY_UNSUPPORTED =
  'Unsupported combination: adjustsplits=false with adjustdividends=true (the daily default). A dividend-only series is not offered; for unadjusted prices set both adjustsplits=false and adjustdividends=false.';

/** The errmsg of the 400 for intraday `adjustdividends=true`. */
export const INTRADAY_DIVIDENDS_UNSUPPORTED =
  'adjustdividends=true is not supported for intraday candles; dividend adjustment applies to daily and longer resolutions only.';

/** The errmsg of the 400 for a resolution the endpoint does not know. */
export function invalidResolution(text: string): string {
  return `Invalid resolution "${text}". Use minutes (minutely, 1, 5, 15, …), hours (hourly, H, 4H), daily (D, 2D), weekly (W), monthly (M) or yearly (Y).`;
}

function candlesQuery(clock: Clock) {
  return z.object({
    from: dateOrRelativeParam(clock).optional(),
    to: dateOrRelativeParam(clock).optional(),
    countback: countParam.optional(),
    date: dayParam(clock).optional(),
    extended: booleanParam.optional(),
    adjustsplits: booleanParam.optional(),
    adjustdividends: booleanParam.optional(),
    /** Legacy parameters of the service: accepted and ignored. */
    exchange: textParam.optional(),
    country: textParam.optional(),
  });
}

const parseCandles = clockedParser(candlesQuery);

/** The candle range a request asks for, in both instants (intraday) and ET dates (daily and longer). */
type CandleRange = {
  readonly fromSeconds: number;
  readonly toSeconds: number;
  readonly fromDate: string;
  readonly toDate: string;
  readonly countback: number | undefined;
};

function nextDay(date: string): string {
  return shiftDate(date, 1);
}

function startSeconds(parsed: ParsedDate): number {
  return parsed.kind === 'date' ? etMidnightSeconds(parsed.date) : parsed.tsSeconds;
}

function endSeconds(parsed: ParsedDate): number {
  return parsed.kind === 'date' ? etMidnightSeconds(nextDay(parsed.date)) - 1 : parsed.tsSeconds;
}

function plusYears(tsSeconds: number, years: number): number {
  const shifted = resolveRelative(
    { kind: 'relative', amount: years, unit: 'years' },
    { kind: 'instant', tsSeconds },
  );
  return (shifted as { tsSeconds: number }).tsSeconds;
}

/** Reads the range parameters, enforcing the combinations and the intraday one-year limit (413). */
function candleRange(
  query: z.output<ReturnType<typeof candlesQuery>>,
  day: string | undefined,
  intraday: boolean,
  nowSeconds: number,
): CandleRange {
  if (day !== undefined) {
    if (query.from !== undefined || query.to !== undefined || query.countback !== undefined) {
      throw badRequest('The date parameter cannot be combined with from, to or countback.');
    }
    return {
      fromSeconds: etMidnightSeconds(day),
      toSeconds: etMidnightSeconds(nextDay(day)) - 1,
      fromDate: day,
      toDate: day,
      countback: undefined,
    };
  }
  if (query.from !== undefined && query.countback !== undefined) {
    throw badRequest('The from and countback parameters cannot be used together.');
  }
  const now: ParsedDate = { kind: 'instant', tsSeconds: nowSeconds };
  const to = query.to === undefined ? now : resolveDateParam('to', query.to, now);
  const toSeconds = endSeconds(to);
  if (query.from === undefined) {
    const countback = query.countback ?? 1;
    const fromSeconds = intraday ? plusYears(toSeconds, -1) + 1 : Number.NEGATIVE_INFINITY;
    return { fromSeconds, toSeconds, fromDate: '0000-01-01', toDate: etDateOf(to), countback };
  }
  const from = resolveDateParam('from', query.from, to);
  const fromSeconds = startSeconds(from);
  if (fromSeconds > toSeconds) throw badRequest('The from date is after the to date.');
  if (intraday && toSeconds >= plusYears(fromSeconds, 1)) {
    throw new MarketDataError(413, INTRADAY_RANGE_TOO_LARGE);
  }
  return { fromSeconds, toSeconds, fromDate: etDateOf(from), toDate: etDateOf(to), countback: undefined };
}

/** The candle fields in the service's live order, with their human keys (the library's empty answers too). */
export const CANDLE_FIELDS = [
  ['t', 'Date', 'instant'],
  ['o', 'Open', 'number'],
  ['h', 'High', 'number'],
  ['l', 'Low', 'number'],
  ['c', 'Close', 'number'],
  ['v', 'Volume', 'integer'],
] as const satisfies readonly (readonly [string, string, FieldKind])[];

function candleAnswer(candles: readonly Candle[]): Answer {
  const column = (key: (typeof CANDLE_FIELDS)[number][0]) => candles.map((candle) => candle[key]);
  let dataAsOf: number | null = null;
  for (const candle of candles) if (dataAsOf === null || candle.knownAt > dataAsOf) dataAsOf = candle.knownAt;
  return {
    kind: 'ok',
    fields: CANDLE_FIELDS.map(([key, human, kind]) => field(key, human, kind, column(key))),
    rowKey: 't',
    billing: 'per-1000-rows',
    dataAsOfSeconds: dataAsOf,
  };
}

async function neighbourMinute(
  sql: SqlSession,
  symbol: string,
  direction: 'next' | 'prev',
  edgeSeconds: number,
  limitSeconds: number,
  extended: boolean,
): Promise<{ session_date: string; t: number } | undefined> {
  const condition = direction === 'next' ? 't > to_timestamp($edge)' : 't < to_timestamp($edge)';
  const bars = minuteBarsSql(`symbol = $symbol AND ${condition} AND t <= to_timestamp($limit)`, { extended });
  const rows = await sql.all<{ session_date: string; t: number }>(
    `WITH ${bars.sql}
     SELECT CAST(session_date AS VARCHAR) AS session_date, epoch(t) AS t FROM minute_bars
     ORDER BY t ${direction === 'next' ? 'ASC' : 'DESC'} LIMIT 1`,
    { symbol, edge: edgeSeconds, limit: limitSeconds, ...bars.params },
  );
  return rows[0];
}

async function intradayResult(
  sql: SqlSession,
  symbol: string,
  resolution: Resolution,
  range: CandleRange,
  knowledge: Knowledge,
  extended: boolean,
  splits: readonly Split[],
): Promise<EndpointResult> {
  const widthSeconds = resolution.count * 60;
  const limitSeconds = minuteLimitSeconds(knowledge.cutoffSeconds, widthSeconds, extended);
  const candles = await intradayCandles(sql, {
    symbol,
    widthSeconds,
    fromSeconds: range.fromSeconds,
    toSeconds: range.toSeconds,
    ...(range.countback === undefined ? {} : { countback: range.countback }),
    extended,
    splits,
    limitSeconds,
  });
  if (candles.length > 0) return candleAnswer(candles);
  const next = await neighbourMinute(sql, symbol, 'next', range.toSeconds, limitSeconds, extended);
  const prev = await neighbourMinute(sql, symbol, 'prev', range.fromSeconds, limitSeconds, extended);
  const start = (bar: { session_date: string; t: number } | undefined) =>
    bar === undefined ? null : intradayCandleStart(bar.session_date, bar.t, widthSeconds);
  return noData(start(next), start(prev));
}

async function dailyResult(
  sql: SqlSession,
  cache: StoreCache,
  symbol: string,
  resolution: Resolution,
  range: CandleRange,
  knowledge: Knowledge,
  splits: readonly Split[],
): Promise<EndpointResult> {
  const lastClosed = knowledge.lastClosedSession;
  if (lastClosed === null) return noData(null, null);
  const select = async (from: string | undefined) => {
    const bars = await knownDailyBars(sql, cache, symbol, lastClosed, splits, from);
    const periods = groupDaily(bars, resolution, lastClosed).filter((p) => p.complete);
    const inRange = periods.filter((p) => p.date >= range.fromDate && p.date <= range.toDate);
    return { periods, chosen: range.countback === undefined ? inRange : inRange.slice(-range.countback) };
  };
  // Read from where the first candle wanted may start; read everything when that was not enough.
  const from = readFrom(range, resolution);
  let { periods, chosen } = await select(from);
  if (from !== undefined && (chosen.length === 0 || chosen.length < (range.countback ?? 0))) {
    ({ periods, chosen } = await select(undefined));
  }
  if (chosen.length > 0) return candleAnswer(chosen.map(periodCandle));
  const next = periods.find((p) => p.date > range.toDate);
  const prev = periods.findLast((p) => p.date < range.fromDate);
  return noData(
    next === undefined ? null : etMidnightSeconds(next.date),
    prev === undefined ? null : etMidnightSeconds(prev.date),
  );
}

/** No stored bar is older than this: a read that would start earlier reads everything instead. */
const OLDEST_BAR_DATE = '1900-01-01';

/**
 * The first day worth reading for a daily-or-longer range, or undefined to read every bar: when the
 * range (or `countback` periods before `to`) starts before {@link OLDEST_BAR_DATE}, which also keeps
 * the shifted dates of a huge countback or resolution representable.
 */
function readFrom(range: CandleRange, resolution: Resolution): string | undefined {
  if (range.countback === undefined) {
    return range.fromDate < OLDEST_BAR_DATE ? undefined : periodStart(range.fromDate, resolution);
  }
  const days = daysForPeriods(range.countback, resolution);
  const available = (Date.parse(range.toDate) - Date.parse(OLDEST_BAR_DATE)) / 86_400_000;
  return days > available ? undefined : periodStart(shiftDate(range.toDate, -days), resolution);
}

function noData(nextTime: number | null, prevTime: number | null): NoData {
  return { kind: 'no_data', nextTime, prevTime };
}

/** Answers a candles request (see the module comment for the rules). */
export async function candles(ctx: EndpointContext): Promise<EndpointResult> {
  const resolutionText = ctx.path['resolution'] ?? '';
  const resolution = parseResolution(resolutionText);
  if (resolution === undefined) throw badRequest(invalidResolution(resolutionText));
  const intraday = isIntraday(resolution);
  const query = parseCandles(ctx.query, ctx.nowSeconds);
  if (intraday && query.adjustdividends === true) throw badRequest(INTRADAY_DIVIDENDS_UNSUPPORTED);
  const adjustSplits = query.adjustsplits ?? !intraday;
  if (!intraday && !adjustSplits && (query.adjustdividends ?? true))
    throw badRequest(DIVIDEND_ONLY_UNSUPPORTED);
  const day = requestedDay(ctx.asOf, query.date);
  const range = candleRange(query, day, intraday, ctx.nowSeconds);
  if (day !== undefined && !isTradingDay(day)) return MARKET_CLOSED;

  const symbol = normalizeSymbol(ctx.path['symbol'] ?? '');
  const knowledge = knowledgeAt(ctx.asOf, ctx.nowSeconds);
  if (symbol === '' || !(await symbolKnown(ctx.sql, ctx.cache, symbol, knowledge))) return SYMBOL_NOT_FOUND;
  const splits = adjustSplits
    ? ((await loadSplits(ctx.sql, ctx.cache, [symbol], knowledge.splitsThrough)).get(symbol) ?? [])
    : [];
  return intraday
    ? intradayResult(ctx.sql, symbol, resolution, range, knowledge, query.extended ?? false, splits)
    : dailyResult(ctx.sql, ctx.cache, symbol, resolution, range, knowledge, splits);
}

/** The stock candles endpoint. */
export const stockCandles = {
  service: '/v1/stocks/candles/',
  pattern: '/v1/stocks/candles/:resolution/:symbol/',
  family: 'stocks',
  cacheable: false,
  dated: true,
  schema: candlesQuery,
  run: candles,
} satisfies Endpoint;
