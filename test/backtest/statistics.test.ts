/**
 * The statistics on a hand-built curve, every expected figure worked by hand below (closed forms and
 * plain numbers), not by the code under test.
 *
 * The curve: starting cash 100, then 110, 99, 99, 110, 121 at five sessions. Daily returns
 * r = 0.1, −0.1, 0, 1/9, 0.1 (N = 5).
 *   mean r = (0.1 − 0.1 + 0 + 1/9 + 0.1) / 5 = 19/450
 *   deviations ×450: 26, −64, −19, 31, 26; squares 676 + 4096 + 361 + 961 + 676 = 6770
 *   sample variance = 6770 / 450² / 4 = 6770 / 810000, sd = √6770 / 900
 *   downside (rf 0): only −0.1 is below 0: DD = √(0.01 / 5) = √0.002
 *   drawdown: peak 110 (2nd point), trough 99 (3rd; the 4th is no deeper), back to 110 at the 5th:
 *   11 dollars, 10 %, 3 sessions from peak to recovery.
 */
import { describe, expect, it } from 'vitest';
import { computeStatistics, drawdownSeries, SESSIONS_PER_YEAR } from '../../src/backtest/statistics.js';

const sessions = ['2020-01-02', '2020-01-03', '2020-01-06', '2020-01-07', '2020-01-08'];
const equity = [110, 99, 99, 110, 121].map((value, i) => ({ session: sessions[i]!, equity: value }));

const trip = (pnl: number | null, openSession: string, closeSession: string | null) => ({
  status: closeSession === null ? ('open' as const) : ('closed' as const),
  pnl,
  openSession,
  closeSession,
});
// Held on the 2nd (a same-session trip), the 3rd and 4th, and from the 5th on (still open): 4 of 5.
const roundTrips = [
  trip(100, '2020-01-03', '2020-01-03'),
  trip(-50, '2020-01-06', '2020-01-07'),
  trip(0, '2020-01-06', '2020-01-06'),
  trip(200, '2020-01-07', '2020-01-07'),
  trip(-25, '2020-01-06', '2020-01-07'),
  trip(null, '2020-01-08', null),
];

