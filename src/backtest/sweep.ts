/**
 * Parameter sweeps: every combination of a grid of strategy parameters run as its own backtest, on
 * worker threads. Each worker loads the strategy module and opens the store (read-only) once, then runs
 * the combinations it is handed one after another; every run starts from the strategy's `onStart`, as
 * any run does, so a combination's result is the one it gives alone (`backtest()` with the same options
 * and `parameters`) — provided the strategy keeps its state where `onStart` resets it, as two runs in
 * one process already require. The results come back sorted by a chosen statistic.
 *
 * Parameters reach the strategy as `context.parameters`: its own defaults, overridden by `parameters`
 * in the module's `options` export, then in the sweep's options, then by the combination's. Other
 * options come, lowest first, from the module's `options` export and the sweep's options.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InvalidInputError, UsageError } from '../errors.js';
import { csv } from './report-files.js';
import type { BacktestStatistics } from './statistics.js';
import type { BacktestOptions, BacktestReport, StrategyParameters } from './types.js';

/** A strategy parameter's value. */
export type ParameterValue = StrategyParameters[string];
/** A combination: one value per parameter (what reaches the strategy as `context.parameters`). */
export type Parameters = StrategyParameters;
/** The values each parameter takes. */
export type Grid = Readonly<Record<string, readonly ParameterValue[]>>;

/** The statistics a sweep can sort by; `maxDrawdown` and `volatility` sort lowest first, the rest highest first. */
export const SWEEP_SORT_KEYS = [
  'sharpe',
  'sortino',
  'calmar',
  'cagr',
  'totalReturn',
  'pnl',
  'maxDrawdown',
  'volatility',
  'winRate',
  'profitFactor',
  'expectancy',
  'roundTrips',
  'timeInMarket',
] as const;
export type SweepSortKey = (typeof SWEEP_SORT_KEYS)[number];
const LOWER_IS_BETTER: ReadonlySet<SweepSortKey> = new Set(['maxDrawdown', 'volatility']);

/** The run options a sweep passes to every combination (a backtest's, without what a worker supplies). */
export type SweepRunOptions = Omit<BacktestOptions, 'store' | 'strategy' | 'onProgress' | 'from' | 'to'>;

export type SweepOptions = SweepRunOptions & {
  /** The strategy module's path (`.ts`, `.mts`, `.js`, …), loaded in each worker. */
  readonly strategy: string;
  /** The grid, or its text form (`dte=30,45 delta=0.2,0.3`, see `parseGrid`). */
  readonly grid: Grid | string;
  /** The store directory, opened read-only by each worker. */
  readonly store: string;
  readonly from: string;
  readonly to: string;
  /** Worker threads (default: `defaultWorkerCount`, at most one per combination). */
  readonly workers?: number;
  /** The statistic the results are sorted by (default `sharpe`). */
  readonly sortBy?: SweepSortKey;
  /** Called as each combination finishes. */
  readonly onProgress?: (done: number, total: number, result: SweepResult) => void;
};

/** One combination's run. */
export type SweepResult = {
  /** The combination's place in the grid's order (0-based; the last parameter varies fastest). */
  readonly index: number;
  readonly parameters: Parameters;
  readonly statistics: BacktestStatistics;
  readonly report: BacktestReport;
};

/** What a worker needs to start: the strategy, the store and the run options every combination shares. */
export type SweepWorkerData = {
  readonly strategy: string;
  readonly store: string;
  readonly run: Record<string, unknown>;
  readonly entry: string;
  readonly tsx: string | null;
  /** DuckDB threads for the worker's store: the cores shared among the workers, at least one. */
  readonly threads: number;
};
/** A job for a worker, and what it answers. */
export type SweepJob =
  | { readonly type: 'run'; readonly index: number; readonly parameters: Parameters }
  | { readonly type: 'close' };
export type SweepAnswer =
  | { readonly type: 'ready' }
  | {
      readonly type: 'done';
      readonly index: number;
      readonly report: BacktestReport;
    }
  | {
      readonly type: 'error';
      readonly index: number | null;
      readonly name: string;
      readonly message: string;
    };

const GRID_EXAMPLE = "--grid 'dte=30,45 delta=0.2,0.3'";

/**
 * Reads a grid's text form: space-separated `name=value,value,…`. Values that read as numbers are
 * numbers, `true`/`false` booleans, anything else text.
 */
export function parseGrid(spec: string): Grid {
  const grid: Record<string, ParameterValue[]> = {};
  const terms = spec.trim().split(/\s+/).filter(Boolean);
  if (terms.length === 0) throw new UsageError(`a grid names at least one parameter, e.g. ${GRID_EXAMPLE}`);
  for (const term of terms) {
    const match = /^([A-Za-z_$][\w$]*)=(.+)$/.exec(term);
    if (match === null) {
      throw new UsageError(`cannot read '${term}' in the grid: write name=value,value, e.g. ${GRID_EXAMPLE}`);
    }
    const [, name, list] = match;
    if (name! in grid)
      throw new UsageError(`the grid names ${name} twice; list its values once, e.g. ${GRID_EXAMPLE}`);
    const values = list!.split(',');
    if (values.some((v) => v === '')) {
      throw new UsageError(
        `an empty value in '${term}': separate values by single commas, e.g. ${GRID_EXAMPLE}`,
      );
    }
    grid[name!] = values.map(parseValue);
  }
  return grid;
}

