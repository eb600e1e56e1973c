import { describe, expect, it } from 'vitest';
import { executionOf, fillPrice } from '../../src/backtest/fills.js';
import { quoteProblem } from '../../src/backtest/quotes.js';
import { drawdown } from '../../src/backtest/runner.js';

const quote = { bid: 1.0, ask: 1.2 };

describe('fill prices', () => {
  it('fills at the mid, across the spread, or a fraction of the half-spread, with slippage against the order', () => {
    expect(fillPrice(quote, 1, executionOf({}))).toBe(1.1);
    expect(fillPrice(quote, -1, executionOf({}))).toBe(1.1);
    expect(fillPrice(quote, 1, executionOf({ fill: 'bid-ask' }))).toBe(1.2);
    expect(fillPrice(quote, -3, executionOf({ fill: 'bid-ask' }))).toBe(1.0);
    expect(fillPrice(quote, 1, executionOf({ fill: { spread: 0.5 } }))).toBe(1.15);
    expect(fillPrice(quote, -1, executionOf({ fill: { spread: 0.5 } }))).toBe(1.05);
    expect(fillPrice(quote, 1, executionOf({ slippage: 0.02 }))).toBe(1.12);
    expect(fillPrice(quote, -1, executionOf({ slippage: 0.02 }))).toBe(1.08);
  });

  it('takes only a two-sided market with size as a price: never 0/0, one side, a crossed market or a last trade', () => {
    const q = (bid: number | null, ask: number | null, size: number | null = 10) => ({
      bid,
      ask,
      bidSize: size,
      askSize: size,
      last: 70,
      time: 0,
    });
    expect(quoteProblem(q(1, 1.2))).toBeUndefined();
    expect(quoteProblem(q(1, 1.2, null))).toBeUndefined(); // a vendor without sizes
    expect(quoteProblem(q(0, 0))).toBe('a 0/0 quote');
    expect(quoteProblem(q(0, 1.2))).toMatch(/one-sided/);
    expect(quoteProblem(q(null, 1.2))).toMatch(/one-sided/);
    expect(quoteProblem(q(1.3, 1.2))).toMatch(/crossed/);
    expect(quoteProblem(q(1, 1.2, 0))).toBe('a quote with no size');
    expect(quoteProblem(undefined)).toBe('no quote');
  });

  it('refuses execution settings no fill could use', () => {
    expect(() => executionOf({ fill: { spread: 2 } })).toThrow(/fraction from 0 to 1/);
    expect(() => executionOf({ fill: { spread: Number.NaN } })).toThrow(RangeError);
    expect(() => executionOf({ fill: 'close' as never })).toThrow(/fill must be/);
    expect(() => executionOf({ slippage: -1 })).toThrow(/slippage/);
    expect(() => executionOf({ commission: { option: Number.POSITIVE_INFINITY } })).toThrow(/commission/);
    expect(() => executionOf({ fillAt: 'later' as never })).toThrow(/fillAt/);
    expect(executionOf({})).toEqual({
      fill: 'mid',
      fillAt: 'decision',
      slippage: 0,
      optionCommission: 0.65,
      stockCommission: 0,
      maxQuoteAge: 900,
    });
  });
});

describe('drawdown', () => {
  it('is the largest fall from a running peak, in dollars and as a fraction of that peak', () => {
    expect(drawdown([100, 120, 90, 130, 117])).toEqual({ maxDrawdown: 30, maxDrawdownPct: 0.25 });
    expect(drawdown([100, 101, 102])).toEqual({ maxDrawdown: 0, maxDrawdownPct: 0 });
    expect(drawdown([])).toEqual({ maxDrawdown: 0, maxDrawdownPct: 0 });
    // One fall, the deepest as a fraction, measured both ways (as the statistics' maxDrawdown is).
    expect(drawdown([100, 50, 1000, 800])).toEqual({ maxDrawdown: 50, maxDrawdownPct: 0.5 });
  });
});
