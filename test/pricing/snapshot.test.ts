import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import type { OptionSide } from '../../src/occ/index.js';
import {
  americanValue,
  computeSnapshotGreeks,
  contractGreeks,
  europeanValue,
  type SnapshotContracts,
} from '../../src/pricing/index.js';

type Quote = {
  strike: number;
  side: OptionSide;
  years: number;
  bid: number | null;
  ask: number | null;
  key: string;
};

const columns = (quotes: readonly Quote[]): SnapshotContracts => ({
  strike: quotes.map((q) => q.strike),
  side: quotes.map((q) => q.side),
  years: quotes.map((q) => q.years),
  bid: quotes.map((q) => q.bid),
  ask: quotes.map((q) => q.ask),
  expirationKey: quotes.map((q) => q.key),
});

/** A smile: 20 % at the money, steeper on the downside. */
const smile = (strike: number, forward: number) => {
  const m = Math.log(strike / forward);
  return 0.2 - 0.3 * m + 0.8 * m * m;
};

/** Calls and puts on a strike grid for each expiration, quoted `spread` (a fraction) either side of the value. */
function chain(options: {
  spot: number;
  rate: number;
  dividendYield: number;
  days: readonly number[];
  american?: boolean;
  spread?: number;
}): { quotes: Quote[]; vols: number[]; forwards: Map<string, number> } {
  const { spot, rate, dividendYield } = options;
  const quotes: Quote[] = [];
  const vols: number[] = [];
  const forwards = new Map<string, number>();
  for (const days of options.days) {
    const years = days / 365;
    const forward = spot * Math.exp((rate - dividendYield) * years);
    const key = `E${days}`;
    forwards.set(key, forward);
    for (let strike = spot * 0.8; strike <= spot * 1.2; strike += spot / 100) {
      for (const side of ['call', 'put'] as const) {
        const vol = smile(strike, forward);
        const value = (options.american ? americanValue : europeanValue)(
          side === 'call',
          spot,
          strike,
          years,
          rate,
          rate - dividendYield,
          vol,
        );
        const half = value * (options.spread ?? 0);
        quotes.push({ strike, side, years, bid: value - half, ask: value + half, key });
        vols.push(vol);
      }
    }
  }
  return { quotes, vols, forwards };
}

