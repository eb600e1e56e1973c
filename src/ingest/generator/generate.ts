/**
 * `generateMarket`: a deterministic synthetic options market written into the store's staging tables.
 * The JS half computes the small and the sequential things (underlying paths, minute bars, volatility,
 * listings, strike ladders) and appends them as work tables; the SQL half (statements.ts) expands them
 * into option snapshots, open interest and stock bars in a few set-based statements.
 */
import { z } from 'zod';
import { UsageError } from '../../errors.js';
import {
  etMidnightSeconds,
  etWallToSeconds,
  expirationSeconds,
  isIsoDate,
  isSession,
  nextSession,
  previousSession,
  sessionCloseSeconds,
  sessionOpenSeconds,
  sessionsBetween,
} from '../../market-time/index.js';
import { formatOccSymbol } from '../../occ/index.js';
import type { SqlSession } from '../../store/sql.js';
import {
  buildLadder,
  dayNumber,
  type LadderInputs,
  type ScheduledExpiration,
  scheduleExpirations,
} from './listings.js';
import { intradayPath, type MinuteBars, minuteBars, type SessionPins } from './minutes.js';
import {
  DEFAULT_LISTING,
  DEFAULT_PRICING,
  EWMA_DECAY,
  type ListingPlan,
  type ListingStyle,
  type PricingParams,
  REALISED_WEIGHT,
  TERM_REVERSION,
  VOL_PREMIUM,
  volatilityNow,
} from './model.js';
import { createRandom, type Random } from './random.js';
import { type DailyBar, loadLeanDailyBars, simulateDailyBars } from './series.js';
import {
  contractRowsSql,
  contractSessionsSql,
  copyMinuteBarsSql,
  dailyBarsSql,
  expirationSnapshotsSql,
  GRID_SNAP,
  type GreeksMode,
  MINUTE_DB,
  minuteBarsSql,
  openInterestSql,
  quotesSql,
  SIZES,
  snapSql,
  WORK,
  WORK_TABLES,
} from './statements.js';

/** Where an underlying's daily bars come from. */
export type SeriesSource =
  /** Bars given directly (raw, unadjusted; a split shows as a price drop on its ex-date). */
  | { kind: 'bars'; bars: readonly DailyBar[] }
  /** A Lean daily-bar file (`data/sources/lean_daily_*.csv`). */
  | { kind: 'lean'; path: string }
  /** A seeded simulated series (series.ts: simulateDailyBars), starting ~6 months before `from`. */
  | { kind: 'simulated'; startPrice: number; volatility?: number; drift?: number; volume?: number }
  /** Another underlying's series times a factor, minute by minute (SPX = SPY × 10). */
  | { kind: 'derived'; from: string; factor: number };

/** A split: from `exDate` on, one old share is `ratio` new shares. */
export type SplitEvent = { exDate: string; ratio: number };

/** One underlying of the generated market. */
export type UnderlyingSpec = {
  symbol: string;
  style: ListingStyle;
  series: SeriesSource;
  /** Index style: the root of the PM-settled expirations (default `symbol + 'W'`, e.g. SPXW). */
  weeklyRoot?: string;
  splits?: readonly SplitEvent[];
  listing?: Partial<ListingPlan>;
  pricing?: Partial<PricingParams>;
};

/**
 * An option snapshot of each session: 15:45 ET (12:45 on early closes), the 16:00 ET end of day, or an
 * intraday grid every 1 or 5 minutes from the open (09:31 or 09:35 ET) up to the minute before the close.
 */
export type SnapshotName = '15:45' | 'eod' | '1m' | '5m';

/** Minutes between the grid's snapshots, by snapshot name. */
export const GRID_MINUTES: Readonly<Record<'1m' | '5m', number>> = { '1m': 1, '5m': 5 };

