/**
 * IV and Greeks of quotes at their quote instant q: a whole snapshot of one underlying at once
 * ({@link computeSnapshotGreeks}, columnar, the forward of each expiration implied from put–call parity
 * across its strikes), or one contract ({@link contractGreeks}). The caller supplies the spot and the
 * years from q to each expiration; nothing here reads a clock or a store.
 */
import { InvalidInputError } from '../errors.js';
import type { ExerciseStyle } from '../market-time/index.js';
import type { OptionSide } from '../occ/index.js';
import { americanValuation, earlyExerciseCanPay } from './american.js';
import { type MutableValuation, type OptionTerms, valuationOnForward } from './european.js';
import {
  americanImpliedVolatility,
  emptyNormalizedTerms,
  impliedFromNormalized,
  impliedNearLast,
  normalizeTerms,
  type PremiumMemo,
} from './implied-volatility.js';
import { impliedVolatility, optionValuation } from './models.js';

/**
 * A continuous rate or yield (0.05 = 5 %): a constant, or a dated series as a function of the quote
 * instant q (epoch seconds) returning the value known at q.
 */
export type RateInput = number | ((quoteTimeSeconds: number) => number);

/**
 * The rate when none is given: 0. Measured on the real SPXW chain (bench/greeks-accuracy.bench.ts, 7–60
 * days): with each expiration's forward implied from parity, the rate only discounts, and r = 0 and a
 * constant 1.4 % (the bill rate of those sessions) give the same median IV difference against the vendor
 * (1.63 and 1.64 vol points over the quotes both solve). The rate implied by the chain itself, a box-spread
 * regression of C − P on K per expiration (slope −e^{−rT}), comes out anywhere from −5.6 % to +10.7 % over
 * the 30 snapshots 7 or more days out (median 1.9 %): noise, which the American model would price as
 * early exercise. What r = 0 gives up, and a stated rate (a constant or a dated series) restores: the
 * discounting of long-dated options, whose IVs come out low by about r·T of themselves (1.5 % at six
 * months and 3 %); in-the-money time value, short by (1 − e^{−rT}) times the strike's distance from the
 * parity strike, so that deep quotes at parity give no IV; and the early exercise of American puts, which
 * needs r > 0.
 */
export const DEFAULT_RATE = 0;

/** The service's columns of a snapshot, one entry per contract; `bid`/`ask` null for a missing side. */
export type SnapshotContracts = {
  readonly strike: ArrayLike<number>;
  readonly side: ArrayLike<OptionSide>;
  /** Years from the quote instant q to the contract's expiration instant. */
  readonly years: ArrayLike<number>;
  readonly bid: ArrayLike<number | null>;
  readonly ask: ArrayLike<number | null>;
  /** Any value naming the expiration (its date, its instant): contracts sharing it share a forward. */
  readonly expirationKey: ArrayLike<string | number>;
};

/** `service`: three decimals, as the service prints iv and the Greeks; `none`: full precision. */
export type GreekRounding = 'service' | 'none';

/** One snapshot of one underlying: its spot at q and its contracts, with optional rate and dividend yield. */
export type SnapshotGreeksInput = {
  readonly spot: number;
  readonly style: ExerciseStyle;
  readonly contracts: SnapshotContracts;
  /** Discounts (and, for American options, prices early exercise); {@link DEFAULT_RATE} when absent. */
  readonly rate?: RateInput;
  /** When given, fixes every forward at spot·e^{(r − q)T} instead of put–call parity. */
  readonly dividendYield?: RateInput;
  /** The quote instant q, needed only when a rate or yield is a dated series. */
  readonly quoteTime?: number;
  readonly rounding?: GreekRounding;
  /** Whether to solve the IVs of the bid and the ask too (default true; the service prints neither). */
  readonly bidAskIv?: boolean;
};

/** The forward an expiration was priced on, and where it came from. */
export type ExpirationForward = {
  readonly forward: number;
  readonly years: number;
  readonly rate: number;
  /**
   * `parity`: F = K + e^{rT}(C − P) at `strike`, the strike whose call and put mids are closest (the Cboe
   * VIX method); `carry`: the spot carried at the rate and dividend yield (a stated yield, or no strike
   * with both sides quoted, where the yield is taken as 0 unless stated).
   */
  readonly source: 'parity' | 'carry';
  readonly strike: number | null;
};

