import { describe, expect, it } from 'vitest';
import { executionOf, fillPrice } from '../../src/backtest/fills.js';
import { drawdown } from '../../src/backtest/runner.js';

const quote = { bid: 1.0, ask: 1.2, last: 1.15 };

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

  it('falls back to the last trade without a two-sided quote, and gives null with neither', () => {
    expect(fillPrice({ bid: null, ask: 1.2, last: 1.15 }, 1, executionOf({}))).toBe(1.15);
    expect(fillPrice({ bid: null, ask: null, last: null }, 1, executionOf({}))).toBeNull();
    // A crossed quote is not a quote to fill at.
    expect(fillPrice({ bid: 1.3, ask: 1.2, last: null }, 1, executionOf({}))).toBeNull();
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
    });
  });
});

describe('drawdown', () => {
  it('is the largest fall from a running peak, in dollars and as a fraction of that peak', () => {
    expect(drawdown([100, 120, 90, 130, 117])).toEqual({ maxDrawdown: 30, maxDrawdownPct: 0.25 });
    expect(drawdown([100, 101, 102])).toEqual({ maxDrawdown: 0, maxDrawdownPct: 0 });
    expect(drawdown([])).toEqual({ maxDrawdown: 0, maxDrawdownPct: 0 });
  });
});