/** What to generate. */
export type GeneratorOptions = {
  /** First and last session dates (inclusive; non-sessions move inwards to the nearest session). */
  from: string;
  to: string;
  seed: number;
  underlyings: readonly UnderlyingSpec[];
  /** Default `['eod']`. */
  snapshots?: readonly SnapshotName[];
  /** One-minute bars of the equity underlyings (default false; daily bars are always written). */
  minuteBars?: boolean;
  /** Vendor columns to fill: iv and the four greeks, iv only, or none (default 'all'). */
  greeks?: GreeksMode;
  /** Continuously compounded risk-free rate (default 0.015). */
  rate?: number;
  /** The 15:45 and grid snapshots cover only contracts at most this many days from expiry (default: all). */
  intradayMaxDte?: number;
};

/** What `generateMarket` wrote. */
export type GeneratorSummary = {
  sessions: number;
  expirations: number;
  /** Distinct option symbols quoted. */
  contracts: number;
  optionRows: number;
  openInterestRows: number;
  dailyBars: number;
  minuteBars: number;
  splits: number;
};

const ISO_DATE = z.string().refine(isIsoDate, 'expected YYYY-MM-DD');
const SYMBOL = z.string().regex(/^[A-Z][A-Z0-9.]{0,5}$/, 'expected an uppercase ticker');

const barSchema = z.object({
  date: ISO_DATE,
  open: z.number().positive(),
  high: z.number().positive(),
  low: z.number().positive(),
  close: z.number().positive(),
  volume: z.number().int().nonnegative(),
});

const optionsSchema = z
  .object({
    from: ISO_DATE,
    to: ISO_DATE,
    seed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    underlyings: z
      .array(
        z.object({
          symbol: SYMBOL,
          style: z.enum(['etf', 'index', 'stock']),
          series: z.discriminatedUnion('kind', [
            z.object({ kind: z.literal('bars'), bars: z.array(barSchema).min(2) }),
            z.object({ kind: z.literal('lean'), path: z.string().min(1) }),
            z.object({
              kind: z.literal('simulated'),
              startPrice: z.number().positive(),
              volatility: z.number().positive().max(3).optional(),
              drift: z.number().min(-1).max(1).optional(),
              volume: z.number().positive().optional(),
            }),
            z.object({ kind: z.literal('derived'), from: SYMBOL, factor: z.number().positive() }),
          ]),
          weeklyRoot: z
            .string()
            .regex(/^[A-Z][A-Z0-9]{0,5}$/)
            .optional(),
          splits: z.array(z.object({ exDate: ISO_DATE, ratio: z.number().positive() })).optional(),
          listing: z
            .object({
              weeklyDays: z.number().nonnegative(),
              midweekDays: z.number().nonnegative(),
              monthlyMonths: z.number().nonnegative(),
              quarterlyMonths: z.number().nonnegative(),
              leapsYears: z.number().nonnegative().max(5),
              nearSd: z.number().positive(),
              farSd: z.number().positive(),
            })
            .partial()
            .optional(),
          pricing: z
            .object({
              dividendYield: z.number().min(0).max(0.2),
              longRunVol: z.number().positive().max(3),
              skew: z.number().min(-1).max(1),
              curvature: z.number().min(0).max(1),
              tickBelow3Cents: z.number().int().positive(),
              tickAbove3Cents: z.number().int().positive(),
              spreadAbs: z.number().nonnegative(),
              spreadRel: z.number().nonnegative(),
              volumeBase: z.number().nonnegative(),
              sizeBase: z.number().nonnegative(),
            })
            .partial()
            .optional(),
        }),
      )
      .min(1),
    snapshots: z
      .array(z.enum(['15:45', 'eod', '1m', '5m']))
      .min(1)
      .optional(),
    minuteBars: z.boolean().optional(),
    greeks: z.enum(['all', 'iv', 'none']).optional(),
    rate: z.number().min(-0.05).max(0.25).optional(),
    intradayMaxDte: z.number().int().nonnegative().optional(),
  })
  .superRefine((options, ctx) => {
    if (options.from > options.to)
      ctx.addIssue({ code: 'custom', message: 'from is after to', path: ['from'] });
    if (options.snapshots?.includes('1m') && options.snapshots.includes('5m'))
      ctx.addIssue({ code: 'custom', message: 'choose one grid, 1m or 5m', path: ['snapshots'] });
    const symbols = options.underlyings.map((u) => u.symbol);
    options.underlyings.forEach((u, i) => {
      if (symbols.indexOf(u.symbol) !== i) {
        ctx.addIssue({
          code: 'custom',
          message: `duplicate underlying ${u.symbol}`,
          path: ['underlyings', i],
        });
      }
      if (u.series.kind === 'derived') {
        const source = options.underlyings.find(
          (other) => other.symbol === (u.series as { from: string }).from,
        );
        if (source === undefined || source.series.kind === 'derived') {
          ctx.addIssue({
            code: 'custom',
            message: `derived series of ${u.symbol} needs a non-derived underlying ${u.series.from}`,
            path: ['underlyings', i, 'series'],
          });
        }
      }
    });
  });

