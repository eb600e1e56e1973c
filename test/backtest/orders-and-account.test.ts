/**
 * Combo orders (all legs or none, a net limit), buying power, and the period a run may cover, on the
 * sample store (SPY, SPX/SPXW and AAPL, sessions 2019-01-02 .. 2020-12-31). Every instant is an Eastern
 * session time, so the host's time zone does not matter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backtest } from '../../src/backtest/runner.js';
import type { Order, Strategy } from '../../src/backtest/types.js';
import { openStore, type Store } from '../../src/library/store.js';

let store: Store;
beforeAll(async () => {
  store = await openStore('data/sample', { threads: 1 });
});
afterAll(() => store.close());

const on = (session: string, orders: Order[]): Strategy => ({
  onSession: (context) => (context.session === session ? orders : []),
});
const SHORT = 'SPY190215P00240000'; // 4.47 / 4.51 at 16:00 on 2019-01-07
const LONG = 'SPY190215P00235000';
const EXPIRING = 'SPY190107P00250000'; // 0/0 at 16:00 on its expiration day

describe('combo orders', () => {
  it('fills no leg of a spread whose second leg cannot fill, and names that leg', async () => {
    const report = await backtest({
      store,
      from: '2019-01-07',
      to: '2019-01-07',
      strategy: on('2019-01-07', [
        {
          legs: [
            { symbol: SHORT, quantity: -1 },
            { symbol: EXPIRING, quantity: 1 },
          ],
          tag: 'spread',
        },
      ]),
    });
    expect(report.trades).toEqual([]);
    expect(report.finalPositions).toEqual([]);
    expect(report.rejected).toEqual([
      expect.objectContaining({ reason: `leg ${EXPIRING}: not a price: a 0/0 quote`, tag: 'spread' }),
    ]);
  });

  it('fills every leg under one order id at a net price within the limit, and refuses a worse one', async () => {
    const spread = (limit: number): Order => ({
      legs: [
        { symbol: SHORT, quantity: -1 },
        { symbol: LONG, quantity: 1 },
      ],
      limit,
    });
    const filled = await backtest({
      store,
      from: '2019-01-07',
      to: '2019-01-07',
      strategy: on('2019-01-07', [spread(-0.5)]),
    });
    expect(filled.trades.map((t) => [t.symbol, t.quantity, t.orderId])).toEqual([
      [SHORT, -1, 1],
      [LONG, 1, 1],
    ]);
    const credit = filled.trades[0]!.price - filled.trades[1]!.price;
    expect(credit).toBeGreaterThan(0.5);
    const refused = await backtest({
      store,
      from: '2019-01-07',
      to: '2019-01-07',
      strategy: on('2019-01-07', [spread(-(credit + 0.05))]),
    });
    expect(refused.trades).toEqual([]);
    expect(refused.rejected[0]!.reason).toMatch(/^the net price -\d+\.\d{4} is worse than the limit -/);
  });
});

describe('buying power', () => {
  it('refuses 10,000 SPY on $100k, with the numbers, and takes what the account can carry', async () => {
    const report = await backtest({
      store,
      from: '2019-01-07',
      to: '2019-01-08',
      strategy: on('2019-01-07', [
        { symbol: 'SPY', quantity: 10_000 },
        { symbol: 'SPY', quantity: 600 },
      ]),
    });
    expect(report.rejected).toHaveLength(1);
    expect(report.rejected[0]!.reason).toMatch(
      /^buying power: the positions would require \$1,2\d\d,\d{3}\.\d\d in a margin account, and equity after the order would be \$100,000\.00$/,
    );
    // 600 shares (about $153k) on margin: 50 % of them required.
    expect(report.trades).toMatchObject([{ symbol: 'SPY', quantity: 600 }]);
    expect(report.equity[0]!.marginUsed).toBeCloseTo(report.trades[0]!.price * 600 * 0.5, 0);
    expect(report.equity[0]!.greeks.delta).toBe(600);
    expect(report.equity[0]!.cash).toBeLessThan(0); // the margin loan
  });

  it('in a cash account, pays in full and never sells an uncovered call', async () => {
    const report = await backtest({
      store,
      from: '2019-01-07',
      to: '2019-01-07',
      account: 'cash',
      strategy: on('2019-01-07', [
        { symbol: 'SPY', quantity: 600 },
        { symbol: 'SPY190215C00260000', quantity: -1 },
        { symbol: 'SPY', quantity: 300 },
      ]),
    });
    expect(report.rejected.map((r) => r.reason)).toEqual([
      expect.stringMatching(
        /^buying power: the positions would require \$15\d,\d{3}\.\d\d in a cash account/,
      ),
      'buying power: a cash account cannot sell an uncovered SPY call',
    ]);
    expect(report.trades).toMatchObject([{ symbol: 'SPY', quantity: 300 }]);
    expect(report.equity[0]!.cash).toBeGreaterThan(0);
  });
});

describe('interest on cash', () => {
  it('accrues cashRate on the cash held, by calendar day, into the P&L', async () => {
    const report = await backtest({
      store,
      from: '2019-01-04',
      to: '2019-01-08',
      cashRate: 0.0365,
      strategy: { onSession: () => [] },
    });
    // Friday to Monday is 3 days, Monday to Tuesday 1: 100,000 × 3.65 % × 3/365 = 30, then 10.003.
    expect(report.equity.map((p) => p.cash)).toEqual([100_000, 100_030, 100_040]);
    expect(report.interest).toBe(40);
    expect(report.pnl).toBe(40);
  });

  it('refuses an account or a rate it cannot use', async () => {
    const strategy = { onSession: () => [] };
    await expect(
      backtest({ store, from: '2019-01-04', to: '2019-01-08', strategy, account: 'portfolio' as never }),
    ).rejects.toThrow("account must be 'cash' or 'margin'");
    await expect(
      backtest({ store, from: '2019-01-04', to: '2019-01-08', strategy, cashRate: Number.NaN }),
    ).rejects.toThrow(/cashRate/);
  });
});

describe('the period', () => {
  it('refuses a period outside the sessions the store holds, naming them', async () => {
    const strategy = { onSession: () => [] };
    await expect(backtest({ store, from: '2021-01-04', to: '2021-03-31', strategy })).rejects.toThrow(
      'the period 2021-01-04 .. 2021-03-31 reaches outside the sessions the store holds, 2019-01-02 .. 2020-12-31',
    );
    await expect(backtest({ store, from: '2020-12-01', to: '2021-01-29', strategy })).rejects.toThrow(
      /outside the sessions the store holds/,
    );
  });
});
