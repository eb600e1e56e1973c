/**
 * The generator's timeline: the sessions of the range and before it, each underlying's daily bars on
 * them (given, read from Lean files, simulated or derived), and the minute paths and snapshot grid of
 * each session, as work-table columns.
 */
import { UsageError } from '../../errors.js';
import {
  etMidnightSeconds,
  etWallToSeconds,
  isSession,
  nextSession,
  previousSession,
  sessionCloseSeconds,
  sessionOpenSeconds,
  sessionsBetween,
} from '../../market-time/index.js';
import { dayNumber } from './listings.js';
import { intradayPath, type MinuteBars, minuteBars, type SessionPins } from './minutes.js';
import { type GeneratorOptions, GRID_MINUTES, type UnderlyingSpec } from './options.js';
import { createRandom } from './random.js';
import { type DailyBar, loadLeanDailyBars, simulateDailyBars } from './series.js';
import { GRID_SNAP } from './statements.js';
import { type ColumnData, columns, push, type WorkTable } from './work-tables.js';

/** Sessions of history simulated before `from` (volatility warm-up and listings made before the range). */
const SIMULATED_WARMUP_SESSIONS = 130;

/** Prices are carried in 1/10000 dollars, the store's precision. */
const UNITS = 10_000;
const toUnits = (price: number) => Math.round(price * UNITS);

/** The session timeline of a run: dates, their indexes, and where [from, to] sits on it. */
export type Timeline = {
  dates: readonly string[];
  indexOf: ReadonlyMap<string, number>;
  fromIndex: number;
  toIndex: number;
  from: string;
  to: string;
};

/** The timeline and the underlying series, with the work tables they fill (sessions, days, minutes). */
export type TimelinePlan = Timeline & {
  timelineStart: string;
  sources: Series[];
  pidOf: ReadonlyMap<string, number>;
  barsByPid: DailyBar[][];
  intradayShare: ReadonlyMap<number, number>;
  tables: Partial<Record<WorkTable, ColumnData>>;
};

type Series = { symbol: string; bars: readonly DailyBar[] };

async function resolveSeries(
  spec: UnderlyingSpec,
  from: string,
  to: string,
  seed: number,
): Promise<DailyBar[]> {
  const series = spec.series;
  switch (series.kind) {
    case 'bars':
      return [...series.bars];
    case 'lean':
      return loadLeanDailyBars(series.path);
    case 'simulated': {
      let start = from;
      for (let i = 0; i < SIMULATED_WARMUP_SESSIONS; i++) start = previousSession(start);
      return simulateDailyBars({ ...series, from: start, to, seed, symbol: spec.symbol });
    }
    case 'derived':
      throw new UsageError('derived series are resolved from their source');
  }
}

/**
 * The first thing the JS half decides: the session timeline, the underlying series on it, and the
 * intraday paths (the 15:45 price of each session and, when asked, the minute bars).
 */