/** The columns of {@link computeSnapshotGreeks}, index for index with the input. */
export type SnapshotGreeks = {
  readonly iv: (number | null)[];
  readonly ivBid: (number | null)[];
  readonly ivAsk: (number | null)[];
  readonly delta: (number | null)[];
  readonly gamma: (number | null)[];
  readonly theta: (number | null)[];
  readonly vega: (number | null)[];
  readonly forwards: Map<string | number, ExpirationForward>;
};

/** One contract's quote at q: `forward` is its expiration's when known (e.g. a chain's parity forward). */
export type ContractQuote = {
  readonly side: OptionSide;
  readonly spot: number;
  readonly strike: number;
  readonly years: number;
  readonly bid: number | null;
  readonly ask: number | null;
  readonly style: ExerciseStyle;
  readonly rate?: RateInput;
  readonly dividendYield?: RateInput;
  readonly quoteTime?: number;
  readonly forward?: number;
  readonly rounding?: GreekRounding;
};

/** IV of the mid, the bid and the ask, and the Greeks at the mid's IV; null where they cannot be had. */
export type QuoteGreeks = {
  readonly iv: number | null;
  readonly ivBid: number | null;
  readonly ivAsk: number | null;
  readonly delta: number | null;
  readonly gamma: number | null;
  readonly theta: number | null;
  readonly vega: number | null;
};

/**
 * IV and Greeks of every contract of one snapshot. Contracts are grouped by `expirationKey`; each group's
 * forward comes from put–call parity at the strike where the call and put mids are closest (both sides
 * bid), or, without such a pair, is the spot carried at the rate and dividend yield (0 when not given).
 * IV is solved from the mid (bid > 0 and ask ≥ bid), the bid (bid > 0) and the ask (ask > 0); the Greeks
 * are taken at the mid's IV. A contract whose inputs are not finite and positive gets nulls.
 */