function parseValue(text: string): ParameterValue {
  if (text === 'true') return true;
  if (text === 'false') return false;
  const number = Number(text);
  return Number.isFinite(number) && text.trim() !== '' ? number : text;
}

/** Every combination of a grid, in order: the first parameter varies slowest, the last fastest. */
export function combinations(grid: Grid): Parameters[] {
  let result: Record<string, ParameterValue>[] = [{}];
  for (const [name, values] of Object.entries(grid)) {
    if (!Array.isArray(values) || values.length === 0) {
      throw new UsageError(`grid parameter ${name} has no values, e.g. ${GRID_EXAMPLE}`);
    }
    result = result.flatMap((combination) => values.map((value) => ({ ...combination, [name]: value })));
  }
  return result;
}

/** The value a result is sorted by (null: the statistic is undefined for that run). */
export function sortValue(result: SweepResult, key: SweepSortKey): number | null {
  if (key === 'pnl') return result.report.pnl;
  if (key === 'maxDrawdown') return result.statistics.maxDrawdown.fraction;
  return result.statistics[key];
}

/**
 * Cores one worker keeps busy while it runs backtests: its own thread, V8's compiler and collector threads
 * and DuckDB's (measured at 1.3–1.45 on the sweep bench: 5.2 s of CPU in 3.6 s for 8 runs on one worker).
 */
const CORES_PER_WORKER = 1.5;

/**
 * The workers a sweep starts by default on a machine of `cores` cores: as many as the cores keep busy,
 * at least one. More would share the cores and pay each worker's start (its modules, its store, its first
 * run's reads and compiling, about 2 s of CPU) for nothing: on 2 cores, a sweep of 8 runs on 2 workers
 * took 3.8–4.0 s against 3.6 s on 1.
 */
export function defaultWorkerCount(cores: number): number {
  return Math.max(1, Math.floor(cores / CORES_PER_WORKER));
}

