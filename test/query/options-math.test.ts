import { describe, expect, it } from 'vitest';
import { midOf, roundCents } from '../../src/query/options/records.js';
import { matchesExpression, parseNumberExpression } from '../../src/query/params.js';
import { withData } from '../helpers/shared-data.js';
import { example } from './helpers/shape.js';

/** The documented example bodies these tests compare with. */
const docs = withData(['spec/examples/options_chain.json']);

describe('midOf', () => {
  docs.it('matches the documented chain except on exact half cents, which semantics §3.1 rounds up', () => {
    // The documented example rounds exact half cents through binary floating point, some down
    // (0.18/0.19 → 0.18), some up (108.6/112.15 → 110.38); semantics §3.1, which wins over the
    // reference, rounds every one up. Every other mid agrees.
    const chain = example('options_chain.json') as Record<string, number[]>;
    const bids = chain['bid']!;
    const asks = chain['ask']!;
    const cents = (i: number) => Math.round(bids[i]! * 100) + Math.round(asks[i]! * 100);
    const halfCent = (i: number) => cents(i) % 2 === 1;
    const computed = bids.map((bid, i) => midOf(bid, asks[i]!));
    const expected = chain['mid']!.map((mid, i) => (halfCent(i) ? (cents(i) + 1) / 200 : mid));
    expect(computed).toEqual(expected);
    expect(bids.filter((_, i) => halfCent(i)).length).toBeGreaterThan(0);
  });

  it('rounds half-up on the exact decimal, never through binary floating point (semantics §3.1)', () => {
    // 110.375 and 0.185 are not exact in binary: (110.25 + 110.5) / 2 is, but 0.185 rounds down as a double.
    expect(midOf(110.25, 110.5)).toBe(110.38);
    expect(midOf(0.18, 0.19)).toBe(0.19);
    expect(midOf(7.62, 7.63)).toBe(7.63);
    expect(midOf(1.0, 1.01)).toBe(1.01);
    expect(midOf(0, 0)).toBe(0);
    expect(midOf(0, 0.01)).toBe(0.01);
    expect(midOf(2.675, 2.675)).toBe(2.68);
  });
});

describe('roundCents', () => {
  it('rounds the binary value to the nearest cent, exact half cents to the even cent', () => {
    const cases = [7.625, 80.125, 0.375, 0.585, 0.025, 2.675, 1.005, -0.125, 0.045, 1.125, 0.004, -0.001];
    expect(cases.map(roundCents)).toEqual([7.62, 80.12, 0.38, 0.58, 0.03, 2.67, 1, -0.12, 0.04, 1.12, 0, 0]);
    expect(Object.is(roundCents(-0.001), 0)).toBe(true);
  });

  it('gives what the exact decimal value gives (toFixed) for every price to 1/10,000, their differences and the doubles beside half cents', () => {
    // The rule as `toFixed` states it, exact halves to the even cent: the fast path must agree everywhere.
    const reference = (value: number) => {
      const eighths = value * 8;
      if (Number.isInteger(eighths) && Math.abs(eighths) % 2 === 1) {
        const floor = Math.floor(value * 100);
        return (floor % 2 === 0 ? floor : floor + 1) / 100 || 0;
      }
      return Number(value.toFixed(2)) || 0;
    };
    let seed = 12_345;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const differing: number[] = [];
    for (let i = 0; i < 200_000; i++) {
      // Store prices (to 1/10,000) up to 5,000, and intrinsic or extrinsic values made of two of them.
      const a = Math.round(random() * 50_000_000) / 10_000;
      const b = Math.round(random() * 50_000_000) / 10_000;
      for (const value of [a, a - b, Math.abs(a - b) / 3, a * 1.0001]) {
        if (!Object.is(roundCents(value), reference(value))) differing.push(value);
      }
    }
    // Every half cent to 10 dollars, the doubles near it, and the nearest doubles on either side of it
    // (one unit in the last place: only the exact binary value tells them apart).
    const bits = new Float64Array(1);
    const word = new BigInt64Array(bits.buffer);
    const stepped = (value: number, units: bigint) => {
      bits[0] = value;
      word[0] = word[0]! + units;
      return bits[0]!;
    };
    for (let k = 0; k < 2_000; k++) {
      const half = (2 * k + 1) / 200;
      const beside = [half - 1e-12, half + 1e-12, stepped(half, -1n), stepped(half, 1n), stepped(half, 2n)];
      for (const value of [half, -half, ...beside, ...beside.map((v) => -v)]) {
        if (!Object.is(roundCents(value), reference(value))) differing.push(value);
      }
    }
    // Half cents of large prices, where a unit in the last place is some 1e-9 of a cent.
    for (let i = 0; i < 20_000; i++) {
      const half = (2 * Math.floor(random() * 2e8) + 1) / 200;
      for (const value of [half, stepped(half, -1n), stepped(half, 1n)]) {
        if (!Object.is(roundCents(value), reference(value))) differing.push(value);
      }
    }
    expect(differing).toEqual([]);
  });
});

describe('strike and delta expressions', () => {
  it('reads values, lists, operators and inclusive ranges', () => {
    expect(parseNumberExpression('400,405')).toEqual([
      { kind: 'exact', value: 400 },
      { kind: 'exact', value: 405 },
    ]);
    expect(parseNumberExpression('>=.3, <0.6')).toEqual([
      { kind: 'interval', min: { value: 0.3, inclusive: true }, max: null },
      { kind: 'interval', min: null, max: { value: 0.6, inclusive: false } },
    ]);
    expect(parseNumberExpression('400-410')).toEqual([
      { kind: 'interval', min: { value: 400, inclusive: true }, max: { value: 410, inclusive: true } },
    ]);
    expect(parseNumberExpression('-.30', { absolute: true })).toEqual([{ kind: 'exact', value: 0.3 }]);
    for (const bad of ['', '-400', '410-400', '>', '400,', 'abc', '=400', '4 00']) {
      expect([bad, parseNumberExpression(bad)]).toEqual([bad, undefined]);
    }
  });

  it('matches bounds as written, exact values within a float tolerance', () => {
    const match = (text: string, value: number) => matchesExpression(parseNumberExpression(text)!, value);
    expect([match('>400', 400), match('>=400', 400), match('<400', 400), match('<=400', 400)]).toEqual([
      false,
      true,
      false,
      true,
    ]);
    expect([match('400-410', 410), match('400-410', 410.5), match('32.5', 0.1 * 325)]).toEqual([
      true,
      false,
      true,
    ]);
  });
});