export function computeSnapshotGreeks(input: SnapshotGreeksInput): SnapshotGreeks {
  const { contracts } = input;
  const n = contracts.strike.length;
  for (const name of ['side', 'years', 'bid', 'ask', 'expirationKey'] as const) {
    if (contracts[name].length !== n) {
      throw new InvalidInputError(
        `computeSnapshotGreeks: ${name} has ${contracts[name].length} entries, strike ${n}`,
      );
    }
  }
  const columns = emptyColumns(n);
  const forwards = new Map<string | number, ExpirationForward>();
  const spot = input.spot;
  const rate = resolveRate(input.rate, input.quoteTime, DEFAULT_RATE);
  const dividendYield = resolveRate(input.dividendYield, input.quoteTime, Number.NaN);
  const statedYield = input.dividendYield !== undefined;
  if (!(spot > 0 && spot < Number.POSITIVE_INFINITY) || !Number.isFinite(rate)) {
    return { ...columns, forwards };
  }
  if (statedYield && !Number.isFinite(dividendYield)) return { ...columns, forwards };

  // Groups, and in each the call at every strike with a usable two-sided quote.
  const groupOf = new Int32Array(n);
  const keys: (string | number)[] = [];
  const groupIndex = new Map<string | number, number>();
  const calls: Map<number, number>[] = [];
  const usable = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const key = contracts.expirationKey[i]!;
    let g = groupIndex.get(key);
    if (g === undefined) {
      g = keys.length;
      groupIndex.set(key, g);
      keys.push(key);
      calls.push(new Map());
    }
    groupOf[i] = g;
    const strike = contracts.strike[i]!;
    const years = contracts.years[i]!;
    const bid = contracts.bid[i] ?? Number.NaN;
    const ask = contracts.ask[i] ?? Number.NaN;
    if (strike > 0 && strike < Number.POSITIVE_INFINITY && years > 0 && years < Number.POSITIVE_INFINITY) {
      if (bid > 0 && ask >= bid && ask < Number.POSITIVE_INFINITY) usable[i] = 1;
      // Strikes are exact to 1/1000 (OCC symbology): thousandths make small-integer keys, fast to hash.
      if (usable[i] === 1 && contracts.side[i] === 'call') calls[g]!.set(Math.round(strike * 1000), i);
    }
  }

  // Each group's forward: the parity pair with the closest mids (ties to the strike nearest the spot).
  const groups = keys.length;
  const bestGap = new Float64Array(groups).fill(Number.POSITIVE_INFINITY);
  const bestCall = new Int32Array(groups).fill(-1);
  const bestPut = new Int32Array(groups).fill(-1);
  if (!statedYield) {
    for (let i = 0; i < n; i++) {
      if (usable[i] !== 1 || contracts.side[i] !== 'put') continue;
      const g = groupOf[i]!;
      const strike = contracts.strike[i]!;
      const c = calls[g]!.get(Math.round(strike * 1000));
      if (c === undefined) continue;
      const gap = Math.abs(mid(contracts, c) - mid(contracts, i));
      const best = bestGap[g]!;
      const nearer =
        gap === best && Math.abs(strike - spot) < Math.abs(contracts.strike[bestCall[g]!]! - spot);
      if (gap < best || nearer) {
        bestGap[g] = gap;
        bestCall[g] = c;
        bestPut[g] = i;
      }
    }
  }
  const groupYears = new Float64Array(groups).fill(Number.NaN);
  for (let i = 0; i < n; i++) {
    const g = groupOf[i]!;
    const years = contracts.years[i]!;
    if (Number.isNaN(groupYears[g]!) && years > 0 && years < Number.POSITIVE_INFINITY) groupYears[g] = years;
  }
  const carry = new Float64Array(groups).fill(Number.NaN);
  const groupForward = new Float64Array(groups).fill(Number.NaN);
  for (let g = 0; g < groups; g++) {
    const c = bestCall[g]!;
    let forward = Number.NaN;
    let years = groupYears[g]!;
    let strike: number | null = null;
    if (c >= 0) {
      years = contracts.years[c]!;
      strike = contracts.strike[c]!;
      forward = strike + Math.exp(rate * years) * (mid(contracts, c) - mid(contracts, bestPut[g]!));
    }
    let source: ExpirationForward['source'] = 'parity';
    if (!(forward > 0 && forward < Number.POSITIVE_INFINITY)) {
      source = 'carry';
      strike = null;
      forward = spot * Math.exp((rate - (statedYield ? dividendYield : 0)) * years);
    }
    if (!(years > 0)) continue;
    carry[g] = Math.log(forward / spot) / years;
    groupYears[g] = years;
    groupForward[g] = forward;
    forwards.set(keys[g]!, { forward, years, rate, source, strike });
  }

  // Contracts, in input order: a chain in the service's order (by expiration, side, strike) hands each
  // solve its neighbours' volatilities, extended along the smile's slope between the last two.
  const rounding = input.rounding ?? 'service';
  const sides = input.bidAskIv ?? true;
  const groupDiscount = groupYears.map((years) => Math.exp(-rate * years));
  const lastVol = new Float64Array(2 * groups).fill(Number.NaN);
  const lastStrike = new Float64Array(2 * groups).fill(Number.NaN);
  const smileSlope = new Float64Array(2 * groups);
  const out: MutableValuation = { price: 0, delta: 0, gamma: 0, theta: 0, vega: 0 };
  const american = input.style === 'american';
  const result: QuoteResult = { iv: Number.NaN, ivBid: Number.NaN, ivAsk: Number.NaN };
  for (let i = 0; i < n; i++) {
    const g = groupOf[i]!;
    const side = contracts.side[i];
    if (side !== 'call' && side !== 'put') continue;
    const isCall = side === 'call';
    const slot = 2 * g + (isCall ? 0 : 1);
    const strike = contracts.strike[i]!;
    const years = contracts.years[i]!;
    // Contracts of one expiration share its forward and discount factor, computed once.
    const shared = years === groupYears[g];
    const forward = shared ? groupForward[g]! : spot * Math.exp(carry[g]! * years);
    const discount = shared ? groupDiscount[g]! : Math.exp(-rate * years);
    const guess = lastVol[slot]! + smileSlope[slot]! * (strike - lastStrike[slot]!);
    const ok = solveQuote(
      american,
      isCall,
      spot,
      strike,
      years,
      rate,
      carry[g]!,
      forward,
      discount,
      contracts.bid[i] ?? Number.NaN,
      contracts.ask[i] ?? Number.NaN,
      sides,
      guess > 0 ? guess : lastVol[slot]!,
      result,
      out,
    );
    columns.ivBid[i] = finite(result.ivBid, rounding);
    columns.ivAsk[i] = finite(result.ivAsk, rounding);
    if (!ok) continue;
    const slope = (result.iv - lastVol[slot]!) / (strike - lastStrike[slot]!);
    smileSlope[slot] = Number.isFinite(slope) ? slope : 0;
    lastVol[slot] = result.iv;
    lastStrike[slot] = strike;
    columns.iv[i] = finite(result.iv, rounding);
    columns.delta[i] = finite(out.delta, rounding);
    columns.gamma[i] = finite(out.gamma, rounding);
    columns.theta[i] = finite(out.theta, rounding);
    columns.vega[i] = finite(out.vega, rounding);
  }
  return { ...columns, forwards };
}