/** Sessions of history simulated before `from` (volatility warm-up and listings made before the range). */
const SIMULATED_WARMUP_SESSIONS = 130;
const INTRADAY_SNAP = 0;
/** Prices are carried in 1/10000 dollars, the store's precision. */
const UNITS = 10_000;
const toUnits = (price: number) => Math.round(price * UNITS);
const EOD_SNAP = 1;

/** The steps `generateMarket` reports through its `onProgress`. */
export const GENERATOR_STEPS = 8;

/**
 * Fills the staging tables `option_quotes`, `open_interest` and `stock_bars` (and `splits`, when the
 * session has such a table) that already exist in `sql` with a synthetic market over [from, to].
 * The same options always give the same rows. `onProgress` is called after each of its steps.
 */

export async function generateMarket(
  sql: SqlSession,
  options: GeneratorOptions,
  onProgress?: (stepsDone: number, steps: number) => void,
): Promise<GeneratorSummary> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .map((i) => `${i.path.join('.') || 'options'}: ${i.message}`)
      .join('; ');
    throw new UsageError(`invalid generator options: ${detail}`);
  }
  const valid = parsed.data as GeneratorOptions;
  let done = 0;
  const step = () => onProgress?.(++done, GENERATOR_STEPS);
  return fill(sql, valid, await planTimeline(valid), step);
}

/**
 * Runs the SQL half. The work tables are built and committed first, since DuckDB scans a table written
 * in the open transaction on one thread. The minute bars are loaded and expanded on a second connection
 * while this one runs the small single-threaded statements. The staging inserts then run in one
 * transaction (unless the caller already holds one), so a failure leaves the staging tables as they were.
 */
