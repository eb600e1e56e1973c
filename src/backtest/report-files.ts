/**
 * A run's report as files a quant opens elsewhere — `report.json`, `trades.csv`, `round-trips.csv`,
 * `equity.csv`, and a self-contained `report.html` whose charts (equity, drawdown, exposure) are inline
 * SVG drawn with Observable Plot on a server-side DOM (linkedom) — and the statistics as a terminal table.
 *
 * Instants in the CSV files are ISO 8601 in Eastern time with their offset (`2020-03-16T15:45:00-04:00`);
 * money is in dollars; an empty cell is a value the run does not have (e.g. margin, for a runner that
 * reports none).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { csvField } from '../csv.js';
import { UsageError } from '../errors.js';
import { formatEtTimestamp } from '../market-time/index.js';
import { type RoundTrip, type RoundTripTrade, roundTripsOf } from './round-trips.js';
import { type BacktestStatistics, computeStatistics, drawdownSeries } from './statistics.js';
import type { EquityPoint } from './types.js';

/** The fields of an equity point the files read (the runner's `EquityPoint`; margin and Greeks when it has them). */
export type ReportEquityPoint = Pick<EquityPoint, 'session' | 'cash' | 'positionsValue' | 'equity'> &
  Partial<Pick<EquityPoint, 'marginUsed' | 'greeks'>>;

/** The fields of a trade the files read (the runner's `Trade`). */
export type ReportTrade = RoundTripTrade & { readonly quoteTime?: number | null };

/** The fields of a report the files read (the runner's `BacktestReport`); the rest goes to `report.json` as is. */
export type ReportInput = {
  readonly strategy: string;
  readonly from: string;
  readonly to: string;
  readonly at: string;
  readonly dataVersion: string;
  readonly fill: string;
  readonly startingCash: number;
  readonly pnl: number;
  readonly credits: number;
  readonly trades: readonly ReportTrade[];
  readonly equity: readonly ReportEquityPoint[];
  readonly warnings?: readonly string[];
  /** Computed from the trades and the equity when absent. */
  readonly statistics?: BacktestStatistics;
  readonly roundTrips?: readonly RoundTrip[];
};

/** The files `writeReportFiles` writes, by name. */
export const REPORT_FILES = [
  'report.json',
  'trades.csv',
  'round-trips.csv',
  'equity.csv',
  'report.html',
] as const;

/**
 * A report with its statistics and round trips: computed from its trades and equity when it has none,
 * or when a risk-free rate is asked other than the one its statistics used.
 */
export function withStatistics<R extends ReportInput>(
  report: R,
  options: { riskFreeRate?: number | undefined } = {},
): R & { statistics: BacktestStatistics; roundTrips: readonly RoundTrip[] } {
  const roundTrips = report.roundTrips ?? roundTripsOf(report.trades);
  const kept =
    options.riskFreeRate === undefined || options.riskFreeRate === report.statistics?.riskFreeRate
      ? report.statistics
      : undefined;
  const statistics =
    kept ??
    computeStatistics(report.equity, roundTrips, {
      startingCash: report.startingCash,
      credits: report.credits,
      ...(options.riskFreeRate === undefined ? {} : { riskFreeRate: options.riskFreeRate }),
    });
  return { ...report, statistics, roundTrips };
}

/**
 * Writes the report's files into `dir` (created if missing; files of the same names replaced) and
 * returns their paths. The HTML, written last, needs `@observablehq/plot` and `linkedom` installed.
 */
export async function writeReportFiles(
  report: ReportInput,
  dir: string,
  options: { riskFreeRate?: number | undefined } = {},
): Promise<string[]> {
  const full = withStatistics(report, options);
  await mkdir(dir, { recursive: true });
  const contents: Record<(typeof REPORT_FILES)[number], () => string | Promise<string>> = {
    'report.json': () => `${JSON.stringify(full, null, 2)}\n`,
    'trades.csv': () => tradesCsv(full.trades),
    'round-trips.csv': () => roundTripsCsv(full.roundTrips),
    'equity.csv': () => equityCsv(full.equity, full.startingCash),
    // Last: without the charting packages the data files are still written.
    'report.html': () => reportHtml(full),
  };
  const written: string[] = [];
  for (const name of REPORT_FILES) {
    const file = path.join(dir, name);
    await writeFile(file, await contents[name]());
    written.push(file);
  }
  return written;
}

type Cell = string | number | boolean | null | undefined;

/** RFC 4180 CSV: a header line, then one line per row; cells quoted only when they must be (sweep.csv too). */
export function csv(header: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const cell = (value: Cell) => {
    const text = value === null || value === undefined ? '' : String(value);
    return csvField(text);
  };
  return `${[header, ...rows].map((row) => row.map(cell).join(',')).join('\n')}\n`;
}