/** Runs every combination of the grid on worker threads, and returns the results sorted by `sortBy`. */
export async function sweep(options: SweepOptions): Promise<SweepResult[]> {
  const { strategy, grid, store, workers, sortBy = 'sharpe', onProgress, ...run } = options;
  const jobs = combinations(typeof grid === 'string' ? parseGrid(grid) : grid);
  if (!SWEEP_SORT_KEYS.includes(sortBy)) {
    throw new UsageError(`cannot sort by ${sortBy}; one of ${SWEEP_SORT_KEYS.join(', ')}`);
  }
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 1)) {
    throw new UsageError(`workers must be a whole number from 1, not ${workers}`);
  }
  if (!existsSync(path.resolve(strategy))) throw new UsageError(`no strategy file ${strategy}`);
  if (!existsSync(path.resolve(store))) throw new UsageError(`no store directory ${store}`);
  const count = Math.min(workers ?? defaultWorkerCount(os.availableParallelism()), jobs.length);
  // Only data crosses to a worker (a function passed by mistake is left out, not a clone error).
  const shared = Object.fromEntries(Object.entries(run).filter(([, value]) => typeof value !== 'function'));
  const entry = new URL(`./sweep-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)
    .href;
  const data: SweepWorkerData = {
    strategy: path.resolve(strategy),
    store: path.resolve(store),
    run: shared,
    entry,
    // Workers that each ran DuckDB on every core would contend for them, as the store writer's jobs would.
    threads: Math.max(1, Math.floor(os.availableParallelism() / count)),
    tsx: typeof (globalThis as { Deno?: unknown }).Deno === 'undefined' ? tsxApiUrl() : null,
  };

  const results: SweepResult[] = [];
  const threads: Worker[] = [];
  let next = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (error: Error) => reject(error);
      for (let i = 0; i < count; i++) {
        const worker = new Worker(BOOTSTRAP, { eval: true, workerData: data });
        threads.push(worker);
        const handOut = () => {
          if (next < jobs.length) {
            const job: SweepJob = { type: 'run', index: next, parameters: jobs[next]! };
            next++;
            worker.postMessage(job);
          }
        };
        worker.on('message', (answer: SweepAnswer) => {
          if (answer.type === 'ready') handOut();
          else if (answer.type === 'error') fail(errorOf(answer, jobs));
          else {
            const result = {
              index: answer.index,
              parameters: jobs[answer.index]!,
              statistics: answer.report.statistics,
              report: answer.report,
            };
            results.push(result);
            onProgress?.(results.length, jobs.length, result);
            if (results.length === jobs.length) resolve();
            else handOut();
          }
        });
        worker.on('error', fail);
        worker.on('exit', (code) => {
          if (results.length < jobs.length) fail(new Error(`a sweep worker stopped (exit code ${code})`));
        });
      }
    });
  } catch (error) {
    await Promise.all(threads.map((worker) => worker.terminate()));
    throw error;
  }
  // Each worker closes its store before its thread ends (a DuckDB instance is not torn down mid-use).
  await Promise.all(
    threads.map(
      (worker) =>
        new Promise<void>((resolve) => {
          worker.once('exit', () => resolve());
          worker.postMessage({ type: 'close' } satisfies SweepJob);
        }),
    ),
  );
  return sortResults(results, sortBy);
}

/** Sorted by the statistic (best first), runs without it last, ties in grid order. */
export function sortResults(results: readonly SweepResult[], key: SweepSortKey): SweepResult[] {
  const sign = LOWER_IS_BETTER.has(key) ? 1 : -1;
  return [...results].sort((a, b) => {
    const x = sortValue(a, key);
    const y = sortValue(b, key);
    if (x === null || y === null) return x === y ? a.index - b.index : x === null ? 1 : -1;
    return sign * (x - y) || a.index - b.index;
  });
}

/** The error a worker reported, naming the combination, with the class the CLI maps to exit 2 kept. */
function errorOf(answer: Extract<SweepAnswer, { type: 'error' }>, jobs: readonly Parameters[]): Error {
  const where = answer.index === null ? '' : `${describeParameters(jobs[answer.index]!)}: `;
  const message = `${where}${answer.message}`;
  if (answer.name === 'UsageError') return new UsageError(message);
  if (answer.name === 'InvalidInputError') return new InvalidInputError(message);
  const error = new Error(message);
  error.name = answer.name;
  return error;
}

/** `dte=30 delta=0.2`. */
export function describeParameters(parameters: Parameters): string {
  return Object.entries(parameters)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
}

/** The results as an aligned text table: the parameters, then the headline statistics. */
export function formatSweepTable(results: readonly SweepResult[], sortBy: SweepSortKey = 'sharpe'): string {
  const names = Object.keys(results[0]?.parameters ?? {});
  const pct = (value: number | null) => (value === null ? '—' : `${(value * 100).toFixed(2)}%`);
  const num = (value: number | null) => (value === null ? '—' : value.toFixed(2));
  const header = [...names, 'P&L', 'return', 'Sharpe', 'Sortino', 'max DD', 'win rate', 'trips'];
  const rows = results.map((r) => [
    ...names.map((name) => String(r.parameters[name])),
    r.report.pnl.toFixed(2),
    pct(r.statistics.totalReturn),
    num(r.statistics.sharpe),
    num(r.statistics.sortino),
    pct(r.statistics.maxDrawdown.fraction),
    pct(r.statistics.winRate),
    String(r.statistics.roundTrips),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i < names.length ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ');
  return `${[`sorted by ${sortBy}`, line(header), ...rows.map(line)].join('\n')}\n`;
}

/** The results as CSV: the parameters, then every statistic. */
export function sweepCsv(results: readonly SweepResult[]): string {
  const names = Object.keys(results[0]?.parameters ?? {});
  const stats = [
    'pnl',
    'totalReturn',
    'cagr',
    'volatility',
    'sharpe',
    'sortino',
    'maxDrawdown',
    'calmar',
    'winRate',
    'profitFactor',
    'averageWin',
    'averageLoss',
    'expectancy',
    'roundTrips',
    'timeInMarket',
    'credits',
  ] as const;
  const value = (r: SweepResult, key: (typeof stats)[number]) =>
    key === 'pnl'
      ? r.report.pnl
      : key === 'maxDrawdown'
        ? r.statistics.maxDrawdown.fraction
        : r.statistics[key];
  return csv(
    [...names, ...stats],
    results.map((r) => [...names.map((n) => r.parameters[n]), ...stats.map((k) => value(r, k))]),
  );
}

/**
 * tsx's register API (its ES module build, as the CLI imports it) as a URL a worker can import; it loads
 * the worker module when that is TypeScript (running from a checkout's sources). Null without tsx.
 */
function tsxApiUrl(): string | null {
  try {
    const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
    const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as {
      exports: Record<string, { import?: { default?: string } }>;
    };
    const file = exports['./esm/api']?.import?.default;
    return file === undefined ? null : pathToFileURL(path.join(path.dirname(manifest), file)).href;
  } catch {
    return null;
  }
}

/**
 * The worker's first script (CommonJS, evaluated): registers tsx when the worker module is TypeScript
 * (running from the sources), then imports the worker module, which answers `ready` once loaded.
 */
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx !== null && /\\.[cm]?ts$/.test(workerData.entry)) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})().catch((error) => {
  require('node:worker_threads').parentPort.postMessage({
    type: 'error', index: null, name: error && error.name || 'Error', message: String(error && error.message || error),
  });
});
`;