/**
 * IV and Greeks of one contract's quote, as {@link computeSnapshotGreeks} computes them in a snapshot; the
 * forward is `forward` when given (its expiration's parity forward from a chain; it wins over a dividend
 * yield), else the spot carried at the rate and dividend yield.
 */
export function contractGreeks(quote: ContractQuote): QuoteGreeks {
  const none = { iv: null, ivBid: null, ivAsk: null, delta: null, gamma: null, theta: null, vega: null };
  const { spot, strike, years } = quote;
  const rate = resolveRate(quote.rate, quote.quoteTime, DEFAULT_RATE);
  const dividendYield = resolveRate(quote.dividendYield, quote.quoteTime, 0);
  if (!(spot > 0 && spot < Number.POSITIVE_INFINITY && years > 0 && years < Number.POSITIVE_INFINITY))
    return none;
  if (!Number.isFinite(rate) || !Number.isFinite(dividendYield)) return none;
  if (quote.side !== 'call' && quote.side !== 'put') return none;
  let carry = rate - dividendYield;
  if (quote.forward !== undefined) {
    if (!(quote.forward > 0 && quote.forward < Number.POSITIVE_INFINITY)) return none;
    carry = Math.log(quote.forward / spot) / years;
  }
  const rounding = quote.rounding ?? 'service';
  const out: MutableValuation = { price: 0, delta: 0, gamma: 0, theta: 0, vega: 0 };
  const result: QuoteResult = { iv: Number.NaN, ivBid: Number.NaN, ivAsk: Number.NaN };
  const ok = solveQuote(
    quote.style === 'american',
    quote.side === 'call',
    spot,
    strike,
    years,
    rate,
    carry,
    spot * Math.exp(carry * years),
    Math.exp(-rate * years),
    quote.bid ?? Number.NaN,
    quote.ask ?? Number.NaN,
    true,
    Number.NaN,
    result,
    out,
  );
  return {
    iv: ok ? finite(result.iv, rounding) : null,
    ivBid: finite(result.ivBid, rounding),
    ivAsk: finite(result.ivAsk, rounding),
    delta: ok ? finite(out.delta, rounding) : null,
    gamma: ok ? finite(out.gamma, rounding) : null,
    theta: ok ? finite(out.theta, rounding) : null,
    vega: ok ? finite(out.vega, rounding) : null,
  };
}

/** The five columns the service prints for one contract. */
export type GreekColumns = {
  readonly iv: number | null;
  readonly delta: number | null;
  readonly gamma: number | null;
  readonly theta: number | null;
  readonly vega: number | null;
};

/** No figures: one object for every contract that has none (its fields are read, never written). */
const NO_GREEKS: GreekColumns = Object.freeze({
  iv: null,
  delta: null,
  gamma: null,
  theta: null,
  vega: null,
});

/**
 * The service's five columns for a European option priced on the spot carried at the terms' rate and
 * dividend yield: `iv` given (a vendor's) or implied from `price`, then the Greeks at that volatility,
 * rounded as the service prints them; all null when either cannot be had.
 */
export function greekColumns(terms: OptionTerms, iv: number | null, price: number | null): GreekColumns {
  const { spot, strike, years } = terms;
  const finite = (value: number) => value > 0 && value < Number.POSITIVE_INFINITY;
  const carry = terms.rate - (terms.dividendYield ?? 0);
  if (!(finite(spot) && finite(strike) && finite(years)) || !Number.isFinite(carry)) return NO_GREEKS;
  const vol = iv !== null && iv > 0 ? iv : price === null ? null : impliedVolatility(terms, price);
  if (vol === null || !finite(vol)) return NO_GREEKS;
  const out = optionValuation(terms, vol);
  return {
    iv: roundGreek(vol),
    delta: roundGreek(out.delta),
    gamma: roundGreek(out.gamma),
    theta: roundGreek(out.theta),
    vega: roundGreek(out.vega),
  };
}

/** Rounds to three decimals, as the service prints iv and the Greeks (and never prints −0). */
export function roundGreek(value: number): number {
  const rounded = Math.round(value * 1000) / 1000;
  return rounded === 0 ? 0 : rounded;
}

type QuoteResult = { iv: number; ivBid: number; ivAsk: number };