async function fill(
  sql: SqlSession,
  options: GeneratorOptions,
  timeline: TimelinePlan,
  step: () => void,
): Promise<GeneratorSummary> {
  const params = { seed: options.seed };
  const names = options.snapshots ?? ['eod'];
  const snapshots = [
    ...new Set(
      names.filter((s) => s === 'eod' || s === '15:45').map((s) => (s === 'eod' ? EOD_SNAP : INTRADAY_SNAP)),
    ),
  ].sort();
  const grid = timeline.tables.grid !== undefined;
  const { minutes, minuteDays, ...timelineTables } = timeline.tables;
  const minuteBars = minutes !== undefined;
  // A database attached for the minutes cannot be detached inside the caller's transaction.
  const callerTransaction = await inOpenTransaction(sql);
  const attached = minuteBars && !callerTransaction;
  let side: SqlSession | undefined;
  let preparing: Promise<void> | undefined;
  let expanding: Promise<void> | undefined;
  try {
    await dropWork(sql);
    await createWorkTables(sql, timelineTables);
    const listings = planListings(options, timeline);
    await createWorkTables(sql, listings.tables);
    step();
    // Without bound parameters the three run in one call, on DuckDB's threads, while this one appends.
    preparing = sql.run(
      [
        snapSql(
          snapshots.includes(INTRADAY_SNAP),
          { decay: EWMA_DECAY, weight: REALISED_WEIGHT, premium: VOL_PREMIUM },
          grid,
        ),
        expirationSnapshotsSql(TERM_REVERSION),
        contractRowsSql(),
      ].join(';\n'),
    );
    preparing.catch(() => undefined);
    if (attached) {
      side = await sql.connect();
      await side.run(
        `DETACH DATABASE IF EXISTS ${MINUTE_DB}; ATTACH ':memory:' AS ${MINUTE_DB}; USE ${MINUTE_DB}`,
      );
      await createWorkTables(side, { minuteDays, minutes }, 'TABLE');
      expanding = side.run(minuteBarsSql('TABLE'));
      expanding.catch(() => undefined);
    }
    await preparing;
    step();
    if (minuteBars && !attached) {
      await createWorkTables(sql, { minuteDays, minutes });
      await sql.run(minuteBarsSql('TEMP TABLE'));
    }
    await sql.run(contractSessionsSql(), params);
    step();
    // An INSERT answers the number of rows it wrote.
    const inserted = async (statement: string, bind?: typeof params) => {
      const rows = Number(await sql.value<number | bigint>(statement, bind));
      step();
      return rows;
    };
    const skipped = () => {
      step();
      return 0;
    };
    const copyMinuteBars = async () => {
      await expanding;
      return inserted(copyMinuteBarsSql('stock_bars', attached));
    };
    const written = await inTransaction(sql, !callerTransaction, async () => ({
      openInterestRows: await inserted(openInterestSql('open_interest')),
      optionRows: await inserted(
        quotesSql('option_quotes', {
          snaps: snapshots,
          intradayMaxDte: options.intradayMaxDte ?? null,
          greeks: options.greeks ?? 'all',
          grid,
        }),
        params,
      ),
      dailyBars: await inserted(dailyBarsSql('stock_bars')),
      minuteBars: minuteBars ? await copyMinuteBars() : skipped(),
      splits: await insertSplits(sql, listings.splits).finally(step),
    }));
    return {
      sessions: timeline.toIndex - timeline.fromIndex + 1,
      expirations: listings.expirationCount,
      contracts: listings.symbolCount,
      optionRows: written.optionRows,
      openInterestRows: written.openInterestRows,
      dailyBars: written.dailyBars,
      minuteBars: written.minuteBars,
      splits: written.splits,
    };
  } finally {
    await Promise.allSettled([preparing, expanding]);
    if (side !== undefined) {
      side.close();
      await sql.run(`DETACH DATABASE IF EXISTS ${MINUTE_DB}`).catch(() => undefined);
    }
    await dropWork(sql).catch(() => undefined);
  }
}

/**
 * Whether the caller holds a transaction open on `sql`: outside one every statement gets a new
 * transaction id (probing with BEGIN would abort the caller's transaction when it fails).
 */
async function inOpenTransaction(sql: SqlSession): Promise<boolean> {
  const first = await sql.value<number>('SELECT txid_current()');
  return (await sql.value<number>('SELECT txid_current()')) === first;
}

/** Runs `body` in a transaction of its own (`own`), or else in the caller's. */
async function inTransaction<T>(sql: SqlSession, own: boolean, body: () => Promise<T>): Promise<T> {
  if (own) await sql.run('BEGIN TRANSACTION');
  try {
    const result = await body();
    if (own) await sql.run('COMMIT');
    return result;
  } catch (error) {
    if (own) await sql.run('ROLLBACK');
    throw error;
  }
}

type Columns = unknown[][];

/** A work table's rows, column by column (arrays or typed arrays). */
type ColumnData = readonly ArrayLike<unknown>[];

type WorkTable = keyof typeof WORK_TABLES;

/** The timeline and the underlying series, with the work tables they fill (sessions, days, minutes). */
type TimelinePlan = Timeline & {
  timelineStart: string;
  sources: Series[];
  pidOf: ReadonlyMap<string, number>;
  barsByPid: DailyBar[][];
  intradayShare: ReadonlyMap<number, number>;
  tables: Partial<Record<WorkTable, ColumnData>>;
};

/** The listings and contracts, with the work tables they fill, and the splits to record. */
type ListingsPlan = {
  expirationCount: number;
  /** Distinct option symbols listed. */
  symbolCount: number;
  splits: { symbol: string; exDate: string; ratio: number }[];
  tables: Partial<Record<WorkTable, ColumnData>>;
};

type Series = { symbol: string; bars: readonly DailyBar[] };

function columns(count: number): Columns {
  return Array.from({ length: count }, () => []);
}

