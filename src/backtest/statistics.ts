/**
 * The statistics a quant reads first, as pure functions of a run's daily equity curve and its round
 * trips. Conventions, in one place:
 *
 * - **The curve.** `E_0` is the starting cash (when given; else the first point's equity), `E_1 … E_n`
 *   the equity at each session's decision instant. Daily returns are `r_i = E_i / E_{i−1} − 1`,
 *   i = 1…n (n returns with a starting cash, n − 1 without).
 * - **Year.** 252 sessions. The period is `N / 252` years, N the number of daily returns.
 * - **Total return** `E_n / E_0 − 1`; **CAGR** `(E_n / E_0)^(252 / N) − 1` (null with no return, or a
 *   final equity ≤ 0).
 * - **Risk-free rate.** An annual rate `rf` (default 0), compounded daily:
 *   `rf_d = (1 + rf)^(1/252) − 1`; excess returns `x_i = r_i − rf_d`.
 * - **Volatility** the sample standard deviation (divisor N − 1) of the daily returns × √252.
 * - **Sharpe** `mean(x) / sd(x) × √252`, sd the sample standard deviation of the excess returns
 *   (null when it is 0 or N < 2).
 * - **Sortino** `mean(x) / DD × √252`, with the downside deviation
 *   `DD = √( Σ min(0, x_i)² / N )`: every return counts in the divisor (N, not only the losing ones),
 *   the target being the risk-free rate (null when no return falls below it).
 * - **Max drawdown** the largest fall from a running peak as a fraction of that peak, with that same
 *   episode's dollars, its peak, trough and recovery (the first point back at or above the peak; null
 *   if never) and its duration in sessions from peak to recovery (to the last session if not
 *   recovered). The starting cash is a point before the first session: a peak there is dated `start`.
 * - **Calmar** `CAGR / max drawdown fraction` (null without a drawdown or a CAGR).
 * - **Round trips** count only closed ones (see `round-trips.ts`): a win has P&L > 0, a loss P&L < 0
 *   (a P&L of 0 is neither, but counts in the win rate's divisor). Win rate `wins / closed`; profit
 *   factor `Σ wins / |Σ losses|` (null without a loss); average win and average loss (negative) are
 *   means over wins and over losses; expectancy the mean P&L of a closed round trip.
 * - **Time in market** the fraction of sessions in which some round trip was open at some moment:
 *   `openSession ≤ session ≤ closeSession` (or the last session, if still open).
 * - **Credits** what the run's requests would have cost on the service, passed through.
 *
 * Ratios that cannot be computed are null (never NaN or Infinity, which JSON cannot hold).
 */
import { roundCash } from './fills.js';
import type { BacktestStatistics, Drawdown, EquityPoint, RoundTrip } from './types.js';

/** Sessions per year, for annualising daily figures. */
export const SESSIONS_PER_YEAR = 252;

/** The fields of an equity point the statistics read (a subset of the runner's `EquityPoint`). */
export type StatisticsEquityPoint = Pick<EquityPoint, 'session' | 'equity'>;

/** The fields of a round trip the statistics read (a subset of `RoundTrip`). */
export type StatisticsRoundTrip = Pick<RoundTrip, 'status' | 'pnl' | 'openSession' | 'closeSession'>;

export type StatisticsOptions = {
  /** Annual risk-free rate as a fraction (0.02 = 2 %), default 0. */
  readonly riskFreeRate?: number;
  /** The equity before the first session (the run's starting cash); default the first point's equity. */
  readonly startingCash?: number;
  /** The credits the run's requests would have cost (the report's `credits`); default null. */
  readonly credits?: number;
};

export type { BacktestStatistics, Drawdown } from './types.js';

