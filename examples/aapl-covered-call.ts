/**
 * A covered call on AAPL through its 4-for-1 split of 2020-08-31: buy 100 shares and sell the 30-day
 * call nearest +0.30 delta against them as one buy-write (a combo order), let the call expire or be
 * assigned; sell the next call against the shares still held (400 after the split), or buy-write again
 * after an assignment.
 *
 *   pitchain backtest examples/aapl-covered-call.ts --store data/sample --from 2020-01-02 --to 2020-12-31
 */
import { defineStrategy, type Order } from 'pitchain';

export const options = { fill: 'mid' } as const;

/** The shares the strategy holds when it is not flat: a round lot, four after the split. */
let lot = 100;

export default defineStrategy({
  name: 'AAPL covered call, 30 dte, +0.30 delta',
  onStart() {
    lot = 100;
  },
  async onSession({ view, positions, now }) {
    const shares = positions.find((position) => position.kind === 'stock');
    const calls = positions.filter((position) => position.kind === 'option');
    if (shares !== undefined) lot = shares.quantity;
    if (calls.length > 0) return []; // one call at a time, held to expiration
    const chain = await view.options.chain('AAPL', { dte: 30, side: 'call' });
    const { optionSymbol, delta, bid, updated } = chain.columns;
    let best = -1;
    for (let i = 0; i < chain.length; i++) {
      // A contract's latest quote may be old: the pre-split contracts stop trading on the split, and a
      // current chain still shows their last quotes. Only quotes of the last few days count.
      if (now - updated[i]! > 4 * 86_400) continue;
      if (delta[i] === null || (bid[i] ?? 0) <= 0) continue;
      if (best === -1 || Math.abs(delta[i]! - 0.3) < Math.abs(delta[best]! - 0.3)) best = i;
    }
    if (best === -1) return [];
    // One call per 100 shares (4 after the split turned 100 shares into 400).
    const call: Order = { symbol: optionSymbol[best]!, quantity: -Math.floor(lot / 100), tag: 'sell call' };
    if (shares !== undefined) return [call];
    // Flat (the start, or after an assignment): shares and call together, or neither.
    return [{ legs: [{ symbol: 'AAPL', quantity: lot }, call], tag: 'buy-write' }];
  },
});
