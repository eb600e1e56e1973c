/**
 * The normal distribution functions the pricing models need: the density, the cumulative distribution
 * (double precision, also in the far tails where option prices live), an inverse good enough for a
 * solver's first guess, and the bivariate cumulative distribution at a fixed correlation.
 */

const INV_SQRT_2PI = 0.3989422804014327;

/** The standard normal density. */
export function normalDensity(x: number): number {
  return INV_SQRT_2PI * Math.exp(-0.5 * x * x);
}

/** The standard normal cumulative distribution (Hart's double-precision rational approximation). */
export function normalCdf(x: number): number {
  return normalCdfWith(x, Math.exp(-0.5 * x * x));
}

/**
 * Φ(x) given e^{−x²/2}, which a caller also needing the density φ(x) has computed already: the solvers
 * save one exponential per step this way.
 */
export function normalCdfWith(x: number, halfSquareExp: number): number {
  const z = Math.abs(x);
  let tail: number;
  if (z > 37) {
    tail = 0;
  } else if (z < 7.07106781186547) {
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
    tail = (halfSquareExp * n) / d;
  } else {
    let d = z + 0.65;
    d = z + 4 / d;
    d = z + 3 / d;
    d = z + 2 / d;
    d = z + 1 / d;
    tail = halfSquareExp / d / 2.506628274631;
  }
  return x > 0 ? 1 - tail : tail;
}

/**
 * The inverse of {@link normalCdf} to about 1e-9 of the quantile (Acklam's rational approximation): enough for a
 * solver's starting point, not for a final answer. NaN outside (0, 1).
 */
export function inverseNormalCdf(p: number): number {
  if (!(p > 0 && p < 1)) return Number.NaN;
  if (p < 0.02425) {
    const q = Math.sqrt(-2 * Math.log(p));
    return lowerTail(q);
  }
  if (p > 0.97575) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    return -lowerTail(q);
  }
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((-3.969683028665376e1 * r + 2.209460984245205e2) * r - 2.759285104469687e2) * r +
      1.38357751867269e2) *
      r -
      3.066479806614716e1) *
      r +
      2.506628277459239) *
      q) /
    (((((-5.447609879822406e1 * r + 1.615858368580409e2) * r - 1.556989798598866e2) * r +
      6.680131188771972e1) *
      r -
      1.328068155288572e1) *
      r +
      1)
  );
}

function lowerTail(q: number): number {
  return (
    (((((-7.784894002430293e-3 * q - 3.223964580411365e-1) * q - 2.400758277161838) * q - 2.549732539343734) *
      q +
      4.374664141464968) *
      q +
      2.938163982698783) /
    ((((7.784695709041462e-3 * q + 3.224671290700398e-1) * q + 2.445134137142996) * q + 3.754408661907416) *
      q +
      1)
  );
}

/** Ten-point Gauss–Legendre abscissas and weights on [−1, 1] (the positive half; the rule is symmetric). */
const GL_X = [
  0.1488743389816312, 0.4333953941292472, 0.6794095682990244, 0.8650633666889845, 0.9739065285171717,
];
const GL_W = [
  0.2955242247147529, 0.2692667193099963, 0.219086362515982, 0.1494513491505806, 0.0666713443086881,
];

/**
 * The integrand of Sheppard's formula, Φ₂(a, b; ρ) = Φ(a)Φ(b) + (1/2π)∫₀^{asin ρ} exp(−(a² + b² −
 * 2ab sin θ)/(2 cos² θ)) dθ, sampled at the nodes of a Gauss–Legendre rule on [0, asin ρ]: the sines, the
 * factors 1/(2 cos² θ), and the weights with 1/2π folded in.
 */
export type BivariateRule = {
  readonly sin: Float64Array;
  readonly halfSecantSquared: Float64Array;
  readonly weight: Float64Array;
};

/**
 * The quadrature rule of {@link bivariateNormalCdfWith} for one correlation, built once and reused: the
 * American model evaluates Φ₂ two dozen times per price at only two correlations (±0.786). Accurate to
 * about 2e-13 for |ρ| ≤ 0.8; nearer ±1 the integrand sharpens and ten nodes no longer suffice.
 */
export function bivariateRule(rho: number): BivariateRule {
  const angle = Math.asin(rho);
  const n = GL_X.length * 2;
  const sin = new Float64Array(n);
  const halfSecantSquared = new Float64Array(n);
  const weight = new Float64Array(n);
  for (let i = 0; i < GL_X.length; i++) {
    for (const sign of [-1, 1]) {
      const k = 2 * i + (sign > 0 ? 1 : 0);
      const theta = 0.5 * angle * (1 + sign * GL_X[i]!);
      const cos = Math.cos(theta);
      sin[k] = Math.sin(theta);
      halfSecantSquared[k] = 0.5 / (cos * cos);
      weight[k] = (0.5 * angle * GL_W[i]!) / (2 * Math.PI);
    }
  }
  return { sin, halfSecantSquared, weight };
}

/** Φ₂(a, b; ρ) with a rule made by {@link bivariateRule} for ρ. */
export function bivariateNormalCdfWith(rule: BivariateRule, a: number, b: number): number {
  const sumSquares = a * a + b * b;
  const product = 2 * a * b;
  let integral = 0;
  for (let k = 0; k < rule.sin.length; k++) {
    integral +=
      rule.weight[k]! * Math.exp(-(sumSquares - product * rule.sin[k]!) * rule.halfSecantSquared[k]!);
  }
  return normalCdf(a) * normalCdf(b) + integral;
}
