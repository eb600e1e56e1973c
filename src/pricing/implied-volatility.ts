/**
 * Implied volatility: the volatility at which a model gives a price, NaN when none does (the price at or
 * outside the no-arbitrage bounds, or a solver that does not converge — never a made-up number).
 *
 * European: Black's formula in normalised form, b(x, s) for x = ln(F/K) and s = σ√T, solved on the
 * out-of-the-money side (an in-the-money option's time value is the price of the other side), with Halley
 * steps on ln b below the inflection point s_c = √(2|x|) and on b above it, where each is near linear
 * (Jäckel, "By implication", 2006, whose starting guesses are used too), kept inside a bracket by
 * bisection; a step is the last when its own error estimate is below 1e-12 of the answer. Two to four
 * evaluations from a cold start, under two from a neighbouring strike's volatility, one or two for a bid
 * or ask started from its mid's search.
 *
 * American: the European volatility of the same price bounds it from above (early exercise only adds
 * value). Where the early-exercise premium is provably negligible there, that is the answer; otherwise
 * Newton steps on the Bjerksund–Stensland value, the premium's slope taken by secant, inside a bracket.
 */
import {
  americanValue,
  earlyExerciseCanPay,
  earlyExercisePremiumBound,
  NEGLIGIBLE_PREMIUM,
} from './american.js';
import { europeanValue } from './european.js';
import { inverseNormalCdf, normalCdf, normalCdfWith } from './normal.js';

const INV_SQRT_2PI = 0.3989422804014327;
const MAX_STEPS = 60;

/**
 * The European implied volatility of `price` (the discounted premium) on forward `forward` with discount
 * factor `discount` (e^{−rT}); `guess` (a volatility, NaN for none) only speeds the search, and when
 * `guessPrice` is the price at `guess` of this same contract (its mid, solving for its bid), the search
 * starts from a Halley step away from it. NaN when no volatility gives the price.
 */
export function europeanImpliedVolatility(
  isCall: boolean,
  forward: number,
  strike: number,
  years: number,
  discount: number,
  price: number,
  guess = Number.NaN,
  guessPrice = Number.NaN,
): number {
  const terms = scratch;
  if (!normalizeTerms(isCall, forward, strike, years, discount, terms)) return Number.NaN;
  const start = guess * terms.sqrtT;
  if (!(start > 0 && Number.isFinite(guessPrice))) return impliedFromNormalized(terms, price, guess);
  // As if a search had just evaluated b at the guess: b = the guess price's time value, b' = φ(√(h² + t²)).
  const h = terms.x / start;
  const t = 0.5 * start;
  terms.lastDeviation = start;
  terms.lastValue = (guessPrice / discount - terms.intrinsic) / terms.root;
  terms.lastSlope = INV_SQRT_2PI * Math.exp(-0.5 * (h * h + t * t));
  return impliedNearLast(terms, price);
}

/**
 * One European contract in Black's normalised coordinates, worked out once and shared by the searches of
 * its mid, bid and ask.
 */
export type NormalizedTerms = {
  /** −|ln(F/K)|: the log-moneyness of the out-of-the-money side, which is the side solved. */
  x: number;
  /** e^{x/2}: the normalised price's upper bound. */
  half: number;
  /** √(FK): the normalisation. */
  root: number;
  /** The undiscounted intrinsic value, (F − K)⁺ for a call: the time value is measured from it. */
  intrinsic: number;
  discount: number;
  sqrtT: number;
  /** The last point a search evaluated (s, b(s), b'(s)); NaN before any. */
  lastDeviation: number;
  lastValue: number;
  lastSlope: number;
};

/** An empty {@link NormalizedTerms} to fill. */
export function emptyNormalizedTerms(): NormalizedTerms {
  return {
    x: 0,
    half: 1,
    root: 1,
    intrinsic: 0,
    discount: 1,
    sqrtT: 1,
    lastDeviation: Number.NaN,
    lastValue: Number.NaN,
    lastSlope: Number.NaN,
  };
}

const scratch = emptyNormalizedTerms();

/** Fills `out` for one contract; false when the terms are degenerate (not finite and positive). */
export function normalizeTerms(
  isCall: boolean,
  forward: number,
  strike: number,
  years: number,
  discount: number,
  out: NormalizedTerms,
): boolean {
  if (
    !(forward > 0 && strike > 0 && years > 0 && discount > 0) ||
    !(forward < Number.POSITIVE_INFINITY && strike < Number.POSITIVE_INFINITY) ||
    !(years < Number.POSITIVE_INFINITY && discount < Number.POSITIVE_INFINITY)
  ) {
    return false;
  }
  out.x = -Math.abs(Math.log(forward / strike));
  out.half = Math.sqrt(forward < strike ? forward / strike : strike / forward);
  out.root = Math.sqrt(forward * strike);
  out.intrinsic = Math.max(0, isCall ? forward - strike : strike - forward);
  out.discount = discount;
  out.sqrtT = Math.sqrt(years);
  out.lastDeviation = Number.NaN;
  return true;
}

