import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bivariateNormalCdfWith,
  bivariateRule,
  blackScholes,
  europeanImpliedVolatility,
  greekColumns,
  impliedVolatility,
  inverseNormalCdf,
  normalCdf,
  type OptionTerms,
  yearsBetween,
} from '../../src/pricing/index.js';

describe('normal distribution', () => {
  it('computes the normal distribution (double precision in the body, 1e-8 relative in the far tail)', () => {
    expect(normalCdf(0)).toBe(0.5);
    expect(normalCdf(1.96)).toBeCloseTo(0.9750021048517795, 14);
    expect(normalCdf(-1)).toBeCloseTo(0.15865525393145707, 14);
    expect(normalCdf(3)).toBeCloseTo(0.9986501019683699, 14);
    expect(normalCdf(-8.5) / 9.479534822203355e-18).toBeCloseTo(1, 7);
    expect(normalCdf(40)).toBe(1);
  });

  it('inverts it to about 1e-9 of the quantile, enough for a starting point; no inverse outside (0, 1)', () => {
    const ps = [1e-12, 0.001, 0.02, 0.3, 0.5, 0.8, 0.98, 0.999999];
    const quantileError = (p: number) => {
      const x = inverseNormalCdf(p);
      return (
        (normalCdf(x) - p) / (Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI)) / Math.max(1, Math.abs(x))
      );
    };
    expect(ps.map(quantileError)).toEqual(ps.map(() => expect.closeTo(0, 8)));
    expect([0, 1, -0.5, Number.NaN].map(inverseNormalCdf)).toEqual([
      Number.NaN,
      Number.NaN,
      Number.NaN,
      Number.NaN,
    ]);
  });

  it('computes the bivariate distribution at the American model’s correlations to 1e-12', () => {
    const rho = Math.sqrt(0.5 * (Math.sqrt(5) - 1));
    const plus = bivariateRule(rho);
    const minus = bivariateRule(-rho);
    // Φ₂(0, 0; ρ) = ¼ + asin(ρ)/2π; Φ₂(a, b; ρ) + Φ₂(a, −b; −ρ) = Φ(a); symmetric in a and b.
    expect(bivariateNormalCdfWith(plus, 0, 0)).toBeCloseTo(0.25 + Math.asin(rho) / (2 * Math.PI), 13);
    for (const [a, b] of [
      [-2, 1.5],
      [0.3, -0.7],
      [4, 4],
      [-6, -1],
    ] as const) {
      expect(bivariateNormalCdfWith(plus, a, b) + bivariateNormalCdfWith(minus, a, -b)).toBeCloseTo(
        normalCdf(a),
        12,
      );
      expect(bivariateNormalCdfWith(plus, a, b)).toBeCloseTo(bivariateNormalCdfWith(plus, b, a), 14);
    }
    expect(bivariateNormalCdfWith(plus, 9, 9)).toBeCloseTo(1, 14);
    expect(bivariateNormalCdfWith(minus, -9, 3)).toBeCloseTo(0, 14);
  });
});

