/**
 * American options: the Bjerksund–Stensland (2002) approximation, a two-step flat exercise boundary whose
 * value is that of a feasible exercise policy, so a lower bound of the true American value. Puts go
 * through the put–call transformation P(S, K, T, r, b) = C(K, S, T, r − b, −b). Greeks are central
 * finite differences of the value (the formula has no tidy closed-form derivatives), in the service's
 * units like the European ones.
 */
import { europeanValuation, europeanValue, type MutableValuation } from './european.js';
import { bivariateNormalCdfWith, bivariateRule, normalCdf } from './normal.js';

/** The split of the horizon into the two boundary steps, t₁ = ½(√5 − 1)·T, as the paper fixes it. */
const FIRST_STEP = 0.5 * (Math.sqrt(5) - 1);
/** Φ₂ in ψ always correlates the two steps by ±√(t₁/T): two quadrature rules serve every evaluation. */
const STEP_CORRELATION = Math.sqrt(FIRST_STEP);
const POSITIVE = bivariateRule(STEP_CORRELATION);
const NEGATIVE = bivariateRule(-STEP_CORRELATION);
const DAYS_PER_YEAR = 365;

/**
 * The American value: the Bjerksund–Stensland value, or the European one where that is higher (both are
 * values of feasible exercise policies, so the larger is the better lower bound), or the European one
 * where early exercise is never optimal (a call with b ≥ r, a put with r ≤ 0). Positional like
 * `europeanValue`: `carry` is b = r − q.
 */
export function americanValue(
  isCall: boolean,
  spot: number,
  strike: number,
  years: number,
  rate: number,
  carry: number,
  vol: number,
): number {
  const european = europeanValue(isCall, spot, strike, years, rate, carry, vol);
  if (!earlyExerciseCanPay(isCall, rate, carry)) return european;
  const american = isCall
    ? bjerksundStenslandCall(spot, strike, years, rate, carry, vol)
    : bjerksundStenslandCall(strike, spot, years, rate - carry, -carry, vol);
  // The formula leaves its domain with negative rates (β has no real value, NaN): keep the European value.
  return Number.isNaN(american) || american < european ? european : american;
}

/**
 * Whether early exercise can ever be worth anything: a call needs a dividend yield (b < r), a put a rate.
 * Below 1e-9 a year either is worth under 1e-9 of the spot, and the formula degenerates as it vanishes.
 */
export function earlyExerciseCanPay(isCall: boolean, rate: number, carry: number): boolean {
  return isCall ? rate - carry > MIN_YIELD : rate > MIN_YIELD;
}

const MIN_YIELD = 1e-9;

/**
 * An upper bound of what early exercise adds to the European value, cheap enough to decide when the
 * Bjerksund–Stensland evaluations can be skipped. Kim's integral writes the premium of a call as
 * ∫₀ᵀ [qS·e^{−qt}·N(d₁(S, B, t)) − rK·e^{−rt}·N(d₂(S, B, t))] dt over the exercise boundary B; dropping the
 * second term (negative while r ≥ 0) and replacing B by its floor max(K, rK/q) bounds it by
 * S(1 − e^{−qT})·max N(d₁). Puts use the same bound through the put–call transformation.
 */
export function earlyExercisePremiumBound(
  isCall: boolean,
  spot: number,
  strike: number,
  years: number,
  rate: number,
  carry: number,
  vol: number,
): number {
  if (!earlyExerciseCanPay(isCall, rate, carry)) return 0;
  return isCall
    ? callPremiumBound(spot, strike, years, rate, carry, vol)
    : callPremiumBound(strike, spot, years, rate - carry, -carry, vol);
}