const instant = (seconds: number | null | undefined) =>
  seconds === null || seconds === undefined ? '' : formatEtTimestamp(seconds);

export function tradesCsv(trades: readonly ReportTrade[]): string {
  return csv(
    [
      'session',
      'time',
      'symbol',
      'quantity',
      'price',
      'commission',
      'cashFlow',
      'reason',
      'tag',
      'orderId',
      'quoteTime',
    ],
    trades.map((t) => [
      t.session,
      instant(t.time),
      t.symbol,
      t.quantity,
      t.price,
      t.commission,
      t.cashFlow,
      t.reason,
      t.tag,
      t.orderId,
      instant(t.quoteTime),
    ]),
  );
}

export function roundTripsCsv(roundTrips: readonly RoundTrip[]): string {
  return csv(
    [
      'id',
      'orderId',
      'status',
      'legs',
      'tag',
      'openSession',
      'closeSession',
      'closedBy',
      'entryCashFlow',
      'exitCashFlow',
      'commissions',
      'pnl',
    ],
    roundTrips.map((t) => [
      t.id,
      t.orderId,
      t.status,
      t.legs.map((leg) => `${leg.quantity > 0 ? '+' : ''}${leg.quantity} ${leg.symbol}`).join(' '),
      t.tag,
      t.openSession,
      t.closeSession,
      t.closedBy.join(' '),
      t.entryCashFlow,
      t.exitCashFlow,
      t.commissions,
      t.pnl,
    ]),
  );
}

export function equityCsv(equity: readonly ReportEquityPoint[], startingCash?: number): string {
  const drawdowns = drawdownSeries(
    equity.map((p) => p.equity),
    startingCash,
  );
  return csv(
    [
      'session',
      'equity',
      'cash',
      'positionsValue',
      'marginUsed',
      'delta',
      'gamma',
      'theta',
      'vega',
      'drawdown',
    ],
    equity.map((p, i) => [
      p.session,
      p.equity,
      p.cash,
      p.positionsValue,
      p.marginUsed,
      p.greeks?.delta,
      p.greeks?.gamma,
      p.greeks?.theta,
      p.greeks?.vega,
      drawdowns[i] === null ? '' : round(drawdowns[i]!, 6),
    ]),
  );
}

/** The statistics as label and text, in the order a reader wants them (the terminal table and the HTML). */
export function statisticsRows(stats: BacktestStatistics): [label: string, value: string][] {
  const pct = (value: number | null) => (value === null ? '—' : `${(value * 100).toFixed(2)}%`);
  const num = (value: number | null, digits = 2) => (value === null ? '—' : value.toFixed(digits));
  const money = (value: number | null) =>
    value === null
      ? '—'
      : value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const dd = stats.maxDrawdown;
  const ddDates =
    dd.peak === null
      ? ''
      : ` (${dd.peak} → ${dd.trough}, ${dd.recovery === null ? 'not recovered' : `recovered ${dd.recovery}`}, ${dd.sessions} sessions)`;
  return [
    ['sessions', String(stats.sessions)],
    ['total return', pct(stats.totalReturn)],
    ['CAGR', pct(stats.cagr)],
    ['volatility (annual)', pct(stats.volatility)],
    [`Sharpe (rf ${pct(stats.riskFreeRate)})`, num(stats.sharpe)],
    ['Sortino', num(stats.sortino)],
    ['max drawdown', `${pct(dd.fraction)}, ${money(dd.amount)}${ddDates}`],
    ['Calmar', num(stats.calmar)],
    [
      'round trips',
      `${stats.roundTrips} closed${stats.openRoundTrips > 0 ? `, ${stats.openRoundTrips} open` : ''}`,
    ],
    ['win rate', `${pct(stats.winRate)} (${stats.wins} won, ${stats.losses} lost)`],
    ['profit factor', num(stats.profitFactor)],
    ['average win', money(stats.averageWin)],
    ['average loss', money(stats.averageLoss)],
    ['expectancy', `${money(stats.expectancy)} per round trip`],
    ['time in market', pct(stats.timeInMarket)],
    ['credits', stats.credits === null ? '—' : String(stats.credits)],
  ];
}

/** The statistics as an aligned two-column table for the terminal. */
export function formatStatisticsTable(stats: BacktestStatistics): string {
  const rows = statisticsRows(stats);
  const width = Math.max(...rows.map(([label]) => label.length));
  return `${rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n')}\n`;
}