describe('computeStatistics', () => {
  it('computes every statistic of the hand-built curve, risk-free rate 0', () => {
    const stats = computeStatistics(equity, roundTrips, { startingCash: 100, credits: 42 });
    expect(SESSIONS_PER_YEAR).toBe(252);
    expect(stats.sessions).toBe(5);
    expect(stats.startEquity).toBe(100);
    expect(stats.endEquity).toBe(121);
    expect(stats.totalReturn).toBeCloseTo(0.21, 12);
    // 5 returns = 5/252 of a year: CAGR = 1.21^(252/5) − 1 = 1.21^50.4 − 1 ≈ 14,871.455
    expect(stats.cagr).toBeCloseTo(14_871.455, 2);
    expect(stats.volatility).toBeCloseTo((Math.sqrt(6770) / 900) * Math.sqrt(252), 12); // ≈ 1.45128
    // Sharpe = (19/450) / (√6770/900) × √252 = 38 × √(252/6770) ≈ 7.33144
    expect(stats.sharpe).toBeCloseTo(38 * Math.sqrt(252 / 6770), 12);
    expect(stats.sharpe).toBeCloseTo(7.33144, 4);
    // Sortino = (19/450) / √0.002 × √252 ≈ 14.98740
    expect(stats.sortino).toBeCloseTo(14.9874, 4);
    expect(stats.maxDrawdown).toEqual({
      fraction: 0.1,
      amount: 11,
      peak: '2020-01-02',
      trough: '2020-01-03',
      recovery: '2020-01-07',
      sessions: 3,
    });
    expect(stats.calmar).toBeCloseTo(148_714.55, 0);
    // Closed P&Ls 100, −50, 0, 200, −25: wins 100 + 200, losses −50 − 25, the 0 is neither.
    expect(stats).toMatchObject({
      roundTrips: 5,
      openRoundTrips: 1,
      wins: 2,
      losses: 2,
      winRate: 0.4,
      profitFactor: 4, // 300 / 75
      averageWin: 150,
      averageLoss: -37.5,
      expectancy: 45, // 225 / 5
      timeInMarket: 0.8,
      credits: 42,
      riskFreeRate: 0,
    });
  });

  it('takes excess returns over a daily-compounded risk-free rate for Sharpe and Sortino', () => {
    const stats = computeStatistics(equity, roundTrips, { startingCash: 100, riskFreeRate: 0.05 });
    const daily = 1.05 ** (1 / 252) - 1; // ≈ 0.000193631
    // A constant shift leaves the standard deviation; the downside now holds −0.1 − rf_d and 0 − rf_d.
    expect(stats.sharpe).toBeCloseTo(((19 / 450 - daily) / (Math.sqrt(6770) / 900)) * Math.sqrt(252), 12);
    expect(stats.sharpe).toBeCloseTo(7.29782, 4);
    const downside = Math.sqrt(((0.1 + daily) ** 2 + daily ** 2) / 5);
    expect(stats.sortino).toBeCloseTo(((19 / 450 - daily) / downside) * Math.sqrt(252), 12);
    expect(stats.sortino).toBeCloseTo(14.88981, 4);
    // Volatility does not depend on the rate.
    expect(stats.volatility).toBeCloseTo(1.45128, 4);
  });

  it('dates a peak at the starting cash as `start`, and an unrecovered drawdown to the last session', () => {
    const falling = [95, 90, 92].map((value, i) => ({ session: sessions[i]!, equity: value }));
    const stats = computeStatistics(falling, [], { startingCash: 100 });
    expect(stats.maxDrawdown).toEqual({
      fraction: 0.1,
      amount: 10,
      peak: 'start',
      trough: '2020-01-03',
      recovery: null,
      sessions: 3,
    });
    expect(stats.totalReturn).toBeCloseTo(-0.08, 12);
  });

  it('gives null, never NaN or Infinity, for what a flat or empty run cannot define', () => {
    const flat = sessions.map((session) => ({ session, equity: 100 }));
    const stats = computeStatistics(flat, [], { startingCash: 100 });
    expect(stats).toMatchObject({
      totalReturn: 0,
      cagr: 0,
      volatility: 0,
      sharpe: null,
      sortino: null,
      calmar: null,
      winRate: null,
      profitFactor: null,
      averageWin: null,
      averageLoss: null,
      expectancy: null,
      timeInMarket: 0,
      credits: null,
    });
    expect(JSON.parse(JSON.stringify(stats))).toEqual(stats);
    const empty = computeStatistics([], []);
    expect(empty).toMatchObject({ sessions: 0, cagr: null, volatility: null, timeInMarket: null });
  });

  it('gives the drawdown series from the running peak, the starting cash a peak before the first point', () => {
    const series = drawdownSeries([110, 99, 99, 110, 121], 100);
    for (const [i, expected] of [0, -0.1, -0.1, 0, 0].entries()) expect(series[i]).toBeCloseTo(expected, 12);
    const falling = drawdownSeries([95, 90, 92], 100);
    expect(falling[0]).toBeCloseTo(-0.05, 12);
    expect(falling[1]).toBeCloseTo(-0.1, 12);
    expect(falling[2]).toBeCloseTo(-0.08, 12);
    expect(drawdownSeries([95, 90, 92])).toEqual([0, 90 / 95 - 1, 92 / 95 - 1]);
    expect(drawdownSeries([0, -5])).toEqual([null, null]);
  });

  it('refuses a risk-free rate that is not a rate', () => {
    expect(() => computeStatistics(equity, [], { riskFreeRate: Number.NaN })).toThrow(/riskFreeRate/);
  });

  it('counts time in market over many overlapping trips as a session-by-session check does', () => {
    // A seeded walk (no Math.random): 400 sessions, 60 trips of 0–5 sessions, some still open.
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const days = Array.from(
      { length: 400 },
      (_, i) =>
        `2020-${String(1 + Math.floor(i / 28)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`,
    );
    const trips = Array.from({ length: 60 }, () => {
      const open = next(400);
      const close = next(10) === 0 ? null : days[Math.min(399, open + next(6))]!;
      return trip(0, days[open]!, close);
    });
    const held = days.filter((day) =>
      trips.some((t) => t.openSession <= day && day <= (t.closeSession ?? days.at(-1)!)),
    ).length;
    const stats = computeStatistics(
      days.map((session) => ({ session, equity: 100 })),
      trips,
    );
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThan(400);
    expect(stats.timeInMarket).toBe(held / 400);
  });
});
