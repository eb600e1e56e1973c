/**
 * Ready-made generator options. The embedded sample is sized for a small committed store (≤ 25 MB of
 * zstd Parquet): about 1.3 million option rows over two years of three underlyings.
 */
import { fileURLToPath } from 'node:url';
import type { ListingPlan } from './model.js';
import type { GeneratorOptions } from './options.js';

/** The Lean daily-bar slices shipped in `data/sources/` (QuantConnect/Lean, Apache-2.0). */
export const SAMPLE_SOURCES = {
  SPY: fileURLToPath(
    new URL('../../../data/sources/lean_daily_spy_raw_20181001_20201231.csv', import.meta.url),
  ),
  AAPL: fileURLToPath(
    new URL('../../../data/sources/lean_daily_aapl_raw_20181001_20201231.csv', import.meta.url),
  ),
} as const;

/**
 * Listing horizons and strike bands of the sample: every weekly, Monday/Wednesday weeklies listed the
 * week before, monthlies two or three months ahead, no LEAPS, and strikes within about ±0.3–0.8 σ√T
 * (fine grid) and ±1–1.3 σ√T (coarse grid) of the money as it moves.
 */
const SAMPLE_LISTING: Record<'SPY' | 'SPX' | 'AAPL', Partial<ListingPlan>> = {
  SPY: {
    weeklyDays: 14,
    midweekDays: 5,
    monthlyMonths: 2,
    quarterlyMonths: 3,
    leapsYears: 0,
    nearSd: 0.6,
    farSd: 1.3,
  },
  SPX: {
    weeklyDays: 14,
    midweekDays: 5,
    monthlyMonths: 2,
    quarterlyMonths: 3,
    leapsYears: 0,
    nearSd: 0.3,
    farSd: 1.0,
  },
  AAPL: { weeklyDays: 21, monthlyMonths: 3, quarterlyMonths: 3, leapsYears: 0, nearSd: 0.7, farSd: 1.3 },
};

/**
 * The embedded sample: SPY (ETF listing), SPX with SPXW (index listing; SPX is SPY × 10, minute by
 * minute) and AAPL (single stock, with its 4:1 split on 2020-08-31) on the real Lean daily bars,
 * 2019-01-02..2020-12-31, EOD and 15:45 snapshots (the 15:45 one for contracts within 5 days of expiry),
 * one-minute bars, and iv without the other greeks (they would add ~7 bytes per option row).
 */
export function sampleOptions(): GeneratorOptions {
  return {
    from: '2019-01-02',
    to: '2020-12-31',
    seed: 20190102,
    underlyings: [
      {
        symbol: 'SPY',
        style: 'etf',
        series: { kind: 'lean', path: SAMPLE_SOURCES.SPY },
        listing: SAMPLE_LISTING.SPY,
      },
      {
        symbol: 'SPX',
        style: 'index',
        series: { kind: 'derived', from: 'SPY', factor: 10 },
        listing: SAMPLE_LISTING.SPX,
      },
      {
        symbol: 'AAPL',
        style: 'stock',
        series: { kind: 'lean', path: SAMPLE_SOURCES.AAPL },
        splits: [{ exDate: '2020-08-31', ratio: 4 }],
        listing: SAMPLE_LISTING.AAPL,
      },
    ],
    snapshots: ['15:45', 'eod'],
    intradayMaxDte: 5,
    minuteBars: true,
    greeks: 'iv',
  };
}

/**
 * The intraday preset: SPX with SPXW (index listing, simulated from 3,850 at 20% volatility) with an
 * expiration every session (the SPXW Monday–Friday cycle), one-minute snapshots from 09:31 to 15:59 ET
 * plus the end of day, over the 62 sessions of 2023-01-03..2023-03-31. The one-minute snapshots cover
 * the expirations within two days (the 0DTE and the next ones); listings stop at the front month and the
 * strike bands are narrower than the real chain's, so a store builds in minutes on a small machine.
 */
export function intradayOptions(): GeneratorOptions {
  return {
    from: '2023-01-03',
    to: '2023-03-31',
    seed: 20230103,
    underlyings: [
      {
        symbol: 'SPX',
        style: 'index',
        series: { kind: 'simulated', startPrice: 3850, volatility: 0.2 },
        listing: {
          weeklyDays: 14,
          midweekDays: 7,
          monthlyMonths: 1,
          quarterlyMonths: 1,
          leapsYears: 0,
          nearSd: 1.5,
          farSd: 3,
        },
      },
    ],
    snapshots: ['1m', 'eod'],
    intradayMaxDte: 2,
    minuteBars: false,
    greeks: 'iv',
  };
}

/** The presets `pitchain generate --preset` takes. */
export const GENERATOR_PRESETS = { sample: sampleOptions, intraday: intradayOptions } as const;
