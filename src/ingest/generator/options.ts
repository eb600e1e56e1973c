/**
 * What `generateMarket` is asked to make (`GeneratorOptions`), checked before anything is generated, and
 * what it reports having written.
 */
import { z } from 'zod';
import { UsageError } from '../../errors.js';
import { isIsoDate } from '../../market-time/index.js';
import type { ListingPlan, ListingStyle, PricingParams } from './model.js';
import type { DailyBar } from './series.js';
import type { GreeksMode } from './statements.js';

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

/** The options checked against their schema: a clear usage error naming every field that is wrong. */
export function validGeneratorOptions(options: GeneratorOptions): GeneratorOptions {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .map((i) => `${i.path.join('.') || 'options'}: ${i.message}`)
      .join('; ');
    throw new UsageError(`invalid generator options: ${detail}`);
  }
  return parsed.data as GeneratorOptions;
}
