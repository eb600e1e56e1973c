/**
 * Buying power: what an account's positions require, by the Cboe strategy-based margin rules (Cboe
 * Margin Manual; Cboe "Margin Requirement Examples for Sample Options-based Positions"), expressed as
 * the equity the positions need. An account may hold its positions while equity ≥ the requirement, and
 * an order is accepted only if that still holds after it.
 *
 * Equity counts a short option at its value (a liability) and its proceeds in cash, so the requirement
 * here is the manual's "amount the account must deposit" with proceeds applied:
 *   - long options: paid in full (their value);
 *   - short equity options, uncovered: 20 % of the underlying less the out-of-the-money amount, at least
 *     10 % of the underlying (calls) or of the strike (puts); broad-based index options 15 % / 10 %;
 *   - a short put and a short call of one underlying, uncovered: the greater requirement plus the other
 *     side's proceeds;
 *   - spreads (a long option of the same side expiring no earlier): the maximum loss, i.e. the strikes'
 *     difference where the spread can lose it, plus the long's value less the short's; an iron condor
 *     needs the greater side only;
 *   - covered calls: the shares' requirement, less the call's value (its proceeds applied);
 *   - stock: 50 % of its value (Reg T) in a margin account, 100 % in a cash account; short stock 50 %.
 * A cash account holds what it pays for: short puts secured by the strike in cash, no uncovered call,
 * no short stock; spreads with their maximum loss in cash. Maintenance (25 %) and margin calls are not
 * modelled: a run checks the initial requirement when it orders, and reports the requirement daily.
 */
import { roundCash } from './fills.js';

/** A holding as margin sees it: what it is, how many, and its value per unit now. */
export type MarginHolding =
  | {
      readonly kind: 'stock';
      readonly underlying: string;
      readonly quantity: number;
      readonly value: number;
    }
  | {
      readonly kind: 'option';
      readonly underlying: string;
      readonly quantity: number;
      readonly multiplier: number;
      readonly side: 'call' | 'put';
      readonly strike: number;
      readonly expiration: string;
      /** Broad-based index options (SPX, NDX, RUT…): the 15 % rate. */
      readonly broadIndex: boolean;
      readonly value: number;
    };

/** The requirement in dollars, and why the account cannot hold the holdings at all, if it cannot. */
export type MarginResult = { readonly required: number; readonly refusal?: string };

type Unit = { strike: number; expiration: string; value: number; multiplier: number; broadIndex: boolean };

/** What the holdings require in an account of the given kind, at the underlying prices given. */
export function marginRequirement(
  holdings: readonly MarginHolding[],
  underlyingPrices: ReadonlyMap<string, number>,
  account: 'cash' | 'margin',
): MarginResult {
  let required = 0;
  const byUnderlying = new Map<string, MarginHolding[]>();
  for (const h of holdings) {
    const list = byUnderlying.get(h.underlying) ?? [];
    list.push(h);
    byUnderlying.set(h.underlying, list);
  }
  for (const [underlying, list] of byUnderlying) {
    const result = underlyingRequirement(list, underlyingPrices.get(underlying), account, underlying);
    if (result.refusal !== undefined)
      return { required: roundCash(required + result.required), refusal: result.refusal };
    required += result.required;
  }
  return { required: roundCash(required) };
}