describe('computeSnapshotGreeks', () => {
  it('implies each expiration’s forward from put–call parity at the strike where C and P are closest', () => {
    const { quotes, forwards } = chain({ spot: 4000, rate: 0.03, dividendYield: 0.015, days: [9, 30, 180] });
    const stated = computeSnapshotGreeks({
      spot: 4000,
      style: 'european',
      rate: 0.03,
      contracts: columns(quotes),
    });
    for (const [key, forward] of forwards) {
      const found = stated.forwards.get(key)!;
      expect(found).toMatchObject({ source: 'parity', rate: 0.03, forward: expect.closeTo(forward, 8) });
      expect(Math.abs(found.strike! - forward)).toBeLessThanOrEqual(20);
    }
    // Without a rate the same strike's C − P is read undiscounted: off by (1 − e^{−rT})(F − K), cents here.
    const unstated = computeSnapshotGreeks({ spot: 4000, style: 'european', contracts: columns(quotes) });
    for (const [key, forward] of forwards) {
      const found = unstated.forwards.get(key)!;
      expect(Math.abs(found.forward - forward)).toBeLessThanOrEqual(
        Math.abs(forward - found.strike!) * -Math.expm1(-0.03 * found.years) + 1e-9,
      );
    }
  });

  it('recovers every volatility of a European chain told its rate, and near ones told none', () => {
    const { quotes, vols } = chain({
      spot: 4000,
      rate: 0.03,
      dividendYield: 0.015,
      days: [9, 30, 180],
      spread: 0.5,
    });
    const input = {
      spot: 4000,
      style: 'european' as const,
      contracts: columns(quotes),
      rounding: 'none' as const,
    };
    const stated = computeSnapshotGreeks({ ...input, rate: 0.03 });
    // to 1e-9, or 1e-5 deep in the money, where the time value left to solve is a few cents of thousands
    expect(stated.iv).toEqual(vols.map((vol, i) => expect.closeTo(vol, quotes[i]!.bid! > 200 ? 5 : 9)));
    // The bid's IV is below the mid's, the ask's above; a bid under the discounted intrinsic has none.
    const intrinsic = (q: Quote) => {
      const forward = stated.forwards.get(q.key)!.forward;
      return (
        Math.exp(-0.03 * q.years) * Math.max(0, q.side === 'call' ? forward - q.strike : q.strike - forward)
      );
    };
    expect(
      quotes.filter((q, i) =>
        stated.ivBid[i] === null ? q.bid! > intrinsic(q) : !(stated.ivBid[i]! < vols[i]!),
      ),
    ).toEqual([]);
    expect(stated.ivAsk.every((iv, i) => iv !== null && iv > vols[i]!)).toBe(true);
    // Told nothing (r = 0), the forward still comes out right but the discounting is missed: out of the
    // money the IVs come out low by up to r·T of themselves (1.5 % at six months and 3 %); in the money
    // more, as the parity strike's (1 − e^{−rT})·(K₀ − K) comes off their time value.
    const unstated = computeSnapshotGreeks(input);
    const otm = (q: Quote) => (q.side === 'call' ? q.strike > 4000 : q.strike < 4000);
    const near = quotes.flatMap((q, i) => (otm(q) && Math.abs(q.strike / 4000 - 1) < 0.1 ? [i] : []));
    expect(
      near.filter((i) => {
        const shortfall = (vols[i]! - unstated.iv[i]!) / vols[i]!;
        return !(shortfall > 0 && shortfall < 1.2 * 0.03 * quotes[i]!.years);
      }),
    ).toEqual([]);
    const rounded = computeSnapshotGreeks({ ...input, rate: 0.03, rounding: 'service' });
    for (const column of [
      rounded.iv,
      rounded.ivBid,
      rounded.delta,
      rounded.gamma,
      rounded.theta,
      rounded.vega,
    ]) {
      expect(column.every((x) => x === null || Math.round(x * 1000) / 1000 === x)).toBe(true);
    }
    expect(rounded.iv).toEqual(stated.iv.map((iv) => Math.round(iv! * 1000) / 1000));
  });

  it('recovers every volatility of an American chain priced with a stated rate and dividend yield', () => {
    const { quotes, vols, forwards } = chain({
      spot: 450,
      rate: 0.05,
      dividendYield: 0.013,
      days: [12, 60, 365],
      american: true,
      spread: 0.01,
    });
    const input = {
      spot: 450,
      rate: 0.05,
      dividendYield: 0.013,
      contracts: columns(quotes),
      rounding: 'none' as const,
    };
    const result = computeSnapshotGreeks({ ...input, style: 'american' });
    // A put worth its exercise value (exercised at once) has no volatility: any low one gives that value.
    const exercised = quotes.map((q, i) => {
      const exercise = Math.max(0, q.side === 'call' ? 450 - q.strike : q.strike - 450);
      return (q.bid! + q.ask!) / 2 - exercise < 1e-9 || !(vols[i]! > 0);
    });
    const missed = result.iv.flatMap((iv, i) =>
      exercised[i]
        ? iv === null
          ? []
          : [`exercised ${quotes[i]!.strike} ${iv}`]
        : iv !== null && Math.abs(iv - vols[i]!) < 1e-6
          ? []
          : [`${quotes[i]!.side} ${quotes[i]!.strike} ${iv}`],
    );
    expect(missed).toEqual([]);
    expect(exercised.filter(Boolean).length).toBeGreaterThan(0);
    for (const [key, forward] of forwards) {
      expect(result.forwards.get(key)).toMatchObject({
        source: 'carry',
        forward: expect.closeTo(forward, 9),
      });
    }
    // The European model reads the early-exercise premium of in-the-money puts as volatility.
    const european = computeSnapshotGreeks({ ...input, style: 'european' });
    const itm = quotes.flatMap((q, i) => (q.side === 'put' && q.strike > 480 && !exercised[i] ? [i] : []));
    expect(itm.length).toBeGreaterThan(5);
    expect(itm.every((i) => european.iv[i] === null || european.iv[i]! > result.iv[i]! + 1e-3)).toBe(true);
  });

  it('nulls what cannot be had: no bid, a crossed quote, a mid below intrinsic, bad inputs', () => {
    const base = { strike: 100, side: 'call' as const, years: 0.25, bid: 4, ask: 4.2, key: 'E' };
    const quotes: Quote[] = [
      base,
      { ...base, bid: 0 },
      { ...base, bid: null },
      { ...base, bid: 4.3 },
      { ...base, strike: 90, bid: 9.5, ask: 10.2 },
      { ...base, bid: -1 },
      { ...base, ask: Number.NaN },
      { ...base, ask: Number.POSITIVE_INFINITY },
      { ...base, strike: Number.NaN },
      { ...base, strike: 0 },
      { ...base, years: 0 },
      { ...base, years: -0.1 },
      { ...base, years: Number.POSITIVE_INFINITY },
      { ...base, side: 'straddle' as OptionSide },
    ];
    const result = computeSnapshotGreeks({ spot: 100, style: 'european', contracts: columns(quotes) });
    const row = (i: number) => [result.iv[i], result.ivBid[i], result.ivAsk[i], result.delta[i]];
    expect(quotes.map((_, i) => row(i).map((x) => (x === null ? null : 'x')))).toEqual([
      ['x', 'x', 'x', 'x'],
      [null, null, 'x', null], // bid 0: no mid, no bid IV, the ask still has one
      [null, null, 'x', null],
      [null, null, null, null], // crossed
      [null, null, 'x', null], // mid 9.85 and bid under the intrinsic 10; the ask is not
      [null, null, null, null], // a negative bid: the quote is broken
      [null, 'x', null, null], // no ask (NaN, infinite): the bid alone
      [null, 'x', null, null],
      [null, null, null, null],
      [null, null, null, null],
      [null, null, null, null],
      [null, null, null, null],
      [null, null, null, null],
      [null, null, null, null],
    ]);
    expect(result.forwards.get('E')).toEqual({
      forward: 100,
      years: 0.25,
      rate: 0,
      source: 'carry',
      strike: null,
    });
    const noSpot = computeSnapshotGreeks({ spot: Number.NaN, style: 'american', contracts: columns([base]) });
    expect([noSpot.iv, noSpot.delta, noSpot.forwards.size]).toEqual([[null], [null], 0]);
  });

  it('never throws and never makes up a number, whatever the quotes', () => {
    const number = fc.oneof(
      fc.double(),
      fc.constantFrom(0, -0, 1e-300, 1e300, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
    );
    const quote = fc.record({
      strike: number,
      side: fc.constantFrom<OptionSide>('call', 'put'),
      years: number,
      bid: fc.option(number),
      ask: fc.option(number),
      key: fc.constantFrom('a', 'b'),
    });
    fc.assert(
      fc.property(
        fc.array(quote, { maxLength: 12 }),
        number,
        fc.constantFrom('european', 'american'),
        (quotes, spot, style) => {
          const result = computeSnapshotGreeks({
            spot,
            style: style as 'european' | 'american',
            contracts: columns(quotes),
          });
          return [
            result.iv,
            result.ivBid,
            result.ivAsk,
            result.delta,
            result.gamma,
            result.theta,
            result.vega,
          ].every(
            (column) =>
              column.length === quotes.length && column.every((x) => x === null || Number.isFinite(x)),
          );
        },
      ),
      { seed: 17, numRuns: 300 },
    );
  });

  it('reads a dated rate series at the quote instant, and refuses one without it', () => {
    const { quotes } = chain({ spot: 100, rate: 0.04, dividendYield: 0, days: [30] });
    const seen: number[] = [];
    const series = (at: number) => {
      seen.push(at);
      return at < 1_700_000_000 ? 0.01 : 0.04;
    };
    const dated = computeSnapshotGreeks({
      spot: 100,
      style: 'european',
      rate: series,
      quoteTime: 1_700_000_100,
      contracts: columns(quotes),
    });
    expect(seen).toEqual([1_700_000_100]);
    expect(dated.forwards.get('E30')!.rate).toBe(0.04);
    expect(() =>
      computeSnapshotGreeks({ spot: 100, style: 'european', rate: series, contracts: columns(quotes) }),
    ).toThrow(InvalidInputError);
    const broken = computeSnapshotGreeks({
      spot: 100,
      style: 'european',
      rate: Number.NaN,
      contracts: columns(quotes),
    });
    expect(broken.iv.every((x) => x === null)).toBe(true);
  });
});

describe('contractGreeks', () => {
  it('gives one contract what the snapshot gives it, on the forward the snapshot found', () => {
    const { quotes } = chain({ spot: 450, rate: 0.05, dividendYield: 0.013, days: [40], spread: 0.02 });
    for (const style of ['european', 'american'] as const) {
      const snapshot = computeSnapshotGreeks({ spot: 450, style, rate: 0.05, contracts: columns(quotes) });
      const forward = snapshot.forwards.get('E40')!.forward;
      const index = quotes.findIndex((q) => q.side === 'put' && q.strike > 470);
      const q = quotes[index]!;
      const single = contractGreeks({
        side: q.side,
        spot: 450,
        strike: q.strike,
        years: q.years,
        bid: q.bid,
        ask: q.ask,
        style,
        rate: 0.05,
        forward,
      });
      expect(single).toEqual({
        iv: snapshot.iv[index],
        ivBid: snapshot.ivBid[index],
        ivAsk: snapshot.ivAsk[index],
        delta: snapshot.delta[index],
        gamma: snapshot.gamma[index],
        theta: snapshot.theta[index],
        vega: snapshot.vega[index],
      });
    }
    const nothing = { iv: null, ivBid: null, ivAsk: null, delta: null, gamma: null, theta: null, vega: null };
    const base = {
      side: 'call' as const,
      spot: 100,
      strike: 100,
      years: 0.1,
      bid: 1,
      ask: 1.2,
      style: 'american' as const,
    };
    expect(contractGreeks({ ...base, forward: -1 })).toEqual(nothing);
    expect(contractGreeks({ ...base, years: 0 })).toEqual(nothing);
    expect(contractGreeks({ ...base, dividendYield: Number.NaN })).toEqual(nothing);
    expect(contractGreeks(base).iv).toBeCloseTo(0.087, 3);
  });
});
