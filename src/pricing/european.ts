/**
 * European options: the Black–Scholes–Merton value and Greeks with a continuous carry, in the service's
 * units (delta and gamma per $1 of the underlying, theta per calendar day, vega per volatility point).
 * Written on the forward F = S·e^{bT} and the discount D = e^{−rT}, so that a forward implied from the
 * chain itself (put–call parity) prices exactly as a stated rate and dividend yield would.
 */
import type { OptionSide } from '../occ/index.js';
import { normalCdf, normalCdfWith } from './normal.js';

const INV_SQRT_2PI = 0.3989422804014327;

/**
 * One option's terms besides the volatility: `years` to expiration from the quote instant, the continuous
 * `rate` (0.05 = 5 %) and `dividendYield` (absent = 0); the forward is spot·e^{(rate − dividendYield)·years}.
 */
export type OptionTerms = {
  readonly side: OptionSide;
  readonly spot: number;
  readonly strike: number;
  readonly years: number;
  readonly rate: number;
  readonly dividendYield?: number;
};

/** An option's value and sensitivities at one volatility, in the service's units. */
export type Valuation = {
  readonly price: number;
  readonly delta: number;
  readonly gamma: number;
  readonly theta: number;
  readonly vega: number;
};

/** A valuation being filled in: the hot loops reuse one instead of allocating per contract. */
export type MutableValuation = { -readonly [K in keyof Valuation]: Valuation[K] };

const SECONDS_PER_YEAR = 365 * 86_400;
const DAYS_PER_YEAR = 365;

/** Years between two instants (epoch seconds) on a 365-day calendar year, as Greeks per calendar day assume. */
export function yearsBetween(fromSeconds: number, toSeconds: number): number {
  return (toSeconds - fromSeconds) / SECONDS_PER_YEAR;
}

/** The Black–Scholes–Merton value and Greeks at volatility `vol`; requires `years`, `vol`, `spot`, `strike` > 0. */
export function blackScholes(terms: OptionTerms, vol: number): Valuation {
  const out: MutableValuation = { price: 0, delta: 0, gamma: 0, theta: 0, vega: 0 };
  const { spot, strike, years, rate } = terms;
  europeanValuation(
    terms.side === 'call',
    spot,
    strike,
    years,
    rate,
    rate - (terms.dividendYield ?? 0),
    vol,
    out,
  );
  return out;
}

/**
 * The European value with carry `carry` (b = r − q): the discounted Black value on F = S·e^{bT}. The
 * positional form the solvers and the batch call in their loops.
 */
export function europeanValue(
  isCall: boolean,
  spot: number,
  strike: number,
  years: number,
  rate: number,
  carry: number,
  vol: number,
): number {
  const forward = spot * Math.exp(carry * years);
  const discount = Math.exp(-rate * years);
  const deviation = vol * Math.sqrt(years);
  const d1 = Math.log(forward / strike) / deviation + 0.5 * deviation;
  const d2 = d1 - deviation;
  return isCall
    ? discount * (forward * normalCdf(d1) - strike * normalCdf(d2))
    : discount * (strike * normalCdf(-d2) - forward * normalCdf(-d1));
}

/**
 * The European value and Greeks into `out`. Delta and gamma are per $1 of the spot with the carry held
 * constant (the forward moves with the spot), theta is −∂V/∂T per calendar day with the rate and carry
 * held, vega is per volatility point.
 */
export function europeanValuation(
  isCall: boolean,
  spot: number,
  strike: number,
  years: number,
  rate: number,
  carry: number,
  vol: number,
  out: MutableValuation,
): void {
  const forward = spot * Math.exp(carry * years);
  valuationOnForward(isCall, spot, strike, years, rate, carry, forward, Math.exp(-rate * years), vol, out);
}

/**
 * {@link europeanValuation} given also the forward S·e^{bT}, the discount factor e^{−rT}, and optionally
 * ln(F/K) and √T, which the batch has at hand.
 */
export function valuationOnForward(
  isCall: boolean,
  spot: number,
  strike: number,
  years: number,
  rate: number,
  carry: number,
  forward: number,
  discount: number,
  vol: number,
  out: MutableValuation,
  logMoneyness = Math.log(forward / strike),
  sqrtT = Math.sqrt(years),
): void {
  const deviation = vol * sqrtT;
  const d1 = logMoneyness / deviation + 0.5 * deviation;
  const d2 = d1 - deviation;
  const halfSquareExp = Math.exp(-0.5 * d1 * d1);
  // d₂² = d₁² − 2·ln(F/K), so e^{−d₂²/2} = e^{−d₁²/2}·F/K.
  const halfSquareExp2 = (halfSquareExp * forward) / strike;
  const density = INV_SQRT_2PI * halfSquareExp;
  const discountedForward = discount * forward;
  // e^{−qT} = D·F/S: the spot's share of the discounted forward.
  const carried = discountedForward / spot;
  const decay = (-discountedForward * density * vol) / (2 * sqrtT);
  const dividendYield = rate - carry;
  out.gamma = (carried * density) / (spot * deviation);
  out.vega = (discountedForward * density * sqrtT) / 100;
  // φ is even, so e^{−d₁²/2} serves Φ(d₁) and Φ(−d₁) alike; each side takes its own tail, which keeps the
  // far out-of-the-money values to full relative precision.
  if (isCall) {
    const n1 = normalCdfWith(d1, halfSquareExp);
    const n2 = normalCdfWith(d2, halfSquareExp2);
    out.price = discountedForward * n1 - discount * strike * n2;
    out.delta = carried * n1;
    out.theta =
      (decay - rate * discount * strike * n2 + dividendYield * discountedForward * n1) / DAYS_PER_YEAR;
  } else {
    const n1 = normalCdfWith(-d1, halfSquareExp);
    const n2 = normalCdfWith(-d2, halfSquareExp2);
    out.price = discount * strike * n2 - discountedForward * n1;
    out.delta = -carried * n1;
    out.theta =
      (decay + rate * discount * strike * n2 - dividendYield * discountedForward * n1) / DAYS_PER_YEAR;
  }
}
