/**
 * What `pitchain backtest` adds around a run: the statistics table, `--out` report files, and `--grid`
 * parameter sweeps (with `--sort`, `--workers`, `--risk-free`).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { formatStatisticsTable, writeReportFiles } from '../backtest/report-files.js';
import {
  formatSweepTable,
  parseGrid,
  SWEEP_SORT_KEYS,
  type SweepRunOptions,
  type SweepSortKey,
  sweep,
  sweepCsv,
} from '../backtest/sweep.js';
import type { BacktestReport } from '../backtest/types.js';
import { UsageError } from '../errors.js';
import { startProgress } from './progress.js';

export type ReportFlags = {
  out?: string;
  grid?: string;
  sort?: string;
  workers?: string;
  riskFree?: string;
  json?: boolean;
};

/** Declares the report and sweep flags on the `backtest` command. */
export function addReportOptions(command: Command): Command {
  return command
    .option('--out <dir>', 'write report.json, trades.csv, round-trips.csv, equity.csv and report.html there')
    .option('--risk-free <rate>', 'annual risk-free rate for Sharpe and Sortino, e.g. 0.02 (default 0)')
    .option(
      '--grid <spec>',
      "run every combination of strategy parameters on worker threads, e.g. 'dte=30,45 delta=0.2,0.3'",
    )
    .option('--sort <statistic>', `sort a sweep's results by ${SWEEP_SORT_KEYS.join(', ')} (default sharpe)`)
    .option('--workers <n>', "a sweep's worker threads (default: one per 1.5 cores, at least one)");
}

/** The risk-free rate the flags state, refused unless it reads as an annual rate (a run's `riskFreeRate`). */
export function riskFreeOf(flags: ReportFlags): number | undefined {
  if (flags.riskFree === undefined) return undefined;
  const rate = Number(flags.riskFree);
  if (flags.riskFree.trim() === '' || !Number.isFinite(rate) || rate <= -1) {
    throw new UsageError(`--risk-free takes an annual rate such as 0.02, not '${flags.riskFree}'`);
  }
  return rate;
}

/** Checks the sweep flags before anything runs (a bad flag should not wait for a whole run; --risk-free is a run option). */
export function checkReportFlags(flags: ReportFlags): void {
  if (flags.grid === undefined) {
    for (const flag of ['sort', 'workers'] as const) {
      if (flags[flag] !== undefined) {
        throw new UsageError(`--${flag} applies to a sweep: add --grid, e.g. --grid 'dte=30,45' --${flag} …`);
      }
    }
    return;
  }
  parseGrid(flags.grid);
  sortOf(flags);
  workersOf(flags);
}

function sortOf(flags: ReportFlags): SweepSortKey {
  const sort = flags.sort ?? 'sharpe';
  if (!(SWEEP_SORT_KEYS as readonly string[]).includes(sort)) {
    throw new UsageError(`--sort takes one of ${SWEEP_SORT_KEYS.join(', ')}, not '${sort}'`);
  }
  return sort as SweepSortKey;
}

function workersOf(flags: ReportFlags): number | undefined {
  if (flags.workers === undefined) return undefined;
  const workers = Number(flags.workers);
  if (!/^\d+$/.test(flags.workers) || workers < 1) {
    throw new UsageError(`--workers takes a whole number from 1, such as 2, not '${flags.workers}'`);
  }
  return workers;
}

/**
 * After a single run: the statistics table under the report (not with --json), and the files of --out.
 * The run took --risk-free as its `riskFreeRate`, so the report's statistics are the ones to show.
 */
export async function finishRun(report: BacktestReport, flags: ReportFlags): Promise<string> {
  if (flags.out !== undefined) {
    const written = await writeReportFiles(report, path.resolve(flags.out));
    process.stderr.write(`wrote ${written.map((file) => path.basename(file)).join(', ')} in ${flags.out}\n`);
  }
  if (flags.json) return '';
  return `\n${formatStatisticsTable(report.statistics)}`;
}

/** `--grid`: the sweep (`run` holds --risk-free), with a progress bar, its table (or JSON), and `sweep.csv` in --out. */
export async function runSweepCommand(
  file: string,
  flags: ReportFlags & { store: string; from: string; to: string },
  run: SweepRunOptions,
): Promise<string> {
  const sortBy = sortOf(flags);
  const workers = workersOf(flags);
  const progress = startProgress('sweep', 0, 'runs');
  let results: Awaited<ReturnType<typeof sweep>>;
  try {
    results = await sweep({
      ...run,
      strategy: file,
      grid: flags.grid!,
      store: flags.store,
      from: flags.from,
      to: flags.to,
      sortBy,
      ...(workers === undefined ? {} : { workers }),
      onProgress: (done, total) => progress.update(done, total),
    });
  } finally {
    progress.stop();
  }
  if (flags.out !== undefined) {
    await mkdir(path.resolve(flags.out), { recursive: true });
    const csvFile = path.join(path.resolve(flags.out), 'sweep.csv');
    await writeFile(csvFile, sweepCsv(results));
    process.stderr.write(`wrote sweep.csv in ${flags.out}\n`);
  }
  if (flags.json) {
    const rows = results.map((r) => ({
      parameters: r.parameters,
      pnl: r.report.pnl,
      statistics: r.statistics,
    }));
    return `${JSON.stringify(rows, null, 2)}\n`;
  }
  return formatSweepTable(results, sortBy);
}