function callPremiumBound(
  spot: number,
  strike: number,
  years: number,
  rate: number,
  carry: number,
  vol: number,
) {
  const dividendYield = rate - carry;
  const floor = rate > 0 ? strike * Math.max(1, rate / dividendYield) : strike;
  const logMoneyness = Math.log(spot / floor);
  // With a negative rate (a put's negative dividend yield, through the transformation) the strike term of
  // Kim's integrand adds to the premium too: bound it by the same N(d₁) ≥ N(d₂).
  const strikeTerm = rate < 0 ? strike * Math.expm1(-rate * years) : 0;
  const scale = spot * -Math.expm1(-dividendYield * years) + strikeTerm;
  if (logMoneyness >= 0) return scale;
  // d₁(t) = L/(σ√t) + c√t/σ rises with t while c ≥ 0, else peaks at t = L/c.
  const drift = carry + 0.5 * vol * vol;
  const t = drift < 0 ? Math.min(years, logMoneyness / drift) : years;
  return scale * normalCdf((logMoneyness + drift * t) / (vol * Math.sqrt(t)));
}

/**
 * The Bjerksund–Stensland (2002) American call; NaN unless b < r (without a dividend yield an American
 * call is a European one). The value is S − K at or beyond the second boundary I₂ (immediate exercise).
 */
export function bjerksundStenslandCall(
  spot: number,
  strike: number,
  years: number,
  rate: number,
  carry: number,
  vol: number,
): number {
  if (!(rate - carry > MIN_YIELD)) return Number.NaN;
  const variance = vol * vol;
  const t1 = FIRST_STEP * years;
  const drift = carry / variance - 0.5;
  const beta = -drift + Math.sqrt(drift * drift + (2 * rate) / variance);
  if (!(beta > 1)) return Number.NaN;
  const infinite = (beta / (beta - 1)) * strike;
  const floor = Math.max(strike, (rate / (rate - carry)) * strike);
  const spread = ((infinite - floor) * floor) / (strike * strike);
  const i1 = floor + (infinite - floor) * -Math.expm1(-(carry * t1 + 2 * vol * Math.sqrt(t1)) / spread);
  const i2 = floor + (infinite - floor) * -Math.expm1(-(carry * years + 2 * vol * Math.sqrt(years)) / spread);
  if (spot >= i2) return spot - strike;
  const alpha1 = (i1 - strike) * Math.exp(-beta * Math.log(i1));
  const alpha2 = (i2 - strike) * Math.exp(-beta * Math.log(i2));
  const m = new Model(spot, rate, carry, vol, years, t1, i1, i2);
  return (
    alpha2 * Math.exp(beta * m.logSpot) -
    alpha2 * m.phi(beta, m.logI2, m.logI2) +
    m.phi(1, m.logI2, m.logI2) -
    m.phi(1, m.logI1, m.logI2) -
    strike * m.phi(0, m.logI2, m.logI2) +
    strike * m.phi(0, m.logI1, m.logI2) +
    alpha1 * m.phi(beta, m.logI1, m.logI2) -
    alpha1 * m.psi(beta, m.logI1) +
    m.psi(1, m.logI1) -
    m.psi(1, Math.log(strike)) -
    strike * m.psi(0, m.logI1) +
    strike * m.psi(0, Math.log(strike))
  );
}

/** The φ and ψ functions of the paper for one call, with the logarithms they share computed once. */
class Model {
  readonly logSpot: number;
  readonly logI1: number;
  readonly logI2: number;
  private readonly sqrtT1: number;
  private readonly sqrtT: number;

  constructor(
    spot: number,
    private readonly rate: number,
    private readonly carry: number,
    private readonly vol: number,
    private readonly years: number,
    private readonly t1: number,
    i1: number,
    i2: number,
  ) {
    this.logSpot = Math.log(spot);
    this.logI1 = Math.log(i1);
    this.logI2 = Math.log(i2);
    this.sqrtT1 = Math.sqrt(t1);
    this.sqrtT = Math.sqrt(years);
  }

  /** φ(S, t₁, γ, H, I) with H and I given by their logarithms. */
  phi(gamma: number, logH: number, logI: number): number {
    const { vol, t1 } = this;
    const variance = vol * vol;
    const lambda = (-this.rate + gamma * this.carry + 0.5 * gamma * (gamma - 1) * variance) * t1;
    const deviation = vol * this.sqrtT1;
    const d = -(this.logSpot - logH + (this.carry + (gamma - 0.5) * variance) * t1) / deviation;
    const kappa = (2 * this.carry) / variance + (2 * gamma - 1);
    const logRatio = logI - this.logSpot;
    return (
      Math.exp(lambda + gamma * this.logSpot) *
      (normalCdf(d) - Math.exp(kappa * logRatio) * normalCdf(d - (2 * logRatio) / deviation))
    );
  }