describe('Black–Scholes–Merton', () => {
  it('prices the textbook case with the service’s units (theta per day, vega per vol point)', () => {
    const terms: OptionTerms = { side: 'call', spot: 100, strike: 100, years: 1, rate: 0.05 };
    const call = blackScholes(terms, 0.2);
    const put = blackScholes({ ...terms, side: 'put' }, 0.2);
    const expected = [
      10.450583572185565, 0.6368306511756191, 0.018762017345846895, -0.01757267820941972, 0.3752403469169379,
    ];
    expect(
      [call.price, call.delta, call.gamma, call.theta, call.vega].map((x, i) => x - expected[i]!),
    ).toEqual(expected.map(() => expect.closeTo(0, 12)));
    expect(put.price).toBeCloseTo(5.573526022256971, 12);
    expect(put.theta).toBeCloseTo(-0.004542138147766099, 12);
    expect(put.delta).toBeCloseTo(call.delta - 1, 15);
  });

  it('with a dividend yield: put–call parity, and Greeks that are the derivatives of the price', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<'call' | 'put'>('call', 'put'),
        fc.double({ min: 60, max: 160, noNaN: true }),
        fc.double({ min: 0.02, max: 2, noNaN: true }),
        fc.double({ min: 0, max: 0.08, noNaN: true }),
        fc.double({ min: -0.02, max: 0.06, noNaN: true }),
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        (side, strike, years, rate, dividendYield, vol) => {
          const terms: OptionTerms = { side, spot: 100, strike, years, rate, dividendYield };
          const at = (change: Partial<OptionTerms>, v = vol) =>
            blackScholes({ ...terms, ...change }, v).price;
          const value = blackScholes(terms, vol);
          const call = blackScholes({ ...terms, side: 'call' }, vol).price;
          const put = blackScholes({ ...terms, side: 'put' }, vol).price;
          const parity = 100 * Math.exp(-dividendYield * years) - strike * Math.exp(-rate * years);
          const h = 1e-3;
          return (
            Math.abs(call - put - parity) < 1e-9 &&
            Math.abs(value.delta - (at({ spot: 100 + h }) - at({ spot: 100 - h })) / (2 * h)) < 1e-6 &&
            Math.abs(
              value.gamma - (at({ spot: 100 + h }) - 2 * value.price + at({ spot: 100 - h })) / h ** 2,
            ) < 1e-4 &&
            Math.abs(value.theta - (at({ years: years - 1e-5 }) - at({ years: years + 1e-5 })) / 2e-5 / 365) <
              1e-6 &&
            Math.abs(value.vega - (at({}, vol + 1e-5) - at({}, vol - 1e-5)) / 2e-5 / 100) < 1e-6
          );
        },
      ),
      { seed: 11, numRuns: 200 },
    );
  });

  it('recovers the volatility from the price, and has none outside the no-arbitrage bounds', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<'call' | 'put'>('call', 'put'),
        fc.double({ min: 50, max: 150, noNaN: true }),
        fc.double({ min: 0.002, max: 3, noNaN: true }),
        fc.double({ min: 0.03, max: 3, noNaN: true }),
        fc.double({ min: 0, max: 0.08, noNaN: true }),
        (side, strike, years, vol, rate) => {
          const terms: OptionTerms = { side, spot: 100, strike, years, rate, dividendYield: 0.01 };
          const price = blackScholes(terms, vol).price;
          const implied = impliedVolatility(terms, price);
          const vega = blackScholes(terms, vol).vega * 100;
          // a price carrying no time value carries no volatility either
          if (implied === null) return vega < 1e-9;
          return (
            Math.abs(blackScholes(terms, implied).price - price) < 1e-9 * Math.max(1, price) &&
            (vega < 1e-3 || Math.abs(implied - vol) < 1e-8)
          );
        },
      ),
      { seed: 7, numRuns: 500 },
    );
    const call: OptionTerms = { side: 'call', spot: 100, strike: 90, years: 0.5, rate: 0 };
    expect([
      impliedVolatility(call, 9.99),
      impliedVolatility(call, 10),
      impliedVolatility(call, 100),
      impliedVolatility(call, -1),
      impliedVolatility(call, Number.NaN),
      impliedVolatility(call, Number.POSITIVE_INFINITY),
      impliedVolatility({ ...call, years: 0 }, 12),
      impliedVolatility({ ...call, spot: Number.NaN }, 12),
    ]).toEqual([null, null, null, null, null, null, null, null]);
  });

  it('starts a bid’s search a Halley step from the mid’s answer, and lands on the same volatility', () => {
    const [forward, strike, years] = [4500, 4600, 30 / 365];
    const mid = blackScholes({ side: 'call', spot: forward, strike, years, rate: 0 }, 0.16).price;
    const bid = mid - 0.4;
    const cold = europeanImpliedVolatility(true, forward, strike, years, 1, bid);
    const warm = europeanImpliedVolatility(true, forward, strike, years, 1, bid, 0.16, mid);
    expect(warm).toBeCloseTo(cold, 12);
    expect(blackScholes({ side: 'call', spot: forward, strike, years, rate: 0 }, warm).price).toBeCloseTo(
      bid,
      10,
    );
  });

  it('fills the five columns rounded to three decimals, or nulls when they cannot be had', () => {
    const terms: OptionTerms = {
      side: 'call',
      spot: 100,
      strike: 100,
      years: yearsBetween(0, 365 * 86_400),
      rate: 0.05,
    };
    expect(greekColumns(terms, 0.2, null)).toEqual({
      iv: 0.2,
      delta: 0.637,
      gamma: 0.019,
      theta: -0.018,
      vega: 0.375,
    });
    expect(greekColumns(terms, null, 10.450583572185565)).toEqual(greekColumns(terms, 0.2, null));
    const nothing = { iv: null, delta: null, gamma: null, theta: null, vega: null };
    expect(greekColumns({ ...terms, years: 0 }, 0.2, null)).toEqual(nothing);
    expect(greekColumns(terms, null, null)).toEqual(nothing);
    expect(greekColumns(terms, null, 1)).toEqual(nothing);
    expect(greekColumns({ ...terms, spot: Number.POSITIVE_INFINITY }, 0.2, null)).toEqual(nothing);
  });
});
