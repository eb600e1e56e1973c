import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  americanImpliedVolatility,
  americanValue,
  bjerksundStenslandCall,
  earlyExercisePremiumBound,
  europeanValue,
  impliedVolatility,
  type OptionTerms,
  optionValuation,
} from '../../src/pricing/index.js';

/** A Cox–Ross–Rubinstein tree with early exercise, averaged over two step counts to damp its oscillation. */
function binomialAmerican(
  isCall: boolean,
  S: number,
  K: number,
  T: number,
  r: number,
  b: number,
  vol: number,
) {
  const tree = (steps: number) => {
    const dt = T / steps;
    const up = Math.exp(vol * Math.sqrt(dt));
    const p = (Math.exp(b * dt) - 1 / up) / (up - 1 / up);
    const discount = Math.exp(-r * dt);
    const values = new Float64Array(steps + 1);
    for (let j = 0; j <= steps; j++) {
      const price = S * up ** (steps - 2 * j);
      values[j] = Math.max(0, isCall ? price - K : K - price);
    }
    for (let i = steps - 1; i >= 0; i--) {
      for (let j = 0; j <= i; j++) {
        const price = S * up ** (i - 2 * j);
        const held = discount * (p * values[j]! + (1 - p) * values[j + 1]!);
        values[j] = Math.max(held, isCall ? price - K : K - price);
      }
    }
    return values[0]!;
  };
  return 0.5 * (tree(800) + tree(801));
}