export async function planTimeline(options: GeneratorOptions): Promise<TimelinePlan> {
  let from: string;
  let to: string;
  try {
    from = isSession(options.from) ? options.from : nextSession(options.from);
    to = isSession(options.to) ? options.to : previousSession(options.to);
  } catch (cause) {
    throw new UsageError(`generator range ${options.from}..${options.to}: ${String(cause)}`, { cause });
  }
  if (from > to) throw new UsageError(`no session between ${options.from} and ${options.to}`);

  const sources: Series[] = [];
  const pidOf = new Map<string, number>();
  for (const spec of options.underlyings) {
    if (spec.series.kind === 'derived') continue;
    pidOf.set(spec.symbol, sources.length);
    sources.push({ symbol: spec.symbol, bars: await resolveSeries(spec, from, to, options.seed) });
  }
  const timelineStart = sources
    .map((s) => s.bars[0]!.date)
    .sort()
    .at(-1)!;
  if (timelineStart > previousSession(from)) {
    throw new UsageError(
      `the underlying series start on ${timelineStart}; they must cover ${previousSession(from)}, the session before from`,
    );
  }
  const dates = sessionsBetween(timelineStart, to);
  const indexOf = new Map(dates.map((date, index) => [date, index]));
  const fromIndex = indexOf.get(from)!;
  const toIndex = dates.length - 1;
  const sid = (index: number) => index - fromIndex + 1;

  const barsByPid = sources.map((source) => alignBars(source, dates, indexOf));
  const tables = { sessions: columns(9), days: columns(8), minuteDays: columns(5), grid: columns(5) };
  const gridName = options.snapshots?.find((s) => s === '1m' || s === '5m');
  const gridMinutes = gridName === undefined ? undefined : GRID_MINUTES[gridName];

  const minuteCount = new Map<number, number>();
  const openSeconds = new Map<number, number>();
  for (let index = fromIndex - 1; index <= toIndex; index++) {
    const date = dates[index]!;
    const open = sessionOpenSeconds(date);
    const minutes = (sessionCloseSeconds(date) - open) / 60;
    minuteCount.set(index, minutes);
    openSeconds.set(index, open);
    push(
      tables.sessions,
      sid(index),
      date,
      dayNumber(date),
      etMidnightSeconds(date),
      open,
      sessionOpenSeconds(nextSession(date)),
      etWallToSeconds(date, '16:00'),
      sessionCloseSeconds(date) - 15 * 60,
      minutes,
    );
  }

  // The share of a session's volume done by 15:45 is a market-wide figure (80–95%).
  const shareRandom = createRandom(options.seed, 'intraday-share');
  const intradayShare = new Map<number, number>();
  for (let index = fromIndex; index <= toIndex; index++)
    intradayShare.set(index, 0.8 + 0.15 * shareRandom.next());

  // Minute bars are written for every underlying that has stock bars (not an index), in its own units.
  const barUnderlyings = options.minuteBars
    ? options.underlyings
        .filter((spec) => spec.style !== 'index')
        .map((spec) => {
          const derived = spec.series.kind === 'derived' ? spec.series : undefined;
          return {
            symbol: spec.symbol,
            pid: pidOf.get(derived?.from ?? spec.symbol)!,
            factor: derived?.factor ?? 1,
          };
        })
    : [];
  const minuteTable =
    barUnderlyings.length === 0
      ? undefined
      : minuteColumns(barsByPid, barUnderlyings, minuteCount, fromIndex, toIndex);
  const pathBuffer = new Float64Array(Math.max(...minuteCount.values()) + 1);
  barsByPid.forEach((bars, pid) => {
    const symbol = sources[pid]!.symbol;
    const pins = createRandom(options.seed, 'minute-pins', symbol);
    const walk = createRandom(options.seed, 'minute-path', symbol);
    const excursions = createRandom(options.seed, 'minute-bars', symbol);
    const writers = barUnderlyings.filter((u) => u.pid === pid);
    for (let index = fromIndex; index <= toIndex; index++) {
      const bar = bars[index]!;
      const n = minuteCount.get(index)!;
      const highAt = 1 + pins.int(n - 1);
      let lowAt = 1 + pins.int(n - 2);
      if (lowAt >= highAt) lowAt++;
      const day: SessionPins = {
        open: toUnits(bar.open),
        high: toUnits(bar.high),
        low: toUnits(bar.low),
        close: toUnits(bar.close),
        volume: bar.volume,
        minutes: n,
        highAt,
        lowAt,
      };
      const path = intradayPath(day, walk, pathBuffer);
      push(
        tables.days,
        pid,
        sid(index),
        day.open / UNITS,
        day.high / UNITS,
        day.low / UNITS,
        day.close / UNITS,
        day.volume,
        path[n - 15]! / UNITS,
      );
      // The grid's snapshots see the underlying on the same path as the minute bars and the 15:45 one.
      if (gridMinutes !== undefined) {
        const open = openSeconds.get(index)!;
        for (let minute = gridMinutes, k = 0; minute < n; minute += gridMinutes, k++)
          push(tables.grid, pid, sid(index), GRID_SNAP + k, open + 60 * minute, path[minute]! / UNITS);
      }
      if (writers.length === 0 || minuteTable === undefined) continue;
      const mid = minuteTable.next(n, path, (out) => minuteBars(day, path, excursions, out));
      for (const writer of writers) {
        push(tables.minuteDays, mid, writer.symbol, dates[index], openSeconds.get(index), writer.factor);
      }
    }
  });

  return {
    dates,
    indexOf,
    fromIndex,
    toIndex,
    from,
    to,
    timelineStart,
    sources,
    pidOf,
    barsByPid,
    intradayShare,
    tables: {
      sessions: tables.sessions,
      days: tables.days,
      ...(gridMinutes === undefined ? {} : { grid: tables.grid }),
      ...(minuteTable === undefined ? {} : { minuteDays: tables.minuteDays, minutes: minuteTable.minutes }),
    },
  };
}

/**
 * The minutes work table, sized up front for the sessions of every series that has minute bars: one row
 * per minute of a series' session (`mid` numbers the session), filled by `next` in session order.
 */
function minuteColumns(
  barsByPid: readonly unknown[],
  writers: readonly { pid: number }[],
  minuteCount: ReadonlyMap<number, number>,
  fromIndex: number,
  toIndex: number,
): { minutes: ColumnData; next: (n: number, path: Float64Array, fill: (out: MinuteBars) => void) => number } {
  let perSeries = 0;
  for (let index = fromIndex; index <= toIndex; index++) perSeries += minuteCount.get(index)!;
  const rows = perSeries * barsByPid.filter((_, pid) => writers.some((w) => w.pid === pid)).length;
  const mids = new Int32Array(rows);
  const minute = new Int32Array(rows);
  const [o, h, l, c, v] = Array.from({ length: 5 }, () => new Float64Array(rows));
  let row = 0;
  let mid = 0;
  const next = (n: number, path: Float64Array, fill: (out: MinuteBars) => void) => {
    for (let i = 0; i < n; i++) minute[row + i] = i;
    mids.fill(mid, row, row + n);
    o!.set(path.subarray(0, n), row);
    c!.set(path.subarray(1, n + 1), row);
    fill({
      high: h!.subarray(row, row + n),
      low: l!.subarray(row, row + n),
      volume: v!.subarray(row, row + n),
    });
    row += n;
    return mid++;
  };
  return { minutes: [mids, minute, o!, h!, l!, c!, v!], next };
}

/** The bar of every timeline session, or a UsageError naming the first gap. */
function alignBars(
  source: Series,
  dates: readonly string[],
  indexOf: ReadonlyMap<string, number>,
): DailyBar[] {
  const aligned: (DailyBar | undefined)[] = new Array(dates.length).fill(undefined);
  for (const bar of source.bars) {
    const index = indexOf.get(bar.date);
    if (index !== undefined) aligned[index] = bar;
    else if (bar.date >= dates[0]! && bar.date <= dates[dates.length - 1]!) {
      throw new UsageError(`${source.symbol} has a bar on ${bar.date}, which is not a session`);
    }
  }
  const missing = aligned.indexOf(undefined);
  if (missing >= 0) throw new UsageError(`${source.symbol} has no bar for the session ${dates[missing]}`);
  return aligned as DailyBar[];
}