/** The implied volatility of `price` for normalised terms; `guess` (a volatility, or NaN) only speeds it. */
export function impliedFromNormalized(terms: NormalizedTerms, price: number, guess: number): number {
  const beta = normalizedPrice(terms, price);
  if (Number.isNaN(beta)) return Number.NaN;
  return solveNormalized(terms, beta, guess * terms.sqrtT) / terms.sqrtT;
}

/**
 * The implied volatility of another price of the contract whose terms a search has just used (its bid
 * after its mid): the search starts from the previous one's last point, a third-order step away.
 */
export function impliedNearLast(terms: NormalizedTerms, price: number): number {
  const beta = normalizedPrice(terms, price);
  if (Number.isNaN(beta)) return Number.NaN;
  const base = terms.lastDeviation;
  let start = Number.NaN;
  if (base > 0 && terms.lastSlope > 0) {
    // b(s) near s₀ to third order, inverted: with r = Δb/b', c = b''/b' = h²/s₀ − s₀/4 and
    // c' = −3h²/s₀² − ¼, the step is r − (c/2)r² + (c²/3 − c'/6)r³, off by O(r⁴).
    const h = terms.x / base;
    const r = (beta - terms.lastValue) / terms.lastSlope;
    const c = (h * h) / base - 0.25 * base;
    const cSlope = (-3 * h * h) / (base * base) - 0.25;
    const next = base + r * (1 - r * (0.5 * c - r * ((c * c) / 3 - cSlope / 6)));
    // A series is only worth its first terms near s₀: a far target (a wide quote on a tiny time value)
    // starts cold instead.
    if (next > 0.5 * base && next < 2 * base) start = next;
  }
  return solveNormalized(terms, beta, start) / terms.sqrtT;
}

/** The time value of `price` over √(FK): what b(x, s) must equal; NaN when there is none. */
function normalizedPrice(terms: NormalizedTerms, price: number): number {
  const timeValue = price / terms.discount - terms.intrinsic;
  return timeValue > 0 && timeValue < Number.POSITIVE_INFINITY ? timeValue / terms.root : Number.NaN;
}

/**
 * Solves b(x, s) = β for s, x ≤ 0 (an out-of-the-money call, normalised by √(FK)); `guess` in s units.
 * NaN when β is outside (0, e^{x/2}) or the search fails. Leaves its last evaluation in `terms`.
 */
function solveNormalized(terms: NormalizedTerms, beta: number, guess: number): number {
  const { x, half } = terms;
  const inverseHalf = 1 / half;
  if (!(beta > 0 && beta < half)) return Number.NaN;
  const inflection = Math.sqrt(-2 * x);
  let s = guess > 0 && guess < Number.POSITIVE_INFINITY ? guess : startingPoint(x, beta, inflection, half);
  if (!(s > 0 && s < Number.POSITIVE_INFINITY)) s = inflection > 0 ? inflection : 1;
  let low = 0;
  let high = Number.POSITIVE_INFINITY;
  let residual = Number.NaN;
  for (let step = 0; step < MAX_STEPS; step++) {
    const h = x / s;
    const t = 0.5 * s;
    const d1 = h + t;
    const e1 = Math.exp(-0.5 * d1 * d1);
    // d₂² = d₁² − 2x, so e^{−d₂²/2} = e^{−d₁²/2}·e^{x}: one exponential serves both tails.
    const value = half * normalCdfWith(d1, e1) - inverseHalf * normalCdfWith(h - t, e1 * half * half);
    // b' = e^{x/2}·φ(d₁), which is also φ(h² + t²)-shaped: (h + t)² = h² + t² + x.
    const slope = half * INV_SQRT_2PI * e1;
    terms.lastDeviation = s;
    terms.lastValue = value;
    terms.lastSlope = slope;
    residual = value - beta;
    if (residual > 0) high = s;
    else if (residual < 0) low = s;
    else return s;
    // c = b''/b' = x²/s³ − s/4 and its derivative c' = −3x²/s⁴ − 1/4, so b'''/b' = c² + c'.
    const curvature = (h * h) / s - 0.5 * t;
    const curvatureSlope = (-3 * h * h) / (s * s) - 0.25;
    let ratio: number;
    let second: number;
    let third: number;
    if (s < inflection && value > 0) {
      // ln b is near linear in the convex lower region, where b itself bends away from its tangents:
      // with u = b'/b, (ln b)''/(ln b)' = c − u and (ln b)'''/(ln b)' = c² − 3cu + 2u² + c'.
      const u = slope / value;
      ratio = logRatio(value, beta) / u;
      second = curvature - u;
      third = curvature * curvature - 3 * curvature * u + 2 * u * u + curvatureSlope;
    } else {
      ratio = residual / slope;
      second = curvature;
      third = curvature * curvature + curvatureSlope;
    }
    const denominator = halleyDenominator(ratio, second);
    let next = s - ratio / denominator;
    if (next > low && next < high) {
      // The step's own error: Halley's leaves (f'''/6f' − (f''/2f')²)·δ³, Newton's (f''/2f')·δ². Once that
      // is below 1e-12·s the step is the last.
      const step = Math.abs(next - s);
      const left =
        denominator === 1
          ? 0.5 * Math.abs(second) * step * step
          : Math.abs(third / 6 - 0.25 * second * second) * step * step * step;
      if (left <= 1e-12 * s) return next;
    } else if (high < Number.POSITIVE_INFINITY) {
      // Bisection, geometric while the bracket spans orders of magnitude.
      next = low > 0.25 * high ? 0.5 * (low + high) : low > 0 ? Math.sqrt(low * high) : 0.25 * high;
      if (high - low <= 1e-13 * high) return next;
    } else {
      next = 2 * s;
    }
    s = next;
  }
  // Deep out of the money b is known to fewer digits than the steps ask for: accept a price matched to
  // eight significant figures, far finer than any quote.
  return Math.abs(residual) <= 1e-8 * beta ? s : Number.NaN;
}