  /** ψ(S, T, γ, H, I₂, I₁, t₁) with H given by its logarithm. */
  psi(gamma: number, logH: number): number {
    const { vol, logSpot, logI1, logI2 } = this;
    const variance = vol * vol;
    const lambda = -this.rate + gamma * this.carry + 0.5 * gamma * (gamma - 1) * variance;
    const kappa = (2 * this.carry) / variance + (2 * gamma - 1);
    const drift = this.carry + (gamma - 0.5) * variance;
    const first = vol * this.sqrtT1;
    const whole = vol * this.sqrtT;
    const shift1 = drift * this.t1;
    const shiftT = drift * this.years;
    const reflected = 2 * logI2 - logSpot - logI1;
    const e1 = (logSpot - logI1 + shift1) / first;
    const e2 = (reflected + shift1) / first;
    const e3 = (logSpot - logI1 - shift1) / first;
    const e4 = (reflected - shift1) / first;
    const f1 = (logSpot - logH + shiftT) / whole;
    const f2 = (2 * logI2 - logSpot - logH + shiftT) / whole;
    const f3 = (2 * logI1 - logSpot - logH + shiftT) / whole;
    const f4 = (logSpot + 2 * logI1 - logH - 2 * logI2 + shiftT) / whole;
    return (
      Math.exp(lambda * this.years + gamma * logSpot) *
      (bivariateNormalCdfWith(POSITIVE, -e1, -f1) -
        Math.exp(kappa * (logI2 - logSpot)) * bivariateNormalCdfWith(POSITIVE, -e2, -f2) -
        Math.exp(kappa * (logI1 - logSpot)) * bivariateNormalCdfWith(NEGATIVE, -e3, -f3) +
        Math.exp(kappa * (logI1 - logI2)) * bivariateNormalCdfWith(NEGATIVE, -e4, -f4))
    );
  }
}

/** Relative bumps of the finite differences: small against the curvature, large against rounding. */
const SPOT_BUMP = 1e-3;
const ONE_SIDED_BUMP = 1e-4;

/** A premium below this many units of volatility times vega moves an IV by less than that. */
export const NEGLIGIBLE_PREMIUM = 1e-7;

/**
 * The American value and Greeks into `out`. Where early exercise cannot pay, or its premium at `vol` is
 * negligible (bounded, or found so), the European closed forms; otherwise finite differences of
 * {@link americanValue}: central in the spot for delta and gamma, one-sided in time and volatility (five
 * evaluations in all). Theta is the value's decay over calendar time with the rate and carry held (−∂V/∂T
 * per day), vega per volatility point.
 */
export function americanValuation(
  isCall: boolean,
  spot: number,
  strike: number,
  years: number,
  rate: number,
  carry: number,
  vol: number,
  out: MutableValuation,
): void {
  europeanValuation(isCall, spot, strike, years, rate, carry, vol, out);
  if (!earlyExerciseCanPay(isCall, rate, carry)) return;
  const negligible = NEGLIGIBLE_PREMIUM * out.vega * 100;
  if (earlyExercisePremiumBound(isCall, spot, strike, years, rate, carry, vol) <= negligible) return;
  const value = (s: number, t: number, v: number) => americanValue(isCall, s, strike, t, rate, carry, v);
  const price = value(spot, years, vol);
  if (price - out.price <= negligible) return;
  const h = spot * SPOT_BUMP;
  const up = value(spot + h, years, vol);
  const down = value(spot - h, years, vol);
  const dt = years * ONE_SIDED_BUMP;
  const dv = vol * ONE_SIDED_BUMP;
  out.price = price;
  out.delta = (up - down) / (2 * h);
  out.gamma = (up - 2 * price + down) / (h * h);
  out.theta = (value(spot, years - dt, vol) - price) / dt / DAYS_PER_YEAR;
  out.vega = (value(spot, years, vol + dv) - price) / dv / 100;
}