/** The statistics of a run (see the module's conventions). */
export function computeStatistics(
  equity: readonly StatisticsEquityPoint[],
  roundTrips: readonly StatisticsRoundTrip[],
  options: StatisticsOptions = {},
): BacktestStatistics {
  const riskFreeRate = options.riskFreeRate ?? 0;
  if (!Number.isFinite(riskFreeRate) || riskFreeRate <= -1) {
    throw new RangeError(`riskFreeRate must be an annual rate above -1, such as 0.02, not ${riskFreeRate}`);
  }
  const start = options.startingCash ?? equity[0]?.equity ?? 0;
  const values = [
    ...(options.startingCash === undefined ? [] : [options.startingCash]),
    ...equity.map((p) => p.equity),
  ];
  const labels = [...(options.startingCash === undefined ? [] : ['start']), ...equity.map((p) => p.session)];
  const end = values.at(-1) ?? start;
  const returns = dailyReturns(values);
  const years = returns.length / SESSIONS_PER_YEAR;
  const totalReturn = start > 0 ? end / start - 1 : null;
  const cagr = totalReturn !== null && years > 0 && end > 0 ? (end / start) ** (1 / years) - 1 : null;

  const dailyRiskFree = (1 + riskFreeRate) ** (1 / SESSIONS_PER_YEAR) - 1;
  const excess = returns.map((r) => r - dailyRiskFree);
  const sd = sampleStdev(returns);
  const excessSd = sampleStdev(excess);
  const meanExcess = mean(excess);
  const downside =
    excess.length > 0
      ? Math.sqrt(excess.reduce((sum, x) => sum + Math.min(0, x) ** 2, 0) / excess.length)
      : 0;
  const annual = Math.sqrt(SESSIONS_PER_YEAR);

  const maxDrawdown = largestDrawdown(values, labels);
  const closed = roundTrips.filter((t) => t.status === 'closed' && t.pnl !== null).map((t) => t.pnl!);
  const wins = closed.filter((pnl) => pnl > 0);
  const losses = closed.filter((pnl) => pnl < 0);
  const grossWin = wins.reduce((a, b) => a + b, 0);
  const grossLoss = losses.reduce((a, b) => a + b, 0);

  return {
    sessions: equity.length,
    startEquity: start,
    endEquity: end,
    totalReturn,
    cagr,
    volatility: sd === null ? null : sd * annual,
    riskFreeRate,
    sharpe:
      excessSd === null || excessSd === 0 || meanExcess === null ? null : (meanExcess / excessSd) * annual,
    sortino: downside === 0 || meanExcess === null ? null : (meanExcess / downside) * annual,
    maxDrawdown,
    calmar: cagr === null || maxDrawdown.fraction === 0 ? null : cagr / maxDrawdown.fraction,
    roundTrips: closed.length,
    openRoundTrips: roundTrips.filter((t) => t.status === 'open').length,
    wins: wins.length,
    losses: losses.length,
    winRate: closed.length === 0 ? null : wins.length / closed.length,
    profitFactor: losses.length === 0 ? null : grossWin / -grossLoss,
    averageWin: mean(wins),
    averageLoss: mean(losses),
    expectancy: mean(closed),
    timeInMarket: timeInMarket(
      equity.map((p) => p.session),
      roundTrips,
    ),
    credits: options.credits ?? null,
  };
}

/** `E_i / E_{i−1} − 1` for consecutive values (a step from a value ≤ 0 has no return and is skipped). */
export function dailyReturns(values: readonly number[]): number[] {
  const returns: number[] = [];
  for (let i = 1; i < values.length; i++) {
    if (values[i - 1]! > 0) returns.push(values[i]! / values[i - 1]! - 1);
  }
  return returns;
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/** The sample standard deviation (divisor n − 1); null under two values. */
function sampleStdev(values: readonly number[]): number | null {
  const m = mean(values);
  if (m === null || values.length < 2) return null;
  return Math.sqrt(values.reduce((sum, v) => sum + (v - m) ** 2, 0) / (values.length - 1));
}

/** The deepest fall from a running peak, as a fraction of the peak, with its dates and duration. */
export function largestDrawdown(values: readonly number[], labels: readonly string[]): Drawdown {
  let worst: Drawdown = { fraction: 0, amount: 0, peak: null, trough: null, recovery: null, sessions: 0 };
  let worstPeakIndex = -1;
  let troughIndex = -1;
  let peakIndex = 0;
  for (let i = 0; i < values.length; i++) {
    if (values[i]! >= values[peakIndex]!) peakIndex = i;
    const peak = values[peakIndex]!;
    const fall = peak - values[i]!;
    if (peak > 0 && fall / peak > worst.fraction) {
      worst = { ...worst, fraction: fall / peak, amount: fall, peak: labels[peakIndex]!, trough: labels[i]! };
      worstPeakIndex = peakIndex;
      troughIndex = i;
    }
  }
  if (worstPeakIndex === -1) return worst;
  const peakValue = values[worstPeakIndex]!;
  let recoveryIndex = -1;
  for (let i = troughIndex + 1; i < values.length; i++) {
    if (values[i]! >= peakValue) {
      recoveryIndex = i;
      break;
    }
  }
  return {
    ...worst,
    amount: roundCash(worst.amount),
    recovery: recoveryIndex === -1 ? null : labels[recoveryIndex]!,
    sessions: (recoveryIndex === -1 ? values.length - 1 : recoveryIndex) - worstPeakIndex,
  };
}

/**
 * Each value's fall below the running peak, as a fraction of that peak (0 at a peak, −0.1 ten percent
 * below it); `start` (the starting cash) is a peak before the first value. Null where the peak is ≤ 0.
 */
export function drawdownSeries(values: readonly number[], start?: number): (number | null)[] {
  let peak = start ?? Number.NEGATIVE_INFINITY;
  return values.map((value) => {
    peak = Math.max(peak, value);
    return peak > 0 ? value / peak - 1 : null;
  });
}

/**
 * The fraction of sessions in which a round trip was open at some moment: one sweep over the sessions
 * (in order) with the trips in order of opening, keeping the latest close among those opened so far
 * (a session is held when that close is not before it), rather than every trip asked at every session.
 */
function timeInMarket(
  sessions: readonly string[],
  roundTrips: readonly StatisticsRoundTrip[],
): number | null {
  if (sessions.length === 0) return null;
  const last = sessions.at(-1)!;
  const trips = roundTrips
    .map((t) => ({ open: t.openSession, close: t.closeSession ?? last }))
    .sort((a, b) => (a.open < b.open ? -1 : a.open > b.open ? 1 : 0));
  let next = 0;
  let heldThrough = '';
  let held = 0;
  for (const session of sessions) {
    for (; next < trips.length && trips[next]!.open <= session; next++) {
      if (trips[next]!.close > heldThrough) heldThrough = trips[next]!.close;
    }
    if (heldThrough >= session) held++;
  }
  return held / sessions.length;
}
