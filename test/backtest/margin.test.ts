/**
 * The margin rules against worked examples of Cboe. A run's requirement is the equity an account needs
 * to hold the positions, with every option's proceeds in cash and its value counted against equity, so
 * it equals what Cboe's examples print as the requirement with proceeds applied (the deposit).
 *
 * Sources:
 *   [A] Cboe, "Margin Requirement Examples for Sample Options-based Positions", strategy-based column:
 *       100-contract positions in IBM options (IBM at 97.73) and SPX options. The sheet does not print the
 *       SPX level; its short call and short put rows both solve to 1451.19, used here.
 *   [B] Cboe Margin Manual, "Short Put and Short Call" sample calculation: underlying 92.63, short 1 90
 *       call at 7.00 and short 1 90 put at 3.70; requirement 2,922.60 including both premiums (1,070.00).
 */
import { describe, expect, it } from 'vitest';
import { type MarginHolding, marginRequirement } from '../../src/backtest/margin.js';

const IBM = 97.73;
const SPX = 1451.19;
const prices = new Map([
  ['IBM', IBM],
  ['SPX', SPX],
  ['XYZ', 92.63],
]);

const option = (
  underlying: string,
  quantity: number,
  side: 'call' | 'put',
  strike: number,
  value: number,
): MarginHolding => ({
  kind: 'option',
  underlying,
  quantity,
  multiplier: 100,
  side,
  strike,
  expiration: '2007-04-20',
  broadIndex: underlying === 'SPX',
  value,
});
const stock = (underlying: string, quantity: number, value: number): MarginHolding => ({
  kind: 'stock',
  underlying,
  quantity,
  value,
});
const margin = (...holdings: MarginHolding[]) => marginRequirement(holdings, prices, 'margin').required;

describe('Cboe strategy-based margin, against the worked examples', () => {
  it('[A] short call, uncovered: 20 % of the underlying less the out-of-the-money amount', () => {
    expect(margin(option('IBM', -100, 'call', 100, 1.68))).toBeCloseTo(172_760, 2);
  });

  it('[A] short put, uncovered (in the money: nothing to deduct)', () => {
    expect(margin(option('IBM', -100, 'put', 100, 3.18))).toBeCloseTo(195_460, 2);
  });

  it('[A] broad-based index: 15 % instead of 20 %', () => {
    expect(margin(option('SPX', -100, 'call', 1460, 21.66))).toBeCloseTo(2_088_685, 0);
    expect(margin(option('SPX', -100, 'put', 1460, 22.55))).toBeCloseTo(2_176_785, 0);
  });

  it('[A] covered call: 50 % of the shares, the call proceeds applied', () => {
    expect(margin(stock('IBM', 10_000, IBM), option('IBM', -100, 'call', 100, 1.68))).toBeCloseTo(471_850, 2);
  });

  it('[A] protective put: 50 % of the shares and the put paid in full', () => {
    expect(margin(stock('IBM', 10_000, IBM), option('IBM', 100, 'put', 95, 1.02))).toBeCloseTo(498_850, 2);
  });

  it('[A] synthetic long: the call paid in full plus the uncovered put', () => {
    expect(margin(option('IBM', 100, 'call', 100, 1.68), option('IBM', -100, 'put', 100, 3.18))).toBeCloseTo(
      212_260,
      2,
    );
    expect(
      margin(option('SPX', 100, 'call', 1460, 21.66), option('SPX', -100, 'put', 1460, 22.55)),
    ).toBeCloseTo(2_393_385, 0);
  });

  it('[A] risk reversal and collar', () => {
    expect(margin(option('IBM', 100, 'put', 95, 1.02), option('IBM', -100, 'call', 105, 0.4))).toBeCloseTo(
      132_960,
      2,
    );
    expect(
      margin(
        stock('IBM', 10_000, IBM),
        option('IBM', 100, 'put', 95, 1.02),
        option('IBM', -100, 'call', 105, 0.4),
      ),
    ).toBeCloseTo(494_850, 2);
    expect(
      margin(option('SPX', 100, 'put', 1450, 18.72), option('SPX', -100, 'call', 1500, 5.96)),
    ).toBeCloseTo(1_875_885, 0);
  });

  it('[A] long vertical call spread: the net debit', () => {
    expect(margin(option('IBM', 100, 'call', 95, 4.53), option('IBM', -100, 'call', 105, 0.4))).toBeCloseTo(
      41_300,
      2,
    );
    expect(
      margin(option('SPX', 100, 'call', 1450, 27.57), option('SPX', -100, 'call', 1500, 5.96)),
    ).toBeCloseTo(216_100, 0);
  });

  it('[B] short put and short call: the greater side, plus the other premium', () => {
    // 2,922.60 with both premiums; the proceeds (700 + 370) are in the account's cash.
    expect(margin(option('XYZ', -1, 'call', 90, 7), option('XYZ', -1, 'put', 90, 3.7))).toBeCloseTo(
      2_922.6 - 1_070,
      2,
    );
  });

  it('credit spreads need their width; an iron condor only its wider side', () => {
    // Short 125 put at 1.24, long 120 put at 0.80: the width (500) less the net credit (44).
    const putSpread = [option('IBM', -1, 'put', 125, 1.24), option('IBM', 1, 'put', 120, 0.8)];
    expect(margin(...putSpread)).toBeCloseTo(456, 2);
    const callSpread = [option('IBM', -1, 'call', 110, 0.5), option('IBM', 1, 'call', 120, 0.1)];
    expect(margin(...putSpread, ...callSpread)).toBeCloseTo(1_000 - 44 - 40, 2);
  });

  it('a cash account pays for what it holds: puts secured by their strike, no uncovered call, no short stock', () => {
    const cash = (...holdings: MarginHolding[]) => marginRequirement(holdings, prices, 'cash');
    expect(cash(option('IBM', -1, 'put', 95, 1.02)).required).toBeCloseTo(9_500 - 102, 2);
    expect(cash(stock('IBM', 100, IBM)).required).toBeCloseTo(9_773, 2);
    expect(cash(stock('IBM', 100, IBM), option('IBM', -1, 'call', 100, 1.68)).required).toBeCloseTo(
      9_773 - 168,
      2,
    );
    expect(cash(option('IBM', -1, 'call', 100, 1.68)).refusal).toMatch(/cannot sell an uncovered IBM call/);
    expect(cash(stock('IBM', -100, IBM)).refusal).toMatch(/cannot sell IBM short/);
  });
});
