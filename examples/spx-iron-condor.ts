/**
 * A 30-day SPX iron condor on the AM-settled monthlies: sell the puts and calls nearest ±0.16 delta,
 * buy the wings 50 points further out, as one combo order for a net credit; hold to the cash settlement
 * at the expiration morning's open.
 *
 *   pitchain backtest examples/spx-iron-condor.ts --store data/sample --from 2019-01-02 --to 2020-12-31
 */
import { defineStrategy } from 'pitchain';

export const options = { fill: { spread: 0.5 }, commission: { option: 0.65 } } as const;

const WING = 50;

export default defineStrategy({
  name: 'SPX 30-dte iron condor, 16 delta shorts, 50-point wings',
  async onSession({ view, positions }) {
    if (positions.length > 0) return [];
    // `am`: the AM-settled monthlies (root SPX), not the PM-settled weeklies (SPXW).
    const chain = await view.options.chain('SPX', { dte: 30, am: true });
    const { optionSymbol, side, strike, delta, bid, expiration } = chain.columns;
    const rows = [...Array(chain.length).keys()].filter((i) => (bid[i] ?? 0) > 0 && delta[i] !== null);
    if (rows.length === 0) return [];
    const expiry = Math.min(...rows.map((i) => expiration[i]!));
    const ofExpiry = rows.filter((i) => expiration[i] === expiry);
    const nearest = (wanted: 'call' | 'put', target: number) =>
      ofExpiry
        .filter((i) => side[i] === wanted)
        .sort((a, b) => Math.abs(delta[a]! - target) - Math.abs(delta[b]! - target))[0];
    const at = (wanted: 'call' | 'put', level: number) =>
      ofExpiry.find((i) => side[i] === wanted && strike[i] === level);
    const shortPut = nearest('put', -0.16);
    const shortCall = nearest('call', 0.16);
    if (shortPut === undefined || shortCall === undefined) return [];
    const longPut = at('put', strike[shortPut]! - WING);
    const longCall = at('call', strike[shortCall]! + WING);
    if (longPut === undefined || longCall === undefined) return [];
    // All four legs or none, for a credit (a net price at or below 0; see docs/backtest.md, "Orders").
    return [
      {
        legs: [
          { symbol: optionSymbol[shortPut]!, quantity: -1 },
          { symbol: optionSymbol[longPut]!, quantity: 1 },
          { symbol: optionSymbol[shortCall]!, quantity: -1 },
          { symbol: optionSymbol[longCall]!, quantity: 1 },
        ],
        limit: 0,
        tag: 'iron condor',
      },
    ];
  },
});
