/**
 * Fills and marks on fresh, valid quotes (issue: a 15:45 decision filled a 39-day SPY put at the
 * previous session's close, three days old over a weekend, stamped 15:45). The sample keeps a 15:45
 * snapshot only for contracts within 5 days of expiry; every contract has the 16:00 end of day. Every
 * instant is an Eastern session time, so the host's time zone does not matter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backtest } from '../../src/backtest/runner.js';
import type { Order, Strategy } from '../../src/backtest/types.js';
import { openStore, type Store } from '../../src/library/store.js';
import { etWallToSeconds } from '../../src/market-time/index.js';

let store: Store;
beforeAll(async () => {
  store = await openStore('data/sample', { threads: 1 });
});
afterAll(() => store.close());

const PUT = 'SPY190215P00240000';
/** Orders `orders` on `session`, nothing otherwise. */
const on = (session: string, orders: Order[]): Strategy => ({
  onSession: (context) => (context.session === session ? orders : []),
});

describe('fresh fills', () => {
  it('rejects a fill on a quote older than maxQuoteAge: the 15:45 decision on a 39-day put', async () => {
    const report = await backtest({
      store,
      from: '2019-01-07',
      to: '2019-01-07',
      at: '15:45',
      strategy: on('2019-01-07', [{ symbol: PUT, quantity: -1 }]),
    });
    expect(report.trades).toEqual([]);
    expect(report.rejected).toHaveLength(1);
    expect(report.rejected[0]!.reason).toBe(
      'the quote is 3.0 days old (updated 2019-01-04 16:00 ET), older than maxQuoteAge 900 s',
    );
  });

  it("fills at the default decision, 16:00, on that session's quote, and says which quote it used", async () => {
    const report = await backtest({
      store,
      from: '2019-01-07',
      to: '2019-01-08',
      strategy: on('2019-01-07', [{ symbol: PUT, quantity: -1 }]),
    });
    expect(report.at).toBe('16:00');
    expect(report.trades).toEqual([
      expect.objectContaining({
        session: '2019-01-07',
        symbol: PUT,
        price: 4.49, // that session's mid; Friday's was 5.405
        time: etWallToSeconds('2019-01-07', '16:00'),
        quoteTime: etWallToSeconds('2019-01-07', '16:00'),
        orderId: 1,
      }),
    ]);
    expect(report.finalPositions).toMatchObject([{ symbol: PUT, markSource: 'quote' }]);
    expect(report.marks).toEqual({ stale: 0, model: 0, last: 0 });
    // The portfolio's Greeks: the put's delta (-0.268 that day) × -1 contract × 100 shares.
    expect(report.equity[0]!.greeks.delta).toBeCloseTo(26.8, 6);
    expect(report.equity[0]!.greeks.vega).toBeCloseTo(-27.4, 6);
    // A naked short equity put: 20 % of SPY less the out-of-the-money amount, or 10 % of the strike.
    const spy = 254.38;
    expect(report.equity[0]!.marginUsed).toBeCloseTo(Math.max(0.2 * spy - (spy - 240), 24) * 100, 2);
  });

  it("fills a 15:45 decision at the session's close with fillAt 'next', on the close's quote", async () => {
    const report = await backtest({
      store,
      from: '2019-01-07',
      to: '2019-01-07',
      at: '15:45',
      fillAt: 'next',
      strategy: on('2019-01-07', [{ symbol: PUT, quantity: -1 }]),
    });
    const close = etWallToSeconds('2019-01-07', '16:00');
    expect(report.trades).toEqual([expect.objectContaining({ price: 4.49, time: close, quoteTime: close })]);
  });

  it('counts and lists marks on quotes older than maxQuoteAge', async () => {
    // A day's age allowed: Tuesday's 15:45 fill takes Monday's close, and Monday 2019-01-14's mark
    // takes Friday's (71.75 h).
    const report = await backtest({
      store,
      from: '2019-01-08',
      to: '2019-01-14',
      at: '15:45',
      maxQuoteAge: 86_400,
      strategy: on('2019-01-08', [{ symbol: PUT, quantity: -1 }]),
    });
    const [trade] = report.trades;
    expect(trade!.time - trade!.quoteTime!).toBe(23.75 * 3600);
    expect(report.marks).toEqual({ stale: 1, model: 0, last: 0 });
    expect(report.markNotes).toEqual([
      { symbol: PUT, source: 'stale', sessions: 1, first: '2019-01-14', last: '2019-01-14' },
    ]);
    expect(report.finalPositions).toMatchObject([{ symbol: PUT, markSource: 'stale' }]);
  });
});
