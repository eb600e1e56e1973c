/**
 * Marks without a price. A contract whose quote is not a price (see quotes.ts) is marked at its last
 * valid implied volatility repriced at the current underlying, point-in-time; then within the
 * no-arbitrage bounds the quoted contracts held with it set (a put spread is never worth more than its
 * width, nor less than nothing).
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

/** A leg of a group (one underlying, expiration and side): its strike, mark per unit, and whether that mark is an estimate. */
export type GroupLeg = {
  readonly side: 'call' | 'put';
  readonly strike: number;
  mark: number;
  readonly estimated: boolean;
};

/**
 * Moves each estimated leg's mark into the range the quoted legs of its group allow: of one side and
 * expiration, a put with a higher strike is worth at least as much as one with a lower strike and at
 * most the strikes' difference more (calls mirrored). So a put spread held with a 0/0 short leg is
 * worth between nothing and its width. Returns whether any mark moved.
 */
export function boundGroup(legs: GroupLeg[]): boolean {
  const quoted = legs.filter((leg) => !leg.estimated);
  let moved = false;
  for (const leg of legs) {
    if (!leg.estimated) continue;
    let low = 0;
    let high = Number.POSITIVE_INFINITY;
    for (const q of quoted) {
      // How much more `leg` pays than `q` at most (its strike is better by `gap`), and at least 0.
      const gap = leg.side === 'put' ? leg.strike - q.strike : q.strike - leg.strike;
      if (gap >= 0) {
        low = Math.max(low, q.mark);
        high = Math.min(high, q.mark + gap);
      } else {
        low = Math.max(low, q.mark + gap);
        high = Math.min(high, q.mark);
      }
    }
    if (low > high) continue; // the quotes themselves disagree: leave the estimate
    const bounded = Math.min(high, Math.max(low, leg.mark));
    if (bounded !== leg.mark) {
      leg.mark = Math.round(bounded * 10_000) / 10_000;
      moved = true;
    }
  }
  return moved;
}
