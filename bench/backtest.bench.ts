/**
 * Backtest benchmark: `examples/spy-short-put.ts` over 2019-01-02..2020-12-31 on `data/sample` (a copy
 * with the session column files a commit writes, `sample-store.ts`), and the
 * same strategy as users write it today, pandas over CSV exports (`bench/short_put_pandas.py`), with the
 * trades of the two compared.
 *
 * What each side's time includes, from data on disk to the trades:
 * - pitchain: opening the store, `backtest()` over the 505 sessions, and the report as `--json` prints it
 *   (JSON text), then closing the store; in this process, with the built package's modules (`dist/`, as
 *   an installed pitchain runs) already loaded. The best of
 *   three runs, each on a freshly opened store.
 * - pandas: reading the three CSV files and parsing their instants (`readSeconds`), then the joins, the
 *   session loop and the trades (`runSeconds`), as the script times itself; not the interpreter's start
 *   or `import pandas` (as pitchain's time leaves out Node's start and module loading), nor the export to
 *   CSV, done once before (`pitchain export` of SPY's option_quotes, contracts and stock_bars to Parquet,
 *   then to CSV in a temp directory). The better of two runs.
 *
 * The comparison runs the example with `greeks: 'vendor'`, the store's vendor IV with the Black–Scholes
 * delta a current answer computes when the store has no vendor delta, which the script computes the same
 * way (see its header for every rule it mirrors); trades match on session, symbol, quantity and price to
 * 1/10,000. Without `/usr/bin/python3` and its pandas (Debian's python3-pandas) the pandas rows are skipped.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BacktestOptions, BacktestReport, Strategy } from '../src/backtest/types.js';
import { quoteLiteral, SqlSession } from '../src/store/sql.js';
import { ensureBuilt, runCommand } from '../test/helpers/build.js';
import {
  type BenchContext,
  type BenchRow,
  defineBenchmark,
  installedPitchain,
  ratioRow,
  rssPeakMb,
} from './lib.js';
import { sampleAsCommitted } from './sample-store.js';

const FROM = '2019-01-02';
const TO = '2020-12-31';
const EXAMPLE = 'examples/spy-short-put.ts';
const SCRIPT = 'bench/short_put_pandas.py';
/** Debian's interpreter, the one its python3-pandas package installs pandas for. */
const PYTHON = '/usr/bin/python3';
/** The tables the script reads, each exported for SPY alone. */
const EXPORTS = [
  { table: 'option_quotes', filter: ['--underlying', 'SPY'] },
  { table: 'contracts', filter: ['--underlying', 'SPY'] },
  { table: 'stock_bars', filter: ['--symbol', 'SPY'] },
] as const;

/** What a strategy module exports, as `pitchain backtest` loads it. */
type StrategyModule = {
  default: Strategy;
  options?: Partial<Omit<BacktestOptions, 'store' | 'strategy'>>;
};

/** A trade as the two sides compare it. */
type TradeKey = readonly [session: string, symbol: string, quantity: number, price: string];

type PandasRun = { trades: TradeKey[]; readSeconds: number; runSeconds: number };

