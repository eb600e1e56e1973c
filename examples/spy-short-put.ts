/**
 * Sell a 30-day SPY put near −0.30 delta at the close (16:00), with Greeks computed point-in-time from
 * the quotes; hold it to expiration, or buy it back once half of the premium is earned.
 *
 *   pitchain backtest examples/spy-short-put.ts --store data/sample --from 2019-01-02 --to 2020-12-31
 */
import { defineStrategy } from 'pitchain';

export const options = { greeks: 'computed', fill: 'mid' } as const;

export default defineStrategy({
  name: 'SPY 30-dte short put, -0.30 delta, 50% profit take',
  async onSession({ view, positions }) {
    const open = positions.find((position) => position.kind === 'option');
    if (open !== undefined) {
      // Short: the position gains as the put's price falls; take profit at half the premium.
      if (open.mark !== null && open.mark <= open.averagePrice * 0.5) {
        return [{ symbol: open.symbol, quantity: -open.quantity, tag: 'take profit' }];
      }
      return [];
    }
    // Shares from an assignment are sold at the next decision: this strategy only sells puts.
    const shares = positions.filter((position) => position.kind === 'stock');
    if (shares.length > 0) {
      return shares.map((stock) => ({
        symbol: stock.symbol,
        quantity: -stock.quantity,
        tag: 'sell assigned shares',
      }));
    }
    const chain = await view.options.chain('SPY', { dte: 30, side: 'put' });
    let best = -1;
    for (let i = 0; i < chain.length; i++) {
      const delta = chain.columns.delta[i];
      const bid = chain.columns.bid[i];
      if (delta === null || bid === null || bid <= 0) continue;
      const bestDelta = best === -1 ? null : chain.columns.delta[best]!;
      if (bestDelta === null || Math.abs(delta + 0.3) < Math.abs(bestDelta + 0.3)) best = i;
    }
    if (best === -1) return [];
    return [{ symbol: chain.columns.optionSymbol[best]!, quantity: -1, tag: 'open' }];
  },
});