/** ln(a/b), by its series when a is within 1e-3 of b (exact there to double precision, and cheaper). */
function logRatio(a: number, b: number): number {
  const z = (a - b) / b;
  if (Math.abs(z) > 1e-3) return Math.log(a / b);
  return z * (1 - z * (0.5 - z * (1 / 3 - z * (0.25 - 0.2 * z))));
}

/**
 * Halley's correction 1 − ½·(f/f')·(f''/f'), or exactly 1 (Newton's step) where it would misbehave; a
 * correction that is itself exactly 1 changes nothing either way.
 */
function halleyDenominator(ratio: number, curvature: number): number {
  const denominator = 1 - 0.5 * ratio * curvature;
  return denominator > 0.5 && denominator < 2 ? denominator : 1;
}

/** Jäckel's starting points: from the asymptotics of b below the inflection point and above it. */
function startingPoint(x: number, beta: number, inflection: number, half: number): number {
  if (inflection === 0) return 2 * inverseNormalCdf(0.5 * (1 + beta));
  // b at the inflection point, where d₁ = 0 and d₂ = −s_c.
  const atInflection = 0.5 * half - normalCdf(-inflection) / half;
  if (beta < atInflection) return Math.sqrt((2 * x * x) / (-x - 4 * Math.log(beta / atInflection)));
  return -2 * inverseNormalCdf(((half - beta) / (half - atInflection)) * normalCdf(-0.5 * inflection));
}

/**
 * What an American search learned about the early-exercise premium near its answer: the premium P at
 * `vol` and its slope dP/dσ. Handed from the mid's search to the bid's and the ask's, it starts them
 * within a hair of their answers.
 */
export type PremiumMemo = { vol: number; premium: number; slope: number };

/**
 * The American implied volatility of `price` under Bjerksund–Stensland with carry `carry` (b = r − q);
 * `guess` only speeds the search, `memo` (read when its `vol` is set, then written) carries the premium
 * between searches of one contract. NaN at or below the exercise value or at or above the upper bound
 * (the spot for a call, the strike for a put), or when the search fails.
 */
export function americanImpliedVolatility(
  isCall: boolean,
  spot: number,
  strike: number,
  years: number,
  rate: number,
  carry: number,
  price: number,
  guess = Number.NaN,
  memo?: PremiumMemo,
): number {
  if (!(spot > 0 && strike > 0 && years > 0) || !Number.isFinite(rate) || !Number.isFinite(carry)) {
    return Number.NaN;
  }
  const exercise = isCall ? spot - strike : strike - spot;
  if (!(price > exercise && price > 0 && price < (isCall ? spot : strike))) return Number.NaN;
  const forward = spot * Math.exp(carry * years);
  const discount = Math.exp(-rate * years);
  const european = europeanImpliedVolatility(isCall, forward, strike, years, discount, price, guess);
  if (!earlyExerciseCanPay(isCall, rate, carry)) return european;
  if (european > 0) {
    // The premium moves the volatility by at most its bound over vega.
    const bound = earlyExercisePremiumBound(isCall, spot, strike, years, rate, carry, european);
    if (bound <= NEGLIGIBLE_PREMIUM * europeanVegaUnit(forward, strike, years, discount, european)) {
      return european;
    }
  }
  const search = new AmericanSearch(isCall, spot, strike, years, rate, carry, price);
  return search.run(european, guess, memo);
}

