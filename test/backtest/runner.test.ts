/**
 * The runner on the sample store: what a strategy sees, what the report says, and how fills, marks,
 * settlement and splits come out on real sessions. Every instant is an Eastern session time, so the
 * host's time zone does not matter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backtest, defineStrategy } from '../../src/backtest/runner.js';
import type { BacktestReport, StrategyContext } from '../../src/backtest/types.js';
import { LookAheadError } from '../../src/errors.js';
import { openStore, type Store } from '../../src/library/store.js';
import { etWallToSeconds, sessionsBetween } from '../../src/market-time/index.js';

let store: Store;
beforeAll(async () => {
  store = await openStore('data/sample');
});
afterAll(() => store.close());

describe('backtest()', () => {
  it('steps through every session at the decision time, showing the strategy only what was known then', async () => {
    const seen: StrategyContext[] = [];
    const latest: (number | null)[] = [];
    const report = await backtest({
      store,
      from: '2020-03-09',
      to: '2020-03-20',
      strategy: defineStrategy({
        async onSession(context) {
          seen.push(context);
          const chain = await context.view.options.chain('SPY', { dte: 30, side: 'put' });
          latest.push(chain.meta.dataAsOf);
          return [];
        },
      }),
    });
    const sessions = sessionsBetween('2020-03-09', '2020-03-20');
    expect(seen.map((c) => c.session)).toEqual(sessions);
    expect(seen.map((c) => c.now)).toEqual(sessions.map((s) => etWallToSeconds(s, '16:00')));
    seen.forEach((context, i) => {
      expect(context.view.policy).toBe('strict');
      expect(latest[i]).not.toBeNull();
      expect(latest[i]!).toBeLessThanOrEqual(context.now);
    });
    expect(report).toMatchObject({
      dataVersion: store.dataVersion,
      requests: sessions.length,
      lookAheadReads: 0,
      trades: [],
      pnl: 0,
      maxDrawdown: 0,
    });
    expect(report.equity).toHaveLength(sessions.length);
    // A live chain bills 1 credit per contract: what the strategy's requests would have cost.
    expect(report.creditsByPart.strategy).toBeGreaterThan(sessions.length);
  });

  it("refuses a strategy's look at its own session's close before the close, and counts it in the report", async () => {
    const refused: string[] = [];
    const report = await backtest({
      store,
      from: '2020-03-16',
      to: '2020-03-18',
      at: '15:45',
      strategy: {
        async onSession({ view, session }) {
          try {
            await view.options.chain('SPY', { date: session, dte: 30 });
          } catch (error) {
            if (error instanceof LookAheadError) refused.push(error.fields.map((f) => f.field).join(','));
            else throw error;
          }
          return [];
        },
      },
    });
    expect(refused).toHaveLength(3);
    expect(refused[0]).toContain('bid');
    expect(report.lookAheadReads).toBe(3);
  });

  it('fills at the decision quote, marks every session and books commissions', async () => {
    let symbol = '';
    let quoted: { bid: number; ask: number } | undefined;
    const report = await backtest({
      store,
      from: '2020-03-02',
      to: '2020-03-06',
      fill: 'bid-ask',
      commission: { option: 1 },
      strategy: {
        async onSession({ view, positions, session }) {
          if (session !== '2020-03-02' || positions.length > 0) return [];
          const chain = await view.options.chain('SPY', { dte: 30, side: 'put', strikeLimit: 1 });
          symbol = chain.columns.optionSymbol[0]!;
          quoted = { bid: chain.columns.bid[0]!, ask: chain.columns.ask[0]! };
          return [{ symbol, quantity: -2, tag: 'open' }];
        },
      },
    });
    const [trade] = report.trades;
    expect(trade).toMatchObject({
      session: '2020-03-02',
      symbol,
      quantity: -2,
      price: quoted!.bid,
      commission: 2,
    });
    expect(trade!.cashFlow).toBeCloseTo(quoted!.bid * 200 - 2, 6);
    expect(report.finalPositions).toMatchObject([{ symbol, quantity: -2 }]);
    // The sale's proceeds are in the cash from its session on; the short puts are marked each session.
    expect(report.equity[0]!.cash).toBeCloseTo(report.startingCash + trade!.cashFlow, 6);
    expect(new Set(report.equity.map((p) => p.positionsValue)).size).toBeGreaterThan(1);
    expect(report.creditsByPart.runner).toBeGreaterThan(0);
  });

  it('rejects orders it cannot fill, and says why', async () => {
    const report = await backtest({
      store,
      from: '2020-03-02',
      to: '2020-03-02',
      strategy: {
        onSession: () => [
          { symbol: 'SPY990101P00100000', quantity: 1 },
          { symbol: 'SPY200417P00240000', quantity: 0.5 },
          { symbol: 'SPY200221P00300000', quantity: 1 },
          null as never,
          { legs: [] },
          {
            legs: [
              { symbol: 'SPY200417P00240000', quantity: 1 },
              { symbol: 'SPY200417P00240000', quantity: -1 },
            ],
          },
        ],
      },
    });
    expect(report.trades).toEqual([]);
    expect(report.rejected.map((r) => r.reason)).toEqual([
      'the store lists no such contract',
      'an order needs a symbol and a non-zero whole quantity',
      'the contract has expired',
      'an order needs a symbol and a non-zero whole quantity',
      'a combo order needs at least one leg',
      'a combo order names a symbol twice',
    ]);
  });

  it('settles an AM-settled SPX monthly at the expiration session, before its decision, with a warning', async () => {
    let opened = '';
    const report: BacktestReport = await backtest({
      store,
      from: '2020-02-24',
      to: '2020-03-23',
      strategy: {
        async onSession({ view, session }) {
          if (session !== '2020-02-24') return [];
          const chain = await view.options.chain('SPX', {
            expiration: '2020-03-20',
            am: true,
            side: 'put',
            strikeLimit: 1,
          });
          opened = chain.columns.optionSymbol[0]!;
          return [{ symbol: opened, quantity: 1 }];
        },
      },
    });
    const settled = report.trades.find((t) => t.reason === 'expiration');
    expect(settled).toMatchObject({ session: '2020-03-20', symbol: opened, quantity: -1 });
    expect(settled!.time).toBe(etWallToSeconds('2020-03-20', '09:30'));
    expect(report.warnings.join('\n')).toMatch(/SPX 2020-03-20: AM settlement/);
    expect(report.finalPositions).toEqual([]);
  });

  it('refuses a period or settings it cannot run', async () => {
    const strategy = { onSession: () => [] };
    await expect(backtest({ store, from: '2020-03-20', to: '2020-03-02', strategy })).rejects.toThrow(
      /after/,
    );
    await expect(backtest({ store, from: '2020-3-2', to: '2020-03-20', strategy })).rejects.toThrow(
      /date such as/,
    );
    await expect(backtest({ store, from: '2020-03-21', to: '2020-03-22', strategy })).rejects.toThrow(
      /no session/,
    );
    await expect(
      backtest({ store, from: '2020-03-02', to: '2020-03-20', strategy, fill: { spread: 3 } }),
    ).rejects.toThrow(/fraction/);
  });
});
