/**
 * The generator's market model: listing styles, listing horizons, strike grids, and the pricing and
 * liquidity parameters of each style. Every figure here is a modelling choice, documented where it is set.
 */

/** How an underlying's options are listed: an ETF (SPY), a cash-settled index (SPX/SPXW) or a single stock (AAPL). */
export type ListingStyle = 'etf' | 'index' | 'stock';

/** How far ahead expirations are listed and how wide the strike bands are. */
export type ListingPlan = {
  /** Friday weeklies are listed this many calendar days before they expire. */
  weeklyDays: number;
  /** Monday/Wednesday weeklies and Tuesday/Thursday dailies (0: none). */
  midweekDays: number;
  /** Standard monthlies (and index end-of-month expirations) are listed this many months ahead. */
  monthlyMonths: number;
  /** End-of-quarter expirations and the quarter months' monthlies. */
  quarterlyMonths: number;
  /** LEAPS: January monthlies (December for an index) are listed this many years ahead. */
  leapsYears: number;
  /** Half-width of the fine strike grid around the money, in σ·√T (log-moneyness). */
  nearSd: number;
  /** Half-width of the coarse strike grid, in σ·√T. */
  farSd: number;
};

/** Pricing and liquidity parameters of an underlying's options. */
export type PricingParams = {
  /** Continuous dividend yield. */
  dividendYield: number;
  /** Long-run implied volatility that the term structure reverts to. */
  longRunVol: number;
  /** Smile: σ(K) = σ_atm·(1 + skew·z + curvature·z²), z = ln(K/F)/(σ_atm√T) clamped to ±4. */
  skew: number;
  curvature: number;
  /** Tick in cents below $3 and from $3 up. */
  tickBelow3Cents: number;
  tickAbove3Cents: number;
  /** Quoted spread before widening: spreadAbs dollars + spreadRel × price. */
  spreadAbs: number;
  spreadRel: number;
  /** Expected daily volume of an at-the-money front contract. */
  volumeBase: number;
  /** Typical displayed size at the money. */
  sizeBase: number;
};

/** Listing horizons close to the real venues' practice. */
export const DEFAULT_LISTING: Record<ListingStyle, ListingPlan> = {
  etf: {
    weeklyDays: 49,
    midweekDays: 21,
    monthlyMonths: 12,
    quarterlyMonths: 15,
    leapsYears: 3,
    nearSd: 1.5,
    farSd: 3.5,
  },
  index: {
    weeklyDays: 49,
    midweekDays: 21,
    monthlyMonths: 12,
    quarterlyMonths: 15,
    leapsYears: 3,
    nearSd: 1.5,
    farSd: 3.5,
  },
  stock: {
    weeklyDays: 35,
    midweekDays: 0,
    monthlyMonths: 8,
    quarterlyMonths: 8,
    leapsYears: 2.5,
    nearSd: 1.5,
    farSd: 3.5,
  },
};

/**
 * Tick rules: SPY-like ETFs quote in pennies at every price (the penny program's "all pennies" class);
 * single stocks in the penny program quote $0.01 below $3 and $0.05 above; SPX quotes $0.05 below $3
 * and $0.10 above.
 */
export const DEFAULT_PRICING: Record<ListingStyle, PricingParams> = {
  etf: {
    dividendYield: 0.018,
    longRunVol: 0.17,
    skew: -0.12,
    curvature: 0.025,
    tickBelow3Cents: 1,
    tickAbove3Cents: 1,
    spreadAbs: 0.01,
    spreadRel: 0.004,
    volumeBase: 20_000,
    sizeBase: 500,
  },
  index: {
    dividendYield: 0.018,
    longRunVol: 0.17,
    skew: -0.14,
    curvature: 0.025,
    tickBelow3Cents: 5,
    tickAbove3Cents: 10,
    spreadAbs: 0.1,
    spreadRel: 0.01,
    volumeBase: 3_000,
    sizeBase: 50,
  },
  stock: {
    dividendYield: 0.008,
    longRunVol: 0.28,
    skew: -0.07,
    curvature: 0.03,
    tickBelow3Cents: 1,
    tickAbove3Cents: 5,
    spreadAbs: 0.02,
    spreadRel: 0.01,
    volumeBase: 6_000,
    sizeBase: 200,
  },
};

/**
 * First dates of the short-dated expiration series (approximate launch dates of SPY and SPXW
 * Monday/Wednesday weeklies and Tuesday/Thursday dailies); single stocks list Friday weeklies only.
 */
export const MIDWEEK_START: Record<
  ListingStyle,
  { wednesday?: string; monday?: string; tuesdayThursday?: string }
> = {
  etf: { wednesday: '2016-03-02', monday: '2018-08-13', tuesdayThursday: '2022-11-14' },
  index: { wednesday: '2016-02-24', monday: '2016-08-15', tuesdayThursday: '2022-04-18' },
  stock: {},
};

/** EWMA decay of squared daily returns behind the implied-volatility level (RiskMetrics 0.94). */
export const EWMA_DECAY = 0.94;
/** Weight of realised variance (against the long-run level) in the at-the-money volatility now. */
export const REALISED_WEIGHT = 0.85;
/** Implied volatility trades at this multiple of the blended realised level (the variance premium). */
export const VOL_PREMIUM = 1.1;
/** Speed (per year) at which the term structure reverts to the long-run level. */
export const TERM_REVERSION = 4;

/** At-the-money volatility now, from the EWMA variance (annualised) and the long-run level. */
export function volatilityNow(ewmaVariance: number, longRunVol: number): number {
  return VOL_PREMIUM * Math.sqrt(REALISED_WEIGHT * ewmaVariance + (1 - REALISED_WEIGHT) * longRunVol ** 2);
}

/** Strike steps in thousandths of a dollar, fine near the money and coarse far from it, at price `spot`. */
export function strikeSteps(style: ListingStyle, spot: number): { near: number; far: number } {
  switch (style) {
    case 'etf':
      return spot < 25 ? { near: 500, far: 2_500 } : { near: 1_000, far: 5_000 };
    case 'index':
      return spot < 500 ? { near: 1_000, far: 5_000 } : { near: 5_000, far: 25_000 };
    case 'stock':
      if (spot < 25) return { near: 500, far: 2_500 };
      if (spot < 150) return { near: 1_000, far: 5_000 };
      if (spot < 500) return { near: 2_500, far: 10_000 };
      return { near: 5_000, far: 25_000 };
  }
}

/** At-the-money volatility for `years` to expiry: the variance reverts from `now` to the long-run level. */
export function termVol(now: number, longRunVol: number, years: number): number {
  const x = TERM_REVERSION * Math.max(years, 1e-9);
  return Math.sqrt(longRunVol ** 2 + (now ** 2 - longRunVol ** 2) * ((1 - Math.exp(-x)) / x));
}