describe('Bjerksund–Stensland (2002)', () => {
  it('reproduces the published values for American calls on futures (X = 100, r = 10 %, b = 0)', () => {
    // Haug, The Complete Guide to Option Pricing Formulas (2nd ed.), the 2002 approximation's table:
    // spot 90, 100, 110 by volatility 15 %, 25 %, 35 %, for T = 0.1 and T = 0.5.
    const table = [90, 100, 110].map((spot) =>
      [0.15, 0.25, 0.35].flatMap((vol) =>
        [0.1, 0.5].map((years) => bjerksundStenslandCall(spot, 100, years, 0.1, 0, vol).toFixed(4)),
      ),
    );
    expect(table).toEqual([
      ['0.0205', '0.8099', '0.3151', '2.7180', '0.9479', '4.9665'],
      ['1.8757', '4.0628', '3.1256', '6.7661', '4.3746', '9.4608'],
      ['10.0000', '10.7898', '10.3725', '12.9814', '11.1578', '15.5137'],
    ]);
  });

  it('is a lower bound close under a binomial tree, never under the European or the exercise value', () => {
    const rows: string[] = [];
    for (const isCall of [true, false]) {
      for (const spot of [80, 100, 120]) {
        for (const [years, rate, carry, vol] of [
          [0.25, 0.05, 0.05, 0.3],
          [1, 0.05, 0, 0.2],
          [0.5, 0.08, -0.04, 0.35],
          [2, 0.03, 0.01, 0.25],
        ] as const) {
          const american = americanValue(isCall, spot, 100, years, rate, carry, vol);
          const european = europeanValue(isCall, spot, 100, years, rate, carry, vol);
          const tree = binomialAmerican(isCall, spot, 100, years, rate, carry, vol);
          const exercise = Math.max(0, isCall ? spot - 100 : 100 - spot);
          const ok =
            american >= european &&
            american >= exercise - 1e-12 &&
            american <= tree + 0.01 &&
            american >= tree - 0.01 * Math.max(1, tree);
          if (!ok)
            rows.push(`${isCall ? 'call' : 'put'} ${spot} ${years} ${rate} ${carry}: ${american} vs ${tree}`);
        }
      }
    }
    expect(rows).toEqual([]);
  });

  it('prices early exercise of a deep in-the-money put when the rate is positive', () => {
    const terms: OptionTerms = { side: 'put', spot: 70, strike: 100, years: 1, rate: 0.05 };
    const american = optionValuation(terms, 0.2, 'american');
    const european = optionValuation(terms, 0.2, 'european');
    // The European put is worth less than its exercise value (K·e^{−rT} − S < K − S); the American one
    // is exercised at once: worth K − S, delta −1, no gamma, no decay, no vega.
    expect(european.price).toBeLessThan(30);
    expect(american.price).toBeGreaterThan(european.price);
    expect(american.price).toBeGreaterThanOrEqual(30);
    expect([american.price, american.delta, american.gamma, american.theta, american.vega]).toEqual([
      30,
      expect.closeTo(-1, 9),
      expect.closeTo(0, 9),
      expect.closeTo(0, 9),
      expect.closeTo(0, 9),
    ]);
    // Nearer the money the premium is smaller but there, and its Greeks are the value's derivatives.
    const near = optionValuation({ ...terms, spot: 95 }, 0.2, 'american');
    const at = (spot: number) => americanValue(false, spot, 100, 1, 0.05, 0.05, 0.2);
    expect(near.price - optionValuation({ ...terms, spot: 95 }, 0.2).price).toBeGreaterThan(0.1);
    expect(near.delta).toBeCloseTo((at(95.01) - at(94.99)) / 0.02, 4);
    expect(near.delta).toBeLessThan(optionValuation({ ...terms, spot: 95 }, 0.2).delta + 1e-12);
    expect(near.theta).toBeLessThan(0);
    expect(near.vega).toBeGreaterThan(0);
  });

  it('equals the European value where early exercise cannot pay, and the put is the transformed call', () => {
    for (const [spot, years, vol] of [
      [90, 0.3, 0.25],
      [120, 2, 0.4],
    ] as const) {
      // a call without a dividend yield (b = r), a put without a rate
      expect(americanValue(true, spot, 100, years, 0.05, 0.05, vol)).toBe(
        europeanValue(true, spot, 100, years, 0.05, 0.05, vol),
      );
      expect(americanValue(false, spot, 100, years, 0, 0.02, vol)).toBe(
        europeanValue(false, spot, 100, years, 0, 0.02, vol),
      );
      expect(americanValue(false, spot, 100, years, 0.06, 0.01, vol)).toBe(
        Math.max(
          bjerksundStenslandCall(100, spot, years, 0.05, -0.01, vol),
          europeanValue(false, spot, 100, years, 0.06, 0.01, vol),
        ),
      );
    }
  });

  it('bounds the early-exercise premium from above, cheaply', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.double({ min: 50, max: 200, noNaN: true }),
        fc.double({ min: 0.01, max: 3, noNaN: true }),
        fc.double({ min: 0, max: 0.1, noNaN: true }),
        fc.double({ min: -0.08, max: 0.08, noNaN: true }),
        fc.double({ min: 0.05, max: 1.2, noNaN: true }),
        (isCall, strike, years, rate, carry, vol) => {
          const premium =
            americanValue(isCall, 100, strike, years, rate, carry, vol) -
            europeanValue(isCall, 100, strike, years, rate, carry, vol);
          return premium <= earlyExercisePremiumBound(isCall, 100, strike, years, rate, carry, vol) + 1e-9;
        },
      ),
      { seed: 3, numRuns: 2000 },
    );
  });

  it('recovers the volatility from an American price, and has none at or below the exercise value', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.double({ min: 40, max: 200, noNaN: true }),
        fc.double({ min: 0.005, max: 3, noNaN: true }),
        fc.double({ min: 0, max: 0.08, noNaN: true }),
        fc.double({ min: 0, max: 0.05, noNaN: true }),
        fc.double({ min: 0.04, max: 1.5, noNaN: true }),
        (isCall, strike, years, rate, dividendYield, vol) => {
          const price = americanValue(isCall, 100, strike, years, rate, rate - dividendYield, vol);
          const implied = americanImpliedVolatility(
            isCall,
            100,
            strike,
            years,
            rate,
            rate - dividendYield,
            price,
          );
          const bumped = americanValue(isCall, 100, strike, years, rate, rate - dividendYield, vol * 1.001);
          // no volatility where the price is (to rounding) the exercise value or does not move with it
          if (Number.isNaN(implied))
            return bumped - price < 1e-6 || price - Math.max(0, isCall ? 100 - strike : strike - 100) < 1e-9;
          return Math.abs(implied - vol) < 1e-6 || bumped - price < 1e-6;
        },
      ),
      { seed: 5, numRuns: 300 },
    );
    const put: OptionTerms = { side: 'put', spot: 80, strike: 100, years: 0.5, rate: 0.05 };
    expect(
      [20, 19.99, 100, -1, Number.NaN, Number.POSITIVE_INFINITY].map((price) =>
        impliedVolatility(put, price, 'american'),
      ),
    ).toEqual([null, null, null, null, null, null]);
    expect(impliedVolatility({ ...put, years: Number.NaN }, 21, 'american')).toBeNull();
    expect(impliedVolatility(put, 21, 'american')).toBeGreaterThan(0);
  });
});
