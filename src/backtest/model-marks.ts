/**
 * Marks without a price. A contract whose quote is not a price (see quotes.ts) is marked at its last
 * valid implied volatility repriced at the current underlying, point-in-time; then the contracts held
 * together are kept within what they can be worth together: the legs of one underlying, expiration and
 * side have a value at expiration between the least and the most their payoff can be, and a model or
 * carried mark is moved so that the group's value stays there (a put spread is never worth more than
 * its width, nor less than nothing).
 */
import { exerciseStyleOf, sessionCloseSeconds } from '../market-time/index.js';
import { yearsBetween } from '../pricing/european.js';
import { optionValuation } from '../pricing/models.js';
import type { Greeks } from './types.js';

/** A contract to price. */
export type ModelTerms = {
  readonly root: string;
  readonly side: 'call' | 'put';
  readonly strike: number;
  readonly expiration: string;
};

/** The model value per unit and its Greeks at `iv` and `spot`, at `now`; rate 0, as the service's Greeks. */
export function modelValue(
  terms: ModelTerms,
  iv: number,
  spot: number,
  now: number,
): { price: number; greeks: Greeks } {
  const years = Math.max(yearsBetween(now, sessionCloseSeconds(terms.expiration)), 1e-6);
  const valuation = optionValuation(
    { side: terms.side, spot, strike: terms.strike, years, rate: 0 },
    iv,
    exerciseStyleOf(terms.root),
  );
  return {
    price: Math.max(0, Math.round(valuation.price * 10_000) / 10_000),
    greeks: { delta: valuation.delta, gamma: valuation.gamma, theta: valuation.theta, vega: valuation.vega },
  };
}

/** A leg of a group: its terms, signed quantity, mark per unit, and whether that mark is an estimate. */
export type GroupLeg = {
  readonly side: 'call' | 'put';
  readonly strike: number;
  readonly quantity: number;
  mark: number;
  readonly estimated: boolean;
};

/**
 * The least and most a group of one side's legs (same underlying and expiration) can be worth per unit
 * of quantity: the range of its payoff over every underlying price (unbounded where the payoff is).
 */
export function payoffBounds(legs: readonly GroupLeg[]): { low: number; high: number } {
  const payoff = (s: number) =>
    legs.reduce(
      (sum, leg) => sum + leg.quantity * Math.max(0, leg.side === 'call' ? s - leg.strike : leg.strike - s),
      0,
    );
  const points = [0, ...legs.map((leg) => leg.strike)];
  let low = Math.min(...points.map(payoff));
  let high = Math.max(...points.map(payoff));
  // Past the highest strike calls keep paying their net quantity per point; puts pay nothing.
  const tail = legs.reduce((sum, leg) => sum + (leg.side === 'call' ? leg.quantity : 0), 0);
  if (tail > 0) high = Number.POSITIVE_INFINITY;
  if (tail < 0) low = Number.NEGATIVE_INFINITY;
  return { low, high };
}

/**
 * Moves the estimated legs' marks, equally in value, so that the group's value lies within its payoff
 * bounds; quoted legs keep their marks. Returns whether any mark moved.
 */
export function boundGroup(legs: GroupLeg[]): boolean {
  const estimated = legs.filter((leg) => leg.estimated);
  if (estimated.length === 0 || legs.length < 2) return false;
  const { low, high } = payoffBounds(legs);
  const value = legs.reduce((sum, leg) => sum + leg.quantity * leg.mark, 0);
  const target = Math.min(high, Math.max(low, value));
  if (Math.abs(target - value) < 1e-9) return false;
  const share = (target - value) / estimated.length;
  for (const leg of estimated)
    leg.mark = Math.max(0, Math.round((leg.mark + share / leg.quantity) * 10_000) / 10_000);
  return true;
}