/** ∂V/∂σ of the European value (per unit of volatility). */
function europeanVegaUnit(forward: number, strike: number, years: number, discount: number, vol: number) {
  const sqrtT = Math.sqrt(years);
  const d1 = Math.log(forward / strike) / (vol * sqrtT) + 0.5 * vol * sqrtT;
  return discount * forward * sqrtT * INV_SQRT_2PI * Math.exp(-0.5 * d1 * d1);
}

/**
 * Newton steps on A(σ) − price with A = E + P: the European part E exactly (its vega in closed form), the
 * premium P by its secant slope between evaluations, inside a bracket. The European volatility σ_E is
 * an upper end (A ≥ E); the first step removes the premium found there, σ₁ = E⁻¹(price − P(σ_E)), and
 * lands close, since the premium varies slowly with the volatility. Two or three evaluations of the
 * Bjerksund–Stensland value for a mid, one or two for a bid or ask started from the mid's memo.
 */
class AmericanSearch {
  private readonly forward: number;
  private readonly discount: number;
  private low = 0;
  private high = Number.POSITIVE_INFINITY;
  private premium = Number.NaN;
  private residual = Number.NaN;

  constructor(
    private readonly isCall: boolean,
    private readonly spot: number,
    private readonly strike: number,
    private readonly years: number,
    private readonly rate: number,
    private readonly carry: number,
    private readonly price: number,
  ) {
    this.forward = spot * Math.exp(carry * years);
    this.discount = Math.exp(-rate * years);
  }

  run(european: number, guess: number, memo: PremiumMemo | undefined): number {
    let vol: number;
    let slope = 0;
    let previousVol = Number.NaN;
    let previousPremium = Number.NaN;
    if (memo !== undefined && memo.vol > 0) {
      // The memo's linear premium, solved for in two European inversions.
      slope = memo.slope;
      const first = this.invert(this.price - memo.premium, memo.vol);
      vol = this.invert(this.price - memo.premium - slope * (first - memo.vol), first);
      if (!(vol > 0)) vol = first;
    } else if (european > 0) {
      this.evaluate(european);
      this.high = european;
      if (Math.abs(this.residual) <= NEGLIGIBLE_PREMIUM * this.vega(european)) {
        return this.finish(european, 0, memo);
      }
      previousVol = european;
      previousPremium = this.premium;
      vol = this.invert(this.price - this.premium, european);
    } else {
      vol = guess;
    }
    for (let step = 0; step < MAX_STEPS; step++) {
      if (!(vol > this.low && vol < this.high)) {
        vol =
          this.high < Number.POSITIVE_INFINITY ? 0.5 * (this.low + this.high) : Math.max(2 * this.low, 0.5);
      }
      this.evaluate(vol);
      if (!Number.isFinite(this.residual)) return Number.NaN;
      if (previousVol !== vol && Number.isFinite(previousVol)) {
        const secant = (this.premium - previousPremium) / (vol - previousVol);
        if (Number.isFinite(secant)) slope = secant;
      }
      const vega = this.vega(vol);
      if (Math.abs(this.residual) <= 1e-10 * vega) return this.finish(vol, slope, memo);
      const derivative = vega + slope;
      let next = derivative > 0 ? vol - this.residual / derivative : Number.NaN;
      if (next > this.low && next < this.high) {
        // A step this small leaves an error far below it (the steps converge superlinearly).
        if (Math.abs(next - vol) <= 1e-9 * vol) return this.finish(next, slope, memo);
      } else {
        next = Number.NaN;
      }
      previousVol = vol;
      previousPremium = this.premium;
      vol = next;
    }
    return Number.NaN;
  }

  /** A(σ) − price and P(σ) = A(σ) − E(σ), narrowing the bracket by the sign of the former. */
  private evaluate(vol: number): void {
    const { isCall, spot, strike, years, rate, carry } = this;
    const american = americanValue(isCall, spot, strike, years, rate, carry, vol);
    this.residual = american - this.price;
    this.premium = american - europeanValue(isCall, spot, strike, years, rate, carry, vol);
    if (this.residual > 0) this.high = vol;
    else if (this.residual < 0) this.low = vol;
  }

  private vega(vol: number): number {
    return europeanVegaUnit(this.forward, this.strike, this.years, this.discount, vol);
  }

  private invert(price: number, guess: number): number {
    return europeanImpliedVolatility(
      this.isCall,
      this.forward,
      this.strike,
      this.years,
      this.discount,
      price,
      guess,
    );
  }

  private finish(vol: number, slope: number, memo: PremiumMemo | undefined): number {
    if (memo !== undefined) {
      memo.vol = vol;
      memo.premium = this.premium;
      memo.slope = slope;
    }
    return vol;
  }
}
