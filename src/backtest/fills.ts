/**
 * Fill prices: where in the quoted spread an order fills, and what it pays on top (slippage,
 * commission). One place for the arithmetic so that the runner, the report and the tests agree.
 */
import { InvalidInputError } from '../errors.js';
import type { ExecutionOptions, FillModel } from './types.js';

/** A two-sided quote to fill against (one that `quoteProblem` accepts). */
export type FillQuote = { readonly bid: number; readonly ask: number };

/** The default oldest quote a fill may use: 15 minutes (see docs/backtest.md, "Fresh quotes"). */
export const DEFAULT_MAX_QUOTE_AGE = 900;

/** The execution settings of a run, with defaults applied and checked. */
export type Execution = {
  readonly fill: FillModel;
  readonly fillAt: 'decision' | 'next';
  readonly slippage: number;
  readonly optionCommission: number;
  readonly stockCommission: number;
  readonly maxQuoteAge: number;
};

/** Reads the execution options, refusing values no fill could use. */
export function executionOf(options: ExecutionOptions): Execution {
  const fill = options.fill ?? 'mid';
  if (typeof fill === 'object') {
    if (!Number.isFinite(fill.spread) || fill.spread < 0 || fill.spread > 1) {
      throw new InvalidInputError(`fill spread must be a fraction from 0 to 1, not ${fill.spread}`);
    }
  } else if (fill !== 'mid' && fill !== 'bid-ask') {
    throw new InvalidInputError(
      `fill must be 'mid', 'bid-ask' or { spread: f }, not ${JSON.stringify(fill)}`,
    );
  }
  const fillAt = options.fillAt ?? 'decision';
  if (fillAt !== 'decision' && fillAt !== 'next') {
    throw new InvalidInputError(`fillAt must be 'decision' or 'next', not ${JSON.stringify(fillAt)}`);
  }
  const amount = (name: string, value: number | undefined, fallback: number) => {
    const v = value ?? fallback;
    if (!Number.isFinite(v) || v < 0)
      throw new InvalidInputError(`${name} must be a non-negative number, not ${v}`);
    return v;
  };
  return {
    fill,
    fillAt,
    slippage: amount('slippage', options.slippage, 0),
    optionCommission: amount('commission.option', options.commission?.option, 0.65),
    stockCommission: amount('commission.stock', options.commission?.stock, 0),
    maxQuoteAge: amount('maxQuoteAge', options.maxQuoteAge, DEFAULT_MAX_QUOTE_AGE),
  };
}

/** The fill model in words, for reports. */
export function describeFill(execution: Execution): string {
  const where =
    execution.fill === 'mid'
      ? 'mid'
      : execution.fill === 'bid-ask'
        ? 'bid-ask (crossing the spread)'
        : `mid + ${execution.fill.spread} of the half-spread`;
  return `${where} at the ${execution.fillAt === 'next' ? 'next snapshot (the close)' : 'decision snapshot'}, slippage ${execution.slippage}/unit, commission ${execution.optionCommission}/contract and ${execution.stockCommission}/share, quotes at most ${execution.maxQuoteAge} s old`;
}

/**
 * The price per unit an order of `quantity` fills at on a two-sided quote: where the fill model puts it
 * in the spread, with slippage added against the order.
 */
export function fillPrice(quote: FillQuote, quantity: number, execution: Execution): number {
  const buying = quantity > 0;
  const { bid, ask } = quote;
  const mid = (bid + ask) / 2;
  const half = (ask - bid) / 2;
  const fraction = execution.fill === 'mid' ? 0 : execution.fill === 'bid-ask' ? 1 : execution.fill.spread;
  const price = buying ? mid + fraction * half : mid - fraction * half;
  const slipped = buying ? price + execution.slippage : price - execution.slippage;
  return Math.max(0, roundPrice(slipped));
}

/** Prices to 1/10,000 of a dollar, the store's precision, so that sums do not drift. */
export function roundPrice(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/** Dollars to the cent. */
export function roundCash(value: number): number {
  const rounded = Math.round(value * 100) / 100;
  return rounded === 0 ? 0 : rounded;
}