function push(table: Columns, ...values: unknown[]): void {
  for (let i = 0; i < values.length; i++) table[i]!.push(values[i]);
}

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
async function planTimeline(options: GeneratorOptions): Promise<TimelinePlan> {
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

/**
 * The rest of the JS half: each underlying's state (closes, volatility), its expirations and strike
 * ladders, and the contracts (with their open-interest levels) in the work tables' shape.
 */
function planListings(options: GeneratorOptions, timeline: TimelinePlan): ListingsPlan {
  const { dates, indexOf, fromIndex, toIndex, from, to, timelineStart, pidOf, barsByPid, intradayShare } =
    timeline;
  const sid = (index: number) => index - fromIndex + 1;
  const tables = {
    udays: columns(10),
    underlyings: columns(13),
    expirations: columns(8),
    contracts: contractRows(),
  };
  const rate = options.rate ?? 0.015;
  const splitRows: ListingsPlan['splits'] = [];
  const counters = { eid: 0, cid: 0 };
  const days = Int32Array.from(dates, dayNumber);
  options.underlyings.forEach((spec, uid) => {
    const pricing: PricingParams = { ...DEFAULT_PRICING[spec.style], ...spec.pricing };
    const plan: ListingPlan = { ...DEFAULT_LISTING[spec.style], ...spec.listing };
    const derived = spec.series.kind === 'derived' ? spec.series : undefined;
    const sourceSymbol = derived?.from ?? spec.symbol;
    const pid = pidOf.get(sourceSymbol)!;
    const factor = derived?.factor ?? 1;
    const splitSpecs = options.underlyings.find((u) => u.symbol === sourceSymbol)?.splits ?? [];
    const splits = new Map<number, number>();
    for (const split of splitSpecs) {
      const index = indexOf.get(split.exDate);
      if (index === undefined) {
        if (split.exDate >= timelineStart && split.exDate <= to) {
          throw new UsageError(`split of ${sourceSymbol} on ${split.exDate}: not a session`);
        }
        continue;
      }
      if (index > 0) splits.set(index, split.ratio);
      if (split.exDate >= from && !derived) splitRows.push({ symbol: spec.symbol, ...split });
    }

    const { close, previousClose, variance, previousVol } = underlyingState(
      barsByPid[pid]!,
      factor,
      splits,
      pricing,
    );
    const emit = spec.style !== 'index';
    for (let index = fromIndex - 1; index <= toIndex; index++) {
      push(
        tables.udays,
        uid,
        sid(index),
        pid,
        spec.symbol,
        emit,
        factor,
        close[index],
        previousClose[index],
        index === 0 ? pricing.longRunVol ** 2 : variance[index - 1],
        intradayShare.get(index) ?? 0.9,
      );
    }
    push(
      tables.underlyings,
      uid,
      spec.symbol,
      rate,
      pricing.dividendYield,
      pricing.longRunVol,
      pricing.skew,
      pricing.curvature,
      pricing.tickBelow3Cents,
      pricing.tickAbove3Cents,
      pricing.spreadAbs,
      pricing.spreadRel,
      pricing.volumeBase,
      SIZES.findIndex((size) => size >= 2 * pricing.sizeBase) + 1 || SIZES.length,
    );

    const random = createRandom(options.seed, 'open-interest', spec.symbol);
    const ladderInputs: LadderInputs = {
      style: spec.style,
      plan,
      days,
      previousClose,
      previousVol,
      splits,
      longRunVol: pricing.longRunVol,
    };
    const weeklyRoot = spec.style === 'index' ? (spec.weeklyRoot ?? `${spec.symbol}W`) : spec.symbol;
    for (const expiration of scheduleExpirations(spec.style, spec.symbol, weeklyRoot, plan, from, to)) {
      listContracts(timeline, tables, counters, { uid, expiration, ladderInputs, pricing, random });
    }
  });
  // A symbol is its expiration's stem and a strike: a call and a put per distinct pair.
  const pairs = new Set<number>();
  const { eid, strikeK } = tables.contracts;
  for (let i = 0; i < eid.length; i++) pairs.add(eid[i]! * 1e8 + strikeK[i]!);
  return {
    expirationCount: counters.eid,
    symbolCount: 2 * pairs.size,
    splits: splitRows,
    tables: { ...tables, contracts: Object.values(tables.contracts) },
  };
}

/** The contracts work table column by column, in its order (one push site per column keeps them fast). */
type ContractRows = ReturnType<typeof contractRows>;

function contractRows() {
  return {
    kid: [] as number[],
    cid: [] as number[],
    eid: [] as number[],
    strikeK: [] as number[],
    strike: [] as number[],
    lnK: [] as number[],
    firstSid: [] as number[],
    lastSid: [] as number[],
    listDay: [] as number[],
    levelC: [] as number[],
    levelP: [] as number[],
    oiMult: [] as number[],
    openEnd: [] as boolean[],
  };
}

/** The session timeline of a run: dates, their indexes, and where [from, to] sits on it. */
type Timeline = {
  dates: readonly string[];
  indexOf: ReadonlyMap<string, number>;
  fromIndex: number;
  toIndex: number;
  from: string;
  to: string;
};

/**
 * Lists one expiration's contracts (a call and a put per strike, one row per split segment) and the
 * expiration itself into the work tables, numbering them from `counters`.
 */
function listContracts(
  timeline: Timeline,
  tables: { expirations: Columns; contracts: ContractRows },
  counters: { eid: number; cid: number },
  item: {
    uid: number;
    expiration: ScheduledExpiration;
    ladderInputs: LadderInputs;
    pricing: PricingParams;
    random: Random;
  },
): void {
  const { dates, indexOf, fromIndex, toIndex, to } = timeline;
  const { uid, expiration, ladderInputs, pricing, random } = item;
  const { previousClose, splits } = ladderInputs;
  const sid = (index: number) => index - fromIndex + 1;
  const startIndex = Math.max(1, firstIndexOnOrAfter(dates, expiration.listDate));
  const trailing = expiration.lastQuoteDate > to;
  const endIndex = trailing ? toIndex : indexOf.get(expiration.lastQuoteDate)!;
  const ladder = buildLadder(ladderInputs, expiration.expiration, startIndex, endIndex);
  const contracts = tables.contracts;
  const rowsBefore = contracts.kid.length;
  let firstSidOfExpiration = Number.POSITIVE_INFINITY;
  // Root and date are checked once; the strikes come from the ladder as whole thousandths.
  const stem = formatOccSymbol({
    root: expiration.root,
    expirationDate: expiration.expiration,
    side: 'call',
    strike: 1,
  }).slice(0, -9);
  for (const strike of ladder) {
    const firstQuote = Math.max(strike.listedIndex, fromIndex);
    if (firstQuote > endIndex) continue;
    const listedOn = strike.listedIndex === startIndex ? expiration.listDate : dates[strike.listedIndex]!;
    // Open interest gathers at round strikes and at strikes near the money when they were listed.
    const listingSpot = previousClose[strike.listedIndex]!;
    const listingYears = Math.max(dayNumber(expiration.expiration) - dayNumber(listedOn), 30) / 365;
    const moneyness =
      Math.log(strike.segments[0]!.strikeThousandths / 1000 / listingSpot) /
      (pricing.longRunVol * Math.sqrt(listingYears));
    const weight =
      (strike.segments[0]!.strikeThousandths % 10_000 === 0 ? 1.5 : 1) *
      Math.exp(-0.5 * moneyness * moneyness);
    const callLevel = weight * (0.4 + 1.2 * random.next());
    const putLevel = weight * (0.4 + 1.2 * random.next());
    for (let j = 0; j < strike.segments.length; j++) {
      const segment = strike.segments[j]!;
      const next = strike.segments[j + 1];
      const segmentStart = Math.max(segment.fromIndex, firstQuote);
      const segmentEnd = next === undefined ? endIndex : next.fromIndex - 1;
      if (segmentStart > segmentEnd) continue;
      let multiplier = 1;
      for (let k = j + 1; k < strike.segments.length; k++) {
        multiplier *= splits.get(strike.segments[k]!.fromIndex) ?? 1;
      }
      firstSidOfExpiration = Math.min(firstSidOfExpiration, sid(segmentStart));
      const strikeDollars = segment.strikeThousandths / 1000;
      contracts.kid.push(contracts.kid.length);
      contracts.cid.push(counters.cid);
      contracts.eid.push(counters.eid);
      contracts.strikeK.push(segment.strikeThousandths);
      contracts.strike.push(strikeDollars);
      contracts.lnK.push(Math.log(strikeDollars));
      contracts.firstSid.push(sid(segmentStart));
      contracts.lastSid.push(sid(segmentEnd));
      contracts.listDay.push(dayNumber(listedOn));
      contracts.levelC.push(callLevel);
      contracts.levelP.push(putLevel);
      contracts.oiMult.push(multiplier);
      contracts.openEnd.push(trailing && next === undefined);
    }
    counters.cid++;
  }
  if (contracts.kid.length === rowsBefore) return;
  push(
    tables.expirations,
    counters.eid,
    uid,
    stem,
    dayNumber(expiration.expiration),
    expirationSeconds(expiration.expiration, expiration.settlement),
    expiration.monthly ? 1.5 : expiration.quarterly ? 0.8 : 1,
    firstSidOfExpiration,
    sid(endIndex),
  );
  counters.eid++;
}

/**
 * An underlying's closes on the timeline (× factor), the previous close in each session's units (divided
 * by the split ratio on an ex-date), the EWMA variance of split-adjusted returns through each session,
 * and the at-the-money volatility at the previous close.
 */
function underlyingState(
  bars: readonly DailyBar[],
  factor: number,
  splits: ReadonlyMap<number, number>,
  pricing: PricingParams,
): { close: Float64Array; previousClose: Float64Array; variance: Float64Array; previousVol: Float64Array } {
  const n = bars.length;
  const close = new Float64Array(n);
  const previousClose = new Float64Array(n);
  const variance = new Float64Array(n);
  const previousVol = new Float64Array(n);
  for (let index = 0; index < n; index++) {
    close[index] = bars[index]!.close * factor;
    previousClose[index] =
      index === 0 ? bars[0]!.open * factor : close[index - 1]! / (splits.get(index) ?? 1);
    const priorVariance = index === 0 ? pricing.longRunVol ** 2 : variance[index - 1]!;
    const r = Math.log(close[index]! / previousClose[index]!);
    variance[index] = EWMA_DECAY * priorVariance + (1 - EWMA_DECAY) * 252 * r * r;
    previousVol[index] = volatilityNow(priorVariance, pricing.longRunVol);
  }
  return { close, previousClose, variance, previousVol };
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

function firstIndexOnOrAfter(dates: readonly string[], date: string): number {
  let low = 0;
  let high = dates.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (dates[mid]! < date) low = mid + 1;
    else high = mid;
  }
  return low;
}

async function createWorkTables(
  sql: SqlSession,
  tables: Partial<Record<WorkTable, ColumnData | undefined>>,
  kind: 'TEMP TABLE' | 'TABLE' = 'TEMP TABLE',
): Promise<void> {
  for (const [key, rows] of Object.entries(tables) as [WorkTable, ColumnData | undefined][]) {
    if (rows === undefined) continue;
    await sql.run(`CREATE ${kind} ${WORK[key]} (${WORK_TABLES[key]})`);
    await sql.append(WORK[key], rows);
  }
}

async function dropWork(sql: SqlSession): Promise<void> {
  await sql.run(
    Object.values(WORK)
      .map((name) => `DROP TABLE IF EXISTS temp.${name};`)
      .join('\n'),
  );
}

async function insertSplits(sql: SqlSession, splits: ListingsPlan['splits']): Promise<number> {
  if (splits.length === 0) return 0;
  const exists = await sql.value<number>(
    "SELECT count(*) FROM information_schema.tables WHERE table_name = 'splits' AND table_schema <> 'temp'",
  );
  if (Number(exists) === 0) return 0;
  for (const split of splits) {
    await sql.run('INSERT INTO splits (symbol, ex_date, ratio) VALUES ($1, $2::DATE, $3)', [
      split.symbol,
      split.exDate,
      split.ratio,
    ]);
  }
  return splits.length;
}
