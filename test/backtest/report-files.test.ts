/**
 * The report files of a real run on the sample store, written to a temp directory and read back: the
 * JSON, the three CSV files (their columns and rows), and a self-contained HTML page with its charts.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  formatStatisticsTable,
  REPORT_FILES,
  withStatistics,
  writeReportFiles,
} from '../../src/backtest/report-files.js';
import { backtest, defineStrategy } from '../../src/backtest/runner.js';
import type { BacktestReport } from '../../src/backtest/types.js';
import { openStore, type Store } from '../../src/library/store.js';
import { CLI_BIN, ensureBuilt, runCli, runCommand } from '../helpers/build.js';
import { REPO_ROOT } from '../helpers/paths.js';

const STRATEGY = 'test/fixtures/strategies/sweep-put.ts';
const cli = (...args: string[]) =>
  runCli(['backtest', STRATEGY, '--store', 'data/sample', ...args], {
    cwd: REPO_ROOT,
    timeoutMs: 120_000,
  });

let store: Store;
let dir: string;
let report: BacktestReport;

beforeAll(async () => {
  store = await openStore('data/sample');
  dir = await mkdtemp(path.join(tmpdir(), 'pitchain-report-'));
  // Sells a 30-day put on the first session, buys it back on the fifth: one closed round trip.
  let sessions = 0;
  let sold: string | undefined;
  report = await backtest({
    store,
    from: '2020-02-03',
    to: '2020-02-14',
    strategy: defineStrategy({
      name: 'report, files',
      onStart() {
        sessions = 0;
        sold = undefined;
      },
      async onSession({ view }) {
        sessions++;
        if (sessions === 1) {
          const chain = await view.options.chain('SPY', { dte: 30, side: 'put', delta: '-0.3' });
          sold = chain.columns.optionSymbol[0]!;
          return [{ symbol: sold, quantity: -1, tag: 'open, "short"' }];
        }
        if (sessions === 5 && sold !== undefined) return [{ symbol: sold, quantity: 1, tag: 'close' }];
        return [];
      },
    }),
  });
}, 60_000);
afterAll(async () => {
  store.close();
  await rm(dir, { recursive: true, force: true });
});

/** Parses RFC 4180 CSV (quoted cells with doubled quotes), as a spreadsheet would read it. */
function parseCsv(text: string): Record<string, string>[] {
  const records: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n') {
      row.push(cell);
      records.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  const [header, ...rows] = records;
  return rows.map((r) => Object.fromEntries(header!.map((name, i) => [name, r[i]!])));
}

