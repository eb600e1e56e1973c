import { describe, expect, it } from 'vitest';
import { type Instrument, Portfolio } from '../../src/backtest/portfolio.js';
import type { ContractTerms } from '../../src/library/store.js';

const put = (strike: number, underlying = 'SPY', root = underlying): ContractTerms => ({
  symbol: `${root.padEnd(root.length)}200417P${String(strike * 1000).padStart(8, '0')}`,
  underlying,
  root,
  expiration: '2020-04-17',
  side: 'put',
  strike,
  settlement: 'PM',
});

/** Books an order's fill (no order id or quote time: these tests are about the arithmetic). */
function fill(
  book: Portfolio,
  session: string,
  instrument: Instrument,
  quantity: number,
  price: number,
  commission: number,
) {
  return book.fill({
    session,
    time: 0,
    instrument,
    quantity,
    price,
    commission,
    reason: 'order',
    orderId: 1,
    quoteTime: 0,
  });
}

describe('the account of a run', () => {
  it('books fills with their commission, and closes a position that returns to zero', () => {
    const book = new Portfolio(10_000);
    fill(book, '2020-03-16', { kind: 'option', terms: put(240) }, -2, 3.5, 1.3);
    expect(book.cash).toBe(10_000 + 700 - 1.3);
    expect(book.positions()).toMatchObject([
      { symbol: 'SPY200417P00240000', quantity: -2, averagePrice: 3.5 },
    ]);
    book.mark('SPY200417P00240000', 2, 0, 'quote');
    expect(book.positionsValue()).toBe(-400);
    expect(book.equity()).toBe(10_000 + 700 - 1.3 - 400);
    fill(book, '2020-03-17', { kind: 'option', terms: put(240) }, 2, 1.75, 1.3);
    expect(book.positions()).toEqual([]);
    expect(book.cash).toBe(10_000 + 700 - 350 - 2.6);
  });

  it('delivers shares at the strike when an equity put is assigned, and nothing when it expires out of the money', () => {
    const book = new Portfolio(50_000);
    fill(book, '2020-03-16', { kind: 'option', terms: put(240) }, -1, 5, 0);
    fill(book, '2020-03-16', { kind: 'option', terms: put(200) }, -1, 1, 0);
    const before = book.cash;
    book.expire('2020-04-17', 0, 'SPY', '2020-04-17', 230.5, false);
    // Assigned: 100 shares paid at the strike, whatever the settlement price.
    expect(book.cash).toBe(before - 24_000);
    expect(book.positions()).toMatchObject([
      { symbol: 'SPY', kind: 'stock', quantity: 100, averagePrice: 230.5 },
    ]);
    expect(book.trades.map((t) => t.reason)).toEqual([
      'order',
      'order',
      'assignment',
      'assignment',
      'expiration',
    ]);
  });

  it('settles index options in cash at their intrinsic value', () => {
    const book = new Portfolio(0);
    fill(book, '2020-03-16', { kind: 'option', terms: put(2400, 'SPX') }, 1, 50, 0);
    book.expire('2020-04-17', 0, 'SPX', '2020-04-17', 2350.25, true);
    expect(book.cash).toBe(-5_000 + 4_975);
    expect(book.positions()).toEqual([]);
  });

  it('turns shares and contracts into their split-adjusted ones: ×ratio at price ÷ratio, strike ÷ratio', () => {
    const book = new Portfolio(0);
    fill(book, '2020-08-24', { kind: 'stock', symbol: 'AAPL' }, 100, 500, 0);
    const call: ContractTerms = {
      symbol: 'AAPL200918C00535000',
      underlying: 'AAPL',
      root: 'AAPL',
      expiration: '2020-09-18',
      side: 'call',
      strike: 535,
      settlement: 'PM',
    };
    fill(book, '2020-08-25', { kind: 'option', terms: call }, -1, 10, 0);
    const equity = book.equity();
    book.split('2020-08-31', 0, 'AAPL', 4);
    expect(book.positions()).toMatchObject([
      { symbol: 'AAPL', quantity: 400, averagePrice: 125 },
      { symbol: 'AAPL200918C00133750', quantity: -4, strike: 133.75, averagePrice: 2.5 },
    ]);
    expect(book.equity()).toBe(equity);
  });
});
