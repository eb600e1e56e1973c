/**
 * Round trips from hand-written trades: a combo opened by one order and closed leg by leg, a partial
 * close, a closing fill shared by two lots, a flip, an assignment's shares, and a split.
 */
import { describe, expect, it } from 'vitest';
import { type RoundTripTrade, roundTripsOf } from '../../src/backtest/round-trips.js';

const SHORT = 'SPY200417P00240000';
const LONG = 'SPY200417P00235000';

/** A fill: cash flow = −quantity × price × multiplier − commission (the runner's rule). */
function fill(
  session: string,
  symbol: string,
  quantity: number,
  price: number,
  orderId: number | null,
  reason: RoundTripTrade['reason'] = 'order',
  commission = 0.65 * Math.abs(quantity),
): RoundTripTrade {
  const multiplier = symbol.length > 10 ? 100 : 1;
  const cashFlow = Math.round((-quantity * price * multiplier - commission) * 100) / 100;
  return {
    session,
    time: Date.parse(`${session}T20:45:00Z`) / 1000,
    symbol,
    quantity,
    price,
    commission,
    cashFlow,
    reason,
    orderId,
  };
}

describe('roundTripsOf', () => {
  it('makes the legs of one order one round trip, closed when its last leg closes', () => {
    const trips = roundTripsOf([
      fill('2020-03-02', SHORT, -1, 5, 1), // +500 − 0.65
      fill('2020-03-02', LONG, 1, 3, 1), // −300 − 0.65
      fill('2020-03-09', SHORT, 1, 2, 2), // buys back the short leg: −200 − 0.65
      fill('2020-04-17', LONG, -1, 0, null, 'expiration', 0), // the long leg expires worthless
    ]);
    expect(trips).toEqual([
      {
        id: 1,
        orderId: 1,
        legs: [
          { symbol: SHORT, quantity: -1 },
          { symbol: LONG, quantity: 1 },
        ],
        openSession: '2020-03-02',
        openTime: Date.parse('2020-03-02T20:45:00Z') / 1000,
        closeSession: '2020-04-17',
        closeTime: Date.parse('2020-04-17T20:45:00Z') / 1000,
        status: 'closed',
        closedBy: ['order', 'expiration'],
        entryCashFlow: 198.7, // 499.35 − 300.65
        exitCashFlow: -200.65,
        commissions: 1.95,
        pnl: -1.95, // 200 credit, 200 to close, 3 × 0.65 commissions
        trades: 4,
      },
    ]);
  });

  it('keeps a round trip open through a partial close, and shares a closing fill between lots', () => {
    const trips = roundTripsOf([
      fill('2020-03-02', SHORT, -2, 5, 1, 'order', 0), // lot 1: +1000
      fill('2020-03-03', SHORT, -1, 6, 2, 'order', 0), // lot 2 (another order): +600
      fill('2020-03-04', SHORT, 1, 4, 3, 'order', 0), // closes 1 of lot 1: −400
      fill('2020-03-05', SHORT, 2, 3, 4, 'order', 3), // 1 closes lot 1, 1 lot 2: −600 − 3, half each
    ]);
    expect(
      trips.map((t) => [t.id, t.status, t.closeSession, t.entryCashFlow, t.exitCashFlow, t.pnl]),
    ).toEqual([
      [1, 'closed', '2020-03-05', 1000, -701.5, 298.5], // 1000 − 400 − 301.5
      [2, 'closed', '2020-03-05', 600, -301.5, 298.5],
    ]);
    const partial = roundTripsOf([
      fill('2020-03-02', SHORT, -2, 5, 1, 'order', 0),
      fill('2020-03-04', SHORT, 1, 4, 3, 'order', 0),
    ]);
    expect(partial).toMatchObject([{ status: 'open', closeSession: null, pnl: null, exitCashFlow: -400 }]);
  });

  it('opens a new round trip with what a fill leaves beyond the lots it closes (a flip)', () => {
    const trips = roundTripsOf([
      fill('2020-03-02', 'SPY', 100, 300, 1, 'order', 0),
      fill('2020-03-03', 'SPY', -150, 310, 2, 'order', 0), // sells 100 held and 50 short
    ]);
    expect(trips.map((t) => [t.status, t.legs, t.entryCashFlow, t.exitCashFlow, t.pnl])).toEqual([
      ['closed', [{ symbol: 'SPY', quantity: 100 }], -30000, 31000, 1000],
      ['open', [{ symbol: 'SPY', quantity: -50 }], 15500, 0, null],
    ]);
  });

  it("closes an assigned put at its intrinsic value and opens the delivered shares' own round trip", () => {
    const trips = roundTripsOf([
      fill('2020-03-02', SHORT, -1, 5, 1, 'order', 0), // +500
      fill('2020-04-17', SHORT, 1, 10, null, 'assignment', 0), // intrinsic 10 at 230: −1000
      fill('2020-04-17', 'SPY', 100, 230, null, 'assignment', 0), // −23000
      fill('2020-04-20', 'SPY', -100, 232, 2, 'order', 0), // +23200
    ]);
    expect(trips.map((t) => [t.orderId, t.legs[0]!.symbol, t.closedBy, t.pnl])).toEqual([
      [1, SHORT, ['assignment'], -500],
      [null, 'SPY', ['order'], 200],
    ]);
  });

  it('carries a round trip through a split, renaming and scaling its leg', () => {
    const old = 'AAPL200918C00400000';
    const adjusted = 'AAPL200918C00100000';
    const trips = roundTripsOf([
      fill('2020-08-20', old, -1, 20, 1, 'order', 0), // +2000
      { ...fill('2020-08-31', old, 1, 20, null, 'split', 0), cashFlow: 0 },
      { ...fill('2020-08-31', adjusted, -4, 5, null, 'split', 0), cashFlow: 0 },
      fill('2020-09-01', adjusted, 4, 3, 2, 'order', 0), // −1200
    ]);
    expect(trips).toMatchObject([
      { legs: [{ symbol: adjusted, quantity: -4 }], status: 'closed', pnl: 800, trades: 4 },
    ]);
  });

  it('treats each fill as its own order when trades carry no order id', () => {
    const trips = roundTripsOf(
      [fill('2020-03-02', SHORT, -1, 5, 1), fill('2020-03-02', LONG, 1, 3, 1)].map(
        ({ orderId: _, ...trade }) => trade,
      ),
    );
    expect(trips.map((t) => t.legs.length)).toEqual([1, 1]);
  });
});