/**
 * The three IVs of one quote into `result` and the Greeks at the mid's IV into `out`; true when the mid
 * has an IV (and so the Greeks are set). `forward` and `discount` are spot·e^{carry·years} and
 * e^{−rate·years}, which the caller may have at hand. `guess` is a neighbouring contract's volatility or NaN; the bid's
 * and the ask's searches start from the mid's answer. No allocation: it runs once per contract.
 */
function solveQuote(
  american: boolean,
  isCall: boolean,
  spot: number,
  strike: number,
  years: number,
  rate: number,
  carry: number,
  forward: number,
  discount: number,
  bid: number,
  ask: number,
  sides: boolean,
  guess: number,
  result: QuoteResult,
  out: MutableValuation,
): boolean {
  result.iv = Number.NaN;
  result.ivBid = Number.NaN;
  result.ivAsk = Number.NaN;
  if (!(strike > 0 && strike < Number.POSITIVE_INFINITY && years > 0 && years < Number.POSITIVE_INFINITY)) {
    return false;
  }
  if (!Number.isFinite(carry) || bid < 0 || ask < 0 || ask < bid) return false;
  const mid = 0.5 * (bid + ask);
  const hasMid = bid > 0 && ask < Number.POSITIVE_INFINITY;
  // Where early exercise cannot pay, the American model is the European one: take its faster path.
  if (american && earlyExerciseCanPay(isCall, rate, carry)) {
    memo.vol = Number.NaN;
    const midVol = hasMid
      ? americanImpliedVolatility(isCall, spot, strike, years, rate, carry, mid, guess, memo)
      : Number.NaN;
    const start = midVol > 0 ? midVol : guess;
    if (sides && bid > 0) {
      result.ivBid = americanImpliedVolatility(isCall, spot, strike, years, rate, carry, bid, start, memo);
    }
    if (sides && ask > 0) {
      result.ivAsk = americanImpliedVolatility(isCall, spot, strike, years, rate, carry, ask, start, memo);
    }
    if (!(midVol > 0 && midVol < Number.POSITIVE_INFINITY)) return false;
    result.iv = midVol;
    americanValuation(isCall, spot, strike, years, rate, carry, midVol, out);
    return true;
  }
  if (!normalizeTerms(isCall, forward, strike, years, discount, normalized)) return false;
  const midVol = hasMid ? impliedFromNormalized(normalized, mid, guess) : Number.NaN;
  const solved = midVol > 0 && midVol < Number.POSITIVE_INFINITY;
  if (sides) {
    // The bid's and the ask's searches start where the last one (the mid's, then the bid's) ended.
    if (bid > 0) {
      result.ivBid = solved
        ? impliedNearLast(normalized, bid)
        : impliedFromNormalized(normalized, bid, guess);
    }
    if (ask > 0) {
      result.ivAsk = solved
        ? impliedNearLast(normalized, ask)
        : impliedFromNormalized(normalized, ask, guess);
    }
  }
  if (!solved) return false;
  result.iv = midVol;
  // x = −|ln(F/K)|, negative exactly when F < K.
  const logMoneyness = forward < strike ? normalized.x : -normalized.x;
  valuationOnForward(
    isCall,
    spot,
    strike,
    years,
    rate,
    carry,
    forward,
    discount,
    midVol,
    out,
    logMoneyness,
    normalized.sqrtT,
  );
  return true;
}

/** The normalised terms of the contract being solved (one at a time, never shared across calls). */
const normalized = emptyNormalizedTerms();

/** The premium memo of the American searches of one contract (reset per contract, never shared across). */
const memo: PremiumMemo = { vol: Number.NaN, premium: 0, slope: 0 };

function mid(contracts: SnapshotContracts, i: number): number {
  return 0.5 * (contracts.bid[i]! + contracts.ask[i]!);
}

function finite(value: number, rounding: GreekRounding): number | null {
  if (!Number.isFinite(value)) return null;
  return rounding === 'service' ? roundGreek(value) : value;
}

function resolveRate(input: RateInput | undefined, quoteTime: number | undefined, fallback: number): number {
  if (input === undefined) return fallback;
  if (typeof input === 'number') return input;
  if (quoteTime === undefined) {
    throw new InvalidInputError(
      'a rate or dividend yield given as a dated series needs the quote instant (quoteTime)',
    );
  }
  return input(quoteTime);
}

function emptyColumns(n: number): Omit<SnapshotGreeks, 'forwards'> {
  const column = () => new Array<number | null>(n).fill(null);
  return {
    iv: column(),
    ivBid: column(),
    ivAsk: column(),
    delta: column(),
    gamma: column(),
    theta: column(),
    vega: column(),
  };
}
