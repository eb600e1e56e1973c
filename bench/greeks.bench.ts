/**
 * Computed Greeks benchmark (`npm run bench -- greeks`): `computeSnapshotGreeks` on a whole SPY-sized chain
 * (about 6,000 contracts: weeklies to two-year LEAPS, quoted in cents around an American model value),
 * against the solver the answers used before pricing/ — bisection of Black–Scholes on the spot, one
 * contract at a time — measured on the same chain in the same run. Target: ≤ 5 ms for the chain.
 *
 * Rows: the default path (rate unstated, so r = 0; in a carry like 2023's, F > S, early exercise is then
 * worth nothing and the American model reduces to the European one), the same without bid and ask IVs
 * (the service prints neither), the European model (the index roots' path), and two chains where early
 * exercise has value and Bjerksund–Stensland is evaluated: a stated 5 % rate, and a 2018-like carry
 * (dividend yield above the rate) read at r = 0, where calls carry the early exercise.
 */
import type { OptionSide } from '../src/occ/index.js';
import {
  americanValue,
  blackScholes,
  computeSnapshotGreeks,
  type OptionTerms,
  type SnapshotContracts,
  type SnapshotGreeksInput,
} from '../src/pricing/index.js';
import { type BenchRow, defineBenchmark, ratioRow, timeIt } from './lib.js';

const SPOT = 450;
const EXPIRATION_DAYS = [
  1, 2, 3, 4, 7, 8, 9, 10, 11, 14, 16, 18, 21, 28, 35, 42, 49, 56, 63, 91, 119, 147, 182, 210, 273, 364, 455,
  546, 637, 728,
];

/** The SPY-like chain: strikes a dollar apart near the money, wider further out and further in time. */
function spyChain(rate: number, dividendYield: number): SnapshotContracts {
  const strike: number[] = [];
  const side: OptionSide[] = [];
  const years: number[] = [];
  const bid: (number | null)[] = [];
  const ask: (number | null)[] = [];
  const expirationKey: number[] = [];
  for (const days of EXPIRATION_DAYS) {
    const t = days / 365;
    const width = SPOT * Math.min(0.6, 0.072 + 0.26 * Math.sqrt(t));
    const step = days <= 63 ? 1 : days <= 210 ? 2.5 : 5;
    for (let k = Math.ceil((SPOT - width) / step) * step; k <= SPOT + width; k += step) {
      for (const s of ['call', 'put'] as const) {
        const m = Math.log(k / SPOT);
        const vol = 0.16 - 0.22 * m + 0.5 * m * m;
        const value = americanValue(s === 'call', SPOT, k, t, rate, rate - dividendYield, vol);
        const half = Math.min(0.5, Math.max(0.005, 0.01 * value));
        strike.push(k);
        side.push(s);
        years.push(t);
        bid.push(Math.max(0, Math.floor((value - half) * 100) / 100));
        ask.push(Math.ceil((value + half) * 100) / 100);
        expirationKey.push(days);
      }
    }
  }
  return { strike, side, years, bid, ask, expirationKey };
}

/** The former solver: bisection in [1e-4, 20] to 1e-12, each price of each contract, Greeks at the mid's. */
function bisectionBaseline(contracts: SnapshotContracts): number {
  let solved = 0;
  const solve = (terms: OptionTerms, price: number) => {
    const discounted = terms.strike * Math.exp(-terms.rate * terms.years);
    const lower =
      terms.side === 'call' ? Math.max(0, terms.spot - discounted) : Math.max(0, discounted - terms.spot);
    if (!(price > lower && price < (terms.side === 'call' ? terms.spot : discounted))) return null;
    let low = 1e-4;
    let high = 20;
    if (blackScholes(terms, low).price > price || blackScholes(terms, high).price < price) return null;
    for (let i = 0; i < 100 && high - low > 1e-12; i++) {
      const mid = 0.5 * (low + high);
      if (blackScholes(terms, mid).price < price) low = mid;
      else high = mid;
    }
    return 0.5 * (low + high);
  };
  for (let i = 0; i < contracts.strike.length; i++) {
    const terms: OptionTerms = {
      side: contracts.side[i]!,
      spot: SPOT,
      strike: contracts.strike[i]!,
      years: contracts.years[i]!,
      rate: 0,
    };
    const bid = contracts.bid[i]!;
    const ask = contracts.ask[i]!;
    const vol = solve(terms, 0.5 * (bid + ask));
    if (bid > 0) solve(terms, bid);
    solve(terms, ask);
    if (vol !== null) {
      blackScholes(terms, vol);
      solved++;
    }
  }
  return solved;
}

export default defineBenchmark({
  name: 'greeks',
  description: 'computed IV and Greeks of a whole SPY-sized chain (≈6,000 contracts) vs the former bisection',
  async run(ctx) {
    const rows: BenchRow[] = [];
    const chain2023 = spyChain(0.05, 0.013);
    const chain2018 = spyChain(0.015, 0.019);
    const n = chain2023.strike.length;
    ctx.log(`chain: ${n} contracts over ${EXPIRATION_DAYS.length} expirations`);

    const baseline = await timeIt(() => bisectionBaseline(chain2023), { warmup: 1, iterations: 3 });
    const baseline2018 = await timeIt(() => bisectionBaseline(chain2018), { warmup: 1, iterations: 3 });
    ctx.log(
      `bisection baseline: ${baseline.p50Ms.toFixed(1)} ms (2018-like chain ${baseline2018.p50Ms.toFixed(1)} ms)`,
    );

    const cases: {
      name: string;
      input: SnapshotGreeksInput;
      base: number;
      slow?: boolean;
    }[] = [
      {
        name: 'SPY chain, American, rate unstated (r = 0)',
        input: { spot: SPOT, style: 'american', contracts: chain2023 },
        base: baseline.p50Ms,
      },
      {
        name: 'SPY chain, American, r = 0, mid IV only',
        input: { spot: SPOT, style: 'american', contracts: chain2023, bidAskIv: false },
        base: baseline.p50Ms,
      },
      {
        name: 'SPY chain, European model',
        input: { spot: SPOT, style: 'european', contracts: chain2023 },
        base: baseline.p50Ms,
      },
      {
        name: 'SPY chain, American, r = 5 % stated',
        input: { spot: SPOT, style: 'american', contracts: chain2023, rate: 0.05 },
        base: baseline.p50Ms,
        slow: true,
      },
      {
        name: 'SPY chain, 2018-like carry, r = 0',
        input: { spot: SPOT, style: 'american', contracts: chain2018 },
        base: baseline2018.p50Ms,
        slow: true,
      },
    ];
    for (const { name, input, base, slow } of cases) {
      const result = computeSnapshotGreeks(input);
      const withIv = result.iv.filter((iv) => iv !== null).length;
      const timing = await timeIt(
        () => computeSnapshotGreeks(input),
        slow ? { warmup: 1, iterations: 3 } : { warmup: 15, iterations: 30 },
      );
      ctx.log(`${name}: p50 ${timing.p50Ms.toFixed(2)} ms, min ${timing.minMs.toFixed(2)} ms`);
      rows.push(
        ratioRow({
          name,
          ours: timing.p50Ms,
          baseline: base,
          unit: 'ms',
          target: '≤ 5 ms',
          note: `${n} contracts, ${withIv} with an IV; min ${timing.minMs.toFixed(2)} ms, ${((1000 * timing.p50Ms) / n).toFixed(2)} µs each`,
        }),
      );
    }
    return rows;
  },
});