export default defineBenchmark({
  name: 'backtest',
  description: `${EXAMPLE} over ${FROM}..${TO} on data/sample (with its session column files), end to end, and the same strategy in pandas`,
  async run(ctx) {
    await ensureBuilt(); // the export runs the CLI
    const { backtest, openStore } = await installedPitchain();
    // The sample as a commit writes a store (with its session column files; the shipped one has none).
    const dir = await sampleAsCommitted(ctx);
    const example = (await import(pathToFileURL(`${ctx.repoRoot}${EXAMPLE}`).href)) as StrategyModule;

    const endToEnd = async (options: StrategyModule['options']) => {
      const started = performance.now();
      const store = await openStore(dir);
      try {
        const report = await backtest({
          ...options,
          store,
          strategy: example.default,
          from: FROM,
          to: TO,
        });
        const json = JSON.stringify(report, null, 2);
        return { seconds: (performance.now() - started) / 1000, report, bytes: json.length };
      } finally {
        store.close();
      }
    };

    ctx.log(`${EXAMPLE} as it is (options ${JSON.stringify(example.options ?? {})}), three runs`);
    const { value: first, peakMb } = await rssPeakMb(() => endToEnd(example.options));
    const asIs = [first, await endToEnd(example.options), await endToEnd(example.options)];
    sameTrades(asIs.map((run) => run.report));
    const asIsSeconds = Math.min(...asIs.map((run) => run.seconds));
    const report = first.report;
    const rows: BenchRow[] = [
      ratioRow({
        name: 'backtest: spy-short-put end to end',
        ours: asIsSeconds,
        unit: 's',
        target: '≤ 3 s',
        note: `best of 3; ${report.equity.length} sessions, ${report.trades.length} trades, ${report.requests} requests, P&L ${report.pnl}`,
      }),
      ratioRow({
        name: 'backtest: peak RSS of spy-short-put',
        ours: peakMb,
        unit: 'MB',
        target: '< 512 MB',
        note: 'first run; the loop bench’s bound',
      }),
    ];

    const vendorOptions = { ...example.options, greeks: 'vendor' } as const;
    const python = await pandasAvailable();
    if (python !== true) {
      ctx.log(`pandas side skipped: ${python}`);
      const ours = await endToEnd(vendorOptions);
      rows.push(
        ratioRow({
          name: 'backtest: pitchain vs pandas, end to end',
          ours: ours.seconds,
          baseline: null,
          unit: 's',
          target: '≤ 0.2× baseline time',
          note: 'skipped: python3-pandas not installed',
        }),
      );
      return rows;
    }

    const csvDir = await exportCsv(ctx, dir);
    // Alternating, so that neither side gains from the other warming the file cache.
    ctx.log(`greeks: 'vendor' against ${SCRIPT}: pitchain three runs, pandas two, alternating`);
    const vendor = [await endToEnd(vendorOptions)];
    const pandas = [await runPandas(ctx, csvDir)];
    vendor.push(await endToEnd(vendorOptions));
    pandas.push(await runPandas(ctx, csvDir));
    vendor.push(await endToEnd(vendorOptions));
    sameTrades(vendor.map((run) => run.report));
    const oursSeconds = Math.min(...vendor.map((run) => run.seconds));
    const best = pandas.reduce((a, b) =>
      a.readSeconds + a.runSeconds <= b.readSeconds + b.runSeconds ? a : b,
    );
    const pandasSeconds = best.readSeconds + best.runSeconds;

    const mismatch = firstDifference(tradeKeys(vendor[0]!.report), best.trades);
    const verdict =
      mismatch === undefined
        ? `trades identical (${best.trades.length})`
        : `trades differ at #${mismatch.index}: pitchain ${show(mismatch.ours)}, pandas ${show(mismatch.theirs)}`;
    ctx.log(verdict);
    rows.push(
      ratioRow({
        name: 'backtest: pitchain vs pandas, end to end',
        ours: oursSeconds,
        baseline: pandasSeconds,
        unit: 's',
        target: '≤ 0.2× baseline time',
        note: `${speed(oursSeconds, pandasSeconds)}; pandas ${best.readSeconds.toFixed(1)} s CSV read + ${best.runSeconds.toFixed(1)} s strategy; greeks vendor; ${verdict}`,
      }),
      ratioRow({
        name: 'backtest: pitchain vs pandas without its CSV read',
        ours: oursSeconds,
        baseline: best.runSeconds,
        unit: 's',
        target: '≤ 0.2× baseline time',
        note: `${speed(oursSeconds, best.runSeconds)}; pandas with its data already in memory`,
      }),
      ratioRow({
        name: 'backtest: trades differing, pitchain vs pandas',
        ours: mismatch === undefined ? 0 : mismatch.count,
        unit: 'trades',
        target: '≤ 0 trades',
        note: verdict,
      }),
    );
    return rows;
  },
});