describe('writeReportFiles', () => {
  it('writes the five files, and the JSON holds the report with its statistics and round trips', async () => {
    const written = await writeReportFiles(report, dir, { riskFreeRate: 0.02 });
    expect(written.map((file) => path.basename(file))).toEqual([...REPORT_FILES]);
    const json = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8'));
    expect(json.pnl).toBe(report.pnl);
    expect(json.trades).toHaveLength(2);
    expect(json.statistics.riskFreeRate).toBe(0.02);
    expect(json.statistics.roundTrips).toBe(1);
    expect(json.roundTrips).toHaveLength(1);
    // The round trip's P&L is the two fills' cash flows, commissions included.
    expect(json.roundTrips[0].pnl).toBeCloseTo(report.trades[0]!.cashFlow + report.trades[1]!.cashFlow, 2);
  });

  it('writes trades, round trips and equity as CSV with named columns, one row each', async () => {
    const trades = parseCsv(await readFile(path.join(dir, 'trades.csv'), 'utf8'));
    expect(Object.keys(trades[0]!)).toEqual([
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
    ]);
    expect(
      trades.map((t) => [t.session, t.time, t.symbol, Number(t.quantity), Number(t.price), t.tag]),
    ).toEqual(
      report.trades.map((t) => [
        t.session,
        // 16:00 Eastern (the default decision time), in winter EST (−05:00)
        `${t.session}T16:00:00-05:00`,
        t.symbol,
        t.quantity,
        t.price,
        t.tag,
      ]),
    );
    expect(trades[0]!.tag).toBe('open, "short"');

    const trips = parseCsv(await readFile(path.join(dir, 'round-trips.csv'), 'utf8'));
    expect(trips).toEqual([
      expect.objectContaining({
        id: '1',
        status: 'closed',
        legs: `-1 ${report.trades[0]!.symbol}`,
        openSession: '2020-02-03',
        closeSession: '2020-02-07',
        closedBy: 'order',
      }),
    ]);

    const equity = parseCsv(await readFile(path.join(dir, 'equity.csv'), 'utf8'));
    expect(Object.keys(equity[0]!)).toEqual([
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
    ]);
    expect(equity).toHaveLength(report.equity.length);
    equity.forEach((row, i) => {
      const point = report.equity[i]!;
      expect([row.session, Number(row.equity), Number(row.cash), Number(row.positionsValue)]).toEqual([
        point.session,
        point.equity,
        point.cash,
        point.positionsValue,
      ]);
      expect(Number(row.drawdown)).toBeLessThanOrEqual(0);
    });
    // The deepest point of the column is the statistics' max drawdown (both measured from the starting cash).
    const json = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8'));
    expect(Math.min(...equity.map((row) => Number(row.drawdown)))).toBeCloseTo(
      -json.statistics.maxDrawdown.fraction,
      6,
    );
  });

  it('writes a self-contained HTML page: statistics, three SVG charts, no external resource', async () => {
    const html = await readFile(path.join(dir, 'report.html'), 'utf8');
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('<h1>report, files</h1>');
    expect(html).toContain('Sharpe (rf 2.00%)');
    for (const title of ['Equity', 'Drawdown', 'Exposure']) expect(html).toContain(`<h2>${title}</h2>`);
    expect(html.match(/<svg[\s>]/g)?.length).toBeGreaterThanOrEqual(3);
    // Each chart draws its line or area: a path with data, not an empty frame.
    expect(html.match(/<path[^>]* d="M[^"]{40,}"/g)?.length).toBeGreaterThanOrEqual(3);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import/i);
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/url\(\s*["']?(https?:)?\/\//i);
  });

  it("keeps a report's own statistics unless another risk-free rate is asked", () => {
    const first = withStatistics(report);
    expect(first.statistics.riskFreeRate).toBe(0);
    expect(withStatistics(first).statistics).toBe(first.statistics);
    expect(withStatistics(first, { riskFreeRate: 0 }).statistics).toBe(first.statistics);
    const again = withStatistics(first, { riskFreeRate: 0.05 });
    expect(again.statistics.riskFreeRate).toBe(0.05);
    expect(again.statistics.sharpe).not.toBe(first.statistics.sharpe);
    expect(again.roundTrips).toBe(first.roundTrips);
  });

  it('formats the statistics as an aligned table for the terminal', async () => {
    const json = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8'));
    const table = formatStatisticsTable(json.statistics);
    const lines = table.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^sessions\s+10$/);
    expect(table).toMatch(/^round trips\s+1 closed$/m);
    expect(table).toMatch(/^win rate\s+(100\.00|0\.00)% \((1 won, 0|0 won, 1) lost\)$/m);
    // Values start in one column.
    const column = lines[0]!.search(/10$/);
    for (const line of lines) expect(line.slice(column - 2, column)).toBe('  ');
  });
});

describe('pitchain backtest --out', () => {
  beforeAll(async () => {
    await ensureBuilt();
  }, 300_000);

  it('prints the statistics table under the report and writes the report files', async () => {
    const out = path.join(dir, 'cli');
    const { code, stdout, stderr } = await cli(
      '--from',
      '2020-01-02',
      '--to',
      '2020-01-31',
      '--out',
      out,
      '--risk-free',
      '0.02',
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Sharpe \(rf 2\.00%\)\s+-?\d+\.\d\d$/m);
    expect(stdout).toMatch(/^round trips\s+\d+ closed/m);
    expect(stderr).toContain('report.html');
    const json = JSON.parse(await readFile(path.join(out, 'report.json'), 'utf8'));
    expect(json.statistics.riskFreeRate).toBe(0.02);
    expect(await readFile(path.join(out, 'equity.csv'), 'utf8')).toMatch(
      /^session,equity,cash,positionsValue,marginUsed,/,
    );
  }, 120_000);

  it('writes the data files and explains what report.html needs where the charting packages are missing', async () => {
    const out = path.join(dir, 'without-plot');
    const { code, stderr } = await runCommand(
      process.execPath,
      [
        '--import',
        './test/fixtures/without-plot.mjs',
        CLI_BIN,
        'backtest',
        STRATEGY,
        '--store',
        'data/sample',
        '--from',
        '2020-01-02',
        '--to',
        '2020-01-10',
        '--out',
        out,
      ],
      { cwd: REPO_ROOT, timeoutMs: 120_000 },
    );
    expect(code).toBe(2);
    expect(stderr).toContain('npm install @observablehq/plot linkedom');
    expect(stderr).not.toMatch(/\n\s+at /); // no stack
    expect((await readdir(out)).sort()).toEqual([
      'equity.csv',
      'report.json',
      'round-trips.csv',
      'trades.csv',
    ]);
  }, 120_000);

  it('refuses a risk-free rate that is not a number, or a sweep flag without --grid, with exit 2', async () => {
    const rate = await cli('--from', '2020-01-02', '--to', '2020-01-31', '--risk-free', 'two');
    expect([rate.code, rate.stderr]).toEqual([
      2,
      "pitchain: --risk-free takes an annual rate such as 0.02, not 'two'\n",
    ]);
    const sort = await cli('--from', '2020-01-02', '--to', '2020-01-31', '--sort', 'pnl');
    expect(sort.code).toBe(2);
    expect(sort.stderr).toContain("--sort applies to a sweep: add --grid, e.g. --grid 'dte=30,45'");
  }, 120_000);
});