/** Observable Plot and the DOM it draws into outside a browser, loaded only when a chart is drawn. */
async function loadPlot() {
  try {
    const [Plot, { parseHTML }] = await Promise.all([import('@observablehq/plot'), import('linkedom')]);
    return { Plot, document: parseHTML('<!DOCTYPE html><html><body></body></html>').document };
  } catch (error) {
    throw new UsageError(
      'report.html is drawn with Observable Plot on a server-side DOM, and this installation lacks them: ' +
        'npm install @observablehq/plot linkedom (the other report files are written without them)',
      { cause: error },
    );
  }
}

type FullReport = ReportInput & { statistics: BacktestStatistics; roundTrips: readonly RoundTrip[] };

/** The self-contained HTML page: the statistics, the charts as inline SVG, the round trips. */
export async function reportHtml(report: FullReport): Promise<string> {
  const { Plot, document } = await loadPlot();
  const date = (session: string) => new Date(`${session}T00:00:00Z`);
  const drawdowns = drawdownSeries(
    report.equity.map((p) => p.equity),
    report.startingCash,
  );
  const points = report.equity.map((p, i) => ({ ...p, date: date(p.session), drawdown: drawdowns[i] ?? 0 }));
  const chart = (options: Parameters<typeof Plot.plot>[0]) =>
    Plot.plot({ document, width: 900, height: 280, marginLeft: 70, ...options }).outerHTML;
  const charts = [
    [
      'Equity',
      chart({
        y: { label: 'equity ($)', grid: true },
        marks: [
          Plot.ruleY([report.startingCash], { stroke: '#888' }),
          Plot.lineY(points, { x: 'date', y: 'equity', stroke: '#1f77b4' }),
        ],
      }),
    ],
    [
      'Drawdown',
      chart({
        y: { label: 'drawdown', grid: true, percent: true },
        marks: [
          Plot.areaY(points, { x: 'date', y: 'drawdown', fill: '#d62728', fillOpacity: 0.4 }),
          Plot.ruleY([0]),
        ],
      }),
    ],
    [
      'Exposure',
      chart({
        y: { label: 'dollars', grid: true },
        color: { legend: true },
        marks: [
          Plot.ruleY([0], { stroke: '#888' }),
          Plot.lineY(
            points.flatMap((p) => [
              { date: p.date, value: p.positionsValue, series: 'position value' },
              ...(p.marginUsed === undefined
                ? []
                : [{ date: p.date, value: p.marginUsed, series: 'margin used' }]),
            ]),
            { x: 'date', y: 'value', stroke: 'series' },
          ),
        ],
      }),
    ],
    ...(points.some((p) => p.greeks !== undefined)
      ? [
          [
            'Portfolio delta',
            chart({
              y: { label: 'delta (shares)', grid: true },
              marks: [
                Plot.ruleY([0], { stroke: '#888' }),
                Plot.lineY(
                  points.filter((p) => p.greeks !== undefined),
                  { x: 'date', y: (p: ReportEquityPoint) => p.greeks!.delta, stroke: '#2ca02c' },
                ),
              ],
            }),
          ],
        ]
      : []),
  ];
  const rows = (cells: readonly (readonly string[])[]) =>
    cells.map((row) => `<tr>${row.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('\n');
  const money = (value: number | null) => (value === null ? '' : value.toFixed(2));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(report.strategy)} — backtest report</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 960px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-variant-numeric: tabular-nums; }
td, th { padding: 2px 10px; border-bottom: 1px solid #eee; text-align: left; }
figure { margin: 0; }
</style>
</head>
<body>
<h1>${escapeHtml(report.strategy)}</h1>
<p>Sessions ${escapeHtml(report.from)} to ${escapeHtml(report.to)} at ${escapeHtml(report.at)} ET; data version ${escapeHtml(report.dataVersion)}; fills: ${escapeHtml(report.fill)}.</p>
<h2>Statistics</h2>
<table>
${rows(statisticsRows(report.statistics))}
</table>
${(report.warnings ?? []).map((w) => `<p>warning: ${escapeHtml(w)}</p>`).join('\n')}
${charts.map(([title, svg]) => `<h2>${escapeHtml(title!)}</h2>\n${svg}`).join('\n')}
<h2>Round trips</h2>
<table>
<tr><th>#</th><th>legs</th><th>opened</th><th>closed</th><th>by</th><th>entry</th><th>exit</th><th>P&amp;L</th></tr>
${rows(
  report.roundTrips.map((t) => [
    String(t.id),
    t.legs.map((leg) => `${leg.quantity > 0 ? '+' : ''}${leg.quantity} ${leg.symbol}`).join(' '),
    t.openSession,
    t.closeSession ?? 'open',
    t.closedBy.join(' '),
    money(t.entryCashFlow),
    money(t.exitCashFlow),
    money(t.pnl),
  ]),
)}
</table>
</body>
</html>
`;
}

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