/** True when Debian's python3 imports pandas, else why not. */
async function pandasAvailable(): Promise<true | string> {
  try {
    const result = await runCommand(PYTHON, ['-c', 'import pandas'], { timeoutMs: 60_000 });
    return result.code === 0 ? true : 'python3-pandas not installed';
  } catch {
    return `no ${PYTHON}`;
  }
}

/** Exports SPY's tables with `pitchain export` to Parquet, then to CSV (instants in UTC), in a temp directory. */
async function exportCsv(ctx: BenchContext, storeDir: string): Promise<string> {
  const out = await ctx.tempDir('pitchain-bench-csv-');
  const sql = await SqlSession.open();
  try {
    await sql.run(`SET TimeZone = 'UTC'`);
    for (const { table, filter } of EXPORTS) {
      const parquet = join(out, `${table}.parquet`);
      const exported = await runCommand(process.execPath, [
        `${ctx.repoRoot}dist/cli/bin.js`,
        'export',
        parquet,
        '--store',
        storeDir,
        '--table',
        table,
        ...filter,
      ]);
      if (exported.code !== 0) throw new Error(`pitchain export ${table} failed:\n${exported.stderr}`);
      const csv = join(out, `${table}.csv`);
      await sql.run(
        `COPY (SELECT * FROM read_parquet(${quoteLiteral(parquet)})) TO ${quoteLiteral(csv)} (HEADER)`,
      );
      ctx.log(`exported ${table}: ${((await stat(csv)).size / 2 ** 20).toFixed(1)} MB of CSV`);
    }
  } finally {
    sql.close();
  }
  return out;
}

async function runPandas(ctx: BenchContext, csvDir: string): Promise<PandasRun> {
  const result = await runCommand(PYTHON, [`${ctx.repoRoot}${SCRIPT}`, csvDir, FROM, TO], {
    timeoutMs: 600_000,
  });
  if (result.code !== 0) throw new Error(`${SCRIPT} failed (exit ${result.code}):\n${result.stderr}`);
  const output = JSON.parse(result.stdout) as {
    trades: [string, string, number, number][];
    readSeconds: number;
    runSeconds: number;
  };
  ctx.log(`pandas: ${output.readSeconds.toFixed(2)} s read, ${output.runSeconds.toFixed(2)} s run`);
  return {
    trades: output.trades.map(([session, symbol, quantity, price]) => [
      session,
      symbol,
      quantity,
      price.toFixed(4),
    ]),
    readSeconds: output.readSeconds,
    runSeconds: output.runSeconds,
  };
}

function tradeKeys(report: BacktestReport): TradeKey[] {
  return report.trades.map((t) => [t.session, t.symbol, t.quantity, t.price.toFixed(4)]);
}

/** Runs of one configuration must trade alike: anything else is a bug, not noise. */
function sameTrades(reports: readonly BacktestReport[]): void {
  const [head, ...rest] = reports.map((report) => JSON.stringify(tradeKeys(report)));
  if (rest.some((trades) => trades !== head)) throw new Error('runs of the same backtest traded differently');
}

/** The first position where the trade lists differ, and how many positions differ in all; undefined if none. */
function firstDifference(
  ours: readonly TradeKey[],
  theirs: readonly TradeKey[],
): { index: number; count: number; ours: TradeKey | undefined; theirs: TradeKey | undefined } | undefined {
  let first: number | undefined;
  let count = 0;
  for (let i = 0; i < Math.max(ours.length, theirs.length); i++) {
    if (JSON.stringify(ours[i]) !== JSON.stringify(theirs[i])) {
      first ??= i;
      count++;
    }
  }
  return first === undefined ? undefined : { index: first, count, ours: ours[first], theirs: theirs[first] };
}

/** pitchain's speed against the baseline's, in words. */
function speed(oursSeconds: number, baselineSeconds: number): string {
  return oursSeconds <= baselineSeconds
    ? `pitchain ${(baselineSeconds / oursSeconds).toFixed(1)}× faster`
    : `pitchain ${(oursSeconds / baselineSeconds).toFixed(1)}× slower`;
}

function show(trade: TradeKey | undefined): string {
  return trade === undefined ? '(none)' : trade.join(' ');
}
