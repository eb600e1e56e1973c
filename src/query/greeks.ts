/**
 * Black–Scholes prices, Greeks and implied volatility for European options, used by current option
 * answers when the store holds no vendor Greeks for a snapshot. Conventions follow the service's columns:
 * `iv` as a fraction (0.3468), `theta` per calendar day, `vega` per one volatility point (0.01), `gamma`
 * per dollar of the underlying; values are rounded to three decimals as the service prints them.
 */
import type { OptionSide } from '../occ/index.js';

/** What Black–Scholes needs besides the volatility: `years` to expiration, continuous `rate` (0.05 = 5 %). */
export type OptionTerms = {
  readonly side: OptionSide;
  readonly spot: number;
  readonly strike: number;
  readonly years: number;
  readonly rate: number;
};

/** The price and sensitivities of one option at one volatility. */
export type BlackScholes = {
  readonly price: number;
  readonly delta: number;
  readonly gamma: number;
  readonly theta: number;
  readonly vega: number;
};

/** The five columns the service prints: `iv` and the Greeks, each null when it cannot be computed. */
export type GreekColumns = {
  readonly iv: number | null;
  readonly delta: number | null;
  readonly gamma: number | null;
  readonly theta: number | null;
  readonly vega: number | null;
};

/**
 * The rate the endpoints compute with: the store keeps no rate curve, and at the horizons of listed
 * options the rate moves a price far less than the bid/ask spread does.
 */
export const RISK_FREE_RATE = 0;

const SECONDS_PER_YEAR = 365 * 86_400;
const INV_SQRT_2PI = 0.3989422804014327;
const MIN_VOLATILITY = 1e-4;
const MAX_VOLATILITY = 20;

/** The standard normal density. */
export function normalDensity(x: number): number {
  return INV_SQRT_2PI * Math.exp(-0.5 * x * x);
}

/** The standard normal cumulative distribution (Hart's double-precision rational approximation). */
export function normalCdf(x: number): number {
  const z = Math.abs(x);
  let tail: number;
  if (z > 37) {
    tail = 0;
  } else {
    const e = Math.exp(-0.5 * z * z);
    if (z < 7.07106781186547) {
      let n = 3.52624965998911e-2 * z + 0.700383064443688;
      n = n * z + 6.37396220353165;
      n = n * z + 33.912866078383;
      n = n * z + 112.079291497871;
      n = n * z + 221.213596169931;
      n = n * z + 220.206867912376;
      let d = 8.83883476483184e-2 * z + 1.75566716318264;
      d = d * z + 16.064177579207;
      d = d * z + 86.7807322029461;
      d = d * z + 296.564248779674;
      d = d * z + 637.333633378831;
      d = d * z + 793.826512519948;
      d = d * z + 440.413735824752;
      tail = (e * n) / d;
    } else {
      let d = z + 0.65;
      d = z + 4 / d;
      d = z + 3 / d;
      d = z + 2 / d;
      d = z + 1 / d;
      tail = e / d / 2.506628274631;
    }
  }
  return x > 0 ? 1 - tail : tail;
}

/** Years between two instants (epoch seconds) on a 365-day calendar year, as Greeks per calendar day assume. */
export function yearsBetween(fromSeconds: number, toSeconds: number): number {
  return (toSeconds - fromSeconds) / SECONDS_PER_YEAR;
}

/** The Black–Scholes price and Greeks at volatility `vol`; requires `years`, `vol`, `spot`, `strike` > 0. */
export function blackScholes(terms: OptionTerms, vol: number): BlackScholes {
  const { side, spot, strike, years, rate } = terms;
  const sqrtT = Math.sqrt(years);
  const d1 = (Math.log(spot / strike) + (rate + 0.5 * vol * vol) * years) / (vol * sqrtT);
  const d2 = d1 - vol * sqrtT;
  const discount = Math.exp(-rate * years);
  const density = normalDensity(d1);
  const gamma = density / (spot * vol * sqrtT);
  const vega = (spot * density * sqrtT) / 100;
  const decay = -(spot * density * vol) / (2 * sqrtT);
  if (side === 'call') {
    return {
      price: spot * normalCdf(d1) - strike * discount * normalCdf(d2),
      delta: normalCdf(d1),
      gamma,
      theta: (decay - rate * strike * discount * normalCdf(d2)) / 365,
      vega,
    };
  }
  return {
    price: strike * discount * normalCdf(-d2) - spot * normalCdf(-d1),
    delta: normalCdf(d1) - 1,
    gamma,
    theta: (decay + rate * strike * discount * normalCdf(-d2)) / 365,
    vega,
  };
}

/**
 * The volatility at which Black–Scholes gives `price`, or null when no volatility does (a price at or
 * outside the no-arbitrage bounds, or degenerate terms). Bisection: the price rises with volatility.
 */
export function impliedVolatility(terms: OptionTerms, price: number): number | null {
  if (!validTerms(terms) || !Number.isFinite(price)) return null;
  const { side, spot, strike, years, rate } = terms;
  const discountedStrike = strike * Math.exp(-rate * years);
  const lower = side === 'call' ? Math.max(0, spot - discountedStrike) : Math.max(0, discountedStrike - spot);
  const upper = side === 'call' ? spot : discountedStrike;
  if (price <= lower || price >= upper) return null;
  let low = MIN_VOLATILITY;
  let high = MAX_VOLATILITY;
  if (blackScholes(terms, low).price > price || blackScholes(terms, high).price < price) return null;
  for (let i = 0; i < 100 && high - low > 1e-12; i++) {
    const mid = 0.5 * (low + high);
    if (blackScholes(terms, mid).price < price) low = mid;
    else high = mid;
  }
  return 0.5 * (low + high);
}

/**
 * The service's five columns for a snapshot without vendor values: `iv` given (the vendor's) or implied
 * from `price` (the mid), then the Greeks at that volatility; all null when either cannot be had.
 */
export function greekColumns(terms: OptionTerms, iv: number | null, price: number | null): GreekColumns {
  const vol = iv !== null && iv > 0 ? iv : price === null ? null : impliedVolatility(terms, price);
  if (vol === null || !validTerms(terms))
    return { iv: null, delta: null, gamma: null, theta: null, vega: null };
  const greeks = blackScholes(terms, vol);
  return {
    iv: round3(vol),
    delta: round3(greeks.delta),
    gamma: round3(greeks.gamma),
    theta: round3(greeks.theta),
    vega: round3(greeks.vega),
  };
}

function validTerms(terms: OptionTerms): boolean {
  return (
    terms.spot > 0 &&
    terms.strike > 0 &&
    terms.years > 0 &&
    Number.isFinite(terms.spot) &&
    Number.isFinite(terms.strike) &&
    Number.isFinite(terms.years) &&
    Number.isFinite(terms.rate)
  );
}

function round3(value: number): number {
  const rounded = Math.round(value * 1000) / 1000;
  return rounded === 0 ? 0 : rounded;
}