function underlyingRequirement(
  holdings: readonly MarginHolding[],
  price: number | undefined,
  account: 'cash' | 'margin',
  underlying: string,
): MarginResult {
  let required = 0;
  let shares = 0;
  let shareValue = 0;
  const units = {
    shortCall: [] as Unit[],
    shortPut: [] as Unit[],
    longCall: [] as Unit[],
    longPut: [] as Unit[],
  };
  for (const h of holdings) {
    if (h.kind === 'stock') {
      shares += h.quantity;
      shareValue = h.value;
      continue;
    }
    const unit = {
      strike: h.strike,
      expiration: h.expiration,
      value: h.value,
      multiplier: h.multiplier,
      broadIndex: h.broadIndex,
    };
    const list =
      h.quantity < 0
        ? h.side === 'call'
          ? units.shortCall
          : units.shortPut
        : h.side === 'call'
          ? units.longCall
          : units.longPut;
    for (let i = 0; i < Math.abs(h.quantity); i++) list.push({ ...unit });
  }
  const spot = price ?? (shares !== 0 ? shareValue : undefined);

  // Stock: Reg T 50 % (margin) or paid in full (cash); short stock only on margin.
  if (shares > 0) required += shares * shareValue * (account === 'cash' ? 1 : 0.5);
  if (shares < 0) {
    if (account === 'cash') return { required, refusal: `a cash account cannot sell ${underlying} short` };
    required += -shares * shareValue * 0.5;
  }

  // Covered calls: each 100 shares held cover one short call (the lowest strikes first, those that
  // would need the most); the call's proceeds are applied.
  let coverable = Math.max(0, shares);
  units.shortCall.sort((a, b) => a.strike - b.strike);
  const uncoveredCalls: Unit[] = [];
  for (const call of units.shortCall) {
    if (coverable >= call.multiplier) {
      coverable -= call.multiplier;
      required -= call.value * call.multiplier;
    } else uncoveredCalls.push(call);
  }

  // Spreads: each short paired with the long of its side, expiring no earlier, that loses least.
  const spreadLoss = { put: new Map<string, number[]>(), call: new Map<string, number[]>() };
  const pair = (shorts: Unit[], longs: Unit[], side: 'call' | 'put'): Unit[] => {
    const naked: Unit[] = [];
    for (const short of shorts) {
      let best = -1;
      let bestLoss = Number.POSITIVE_INFINITY;
      longs.forEach((long, i) => {
        if (long.expiration < short.expiration || long.multiplier !== short.multiplier) return;
        const loss = Math.max(0, side === 'put' ? short.strike - long.strike : long.strike - short.strike);
        if (loss < bestLoss) {
          bestLoss = loss;
          best = i;
        }
      });
      if (best === -1) {
        naked.push(short);
        continue;
      }
      const [long] = longs.splice(best, 1);
      required += (bestLoss + long!.value - short.value) * short.multiplier;
      const losses = spreadLoss[side].get(short.expiration) ?? [];
      losses.push(bestLoss * short.multiplier);
      spreadLoss[side].set(short.expiration, losses);
    }
    return naked;
  };
  const nakedCalls = pair(uncoveredCalls, units.longCall, 'call');
  const nakedPuts = pair(units.shortPut, units.longPut, 'put');
  // Iron condors: a put spread and a call spread of one expiration can lose on one side only.
  for (const [expiration, putLosses] of spreadLoss.put) {
    const callLosses = spreadLoss.call.get(expiration) ?? [];
    putLosses.sort((a, b) => b - a);
    callLosses.sort((a, b) => b - a);
    for (let i = 0; i < Math.min(putLosses.length, callLosses.length); i++) {
      required -= Math.min(putLosses[i]!, callLosses[i]!);
    }
  }

  // Uncovered shorts.
  if (account === 'cash') {
    if (nakedCalls.length > 0) {
      return { required, refusal: `a cash account cannot sell an uncovered ${underlying} call` };
    }
    for (const put of nakedPuts) required += (put.strike - put.value) * put.multiplier; // cash-secured
  } else {
    const naked = (unit: Unit, side: 'call' | 'put') => {
      const s = spot ?? unit.strike;
      const outOfTheMoney = Math.max(0, side === 'call' ? unit.strike - s : s - unit.strike);
      const rate = unit.broadIndex ? 0.15 : 0.2;
      const floor = 0.1 * (side === 'call' ? s : unit.strike);
      return Math.max(rate * s - outOfTheMoney, floor) * unit.multiplier;
    };
    const calls = nakedCalls.map((u) => ({ need: naked(u, 'call'), value: u.value * u.multiplier }));
    const puts = nakedPuts.map((u) => ({ need: naked(u, 'put'), value: u.value * u.multiplier }));
    calls.sort((a, b) => b.need - a.need);
    puts.sort((a, b) => b.need - a.need);
    // A short put and a short call (straddle, strangle): the greater requirement with its proceeds, plus
    // the other side's proceeds; with both proceeds in equity, that leaves the greater side's own part.
    for (let i = 0; i < Math.max(calls.length, puts.length); i++) {
      const call = calls[i];
      const put = puts[i];
      if (call !== undefined && put !== undefined) {
        required += call.need + call.value >= put.need + put.value ? call.need : put.need;
      } else required += (call ?? put)!.need;
    }
  }

  // Longs left over: paid in full.
  for (const long of [...units.longCall, ...units.longPut]) required += long.value * long.multiplier;
  return { required };
}
