/**
 * Backtest against plain DuckDB: `examples/spy-short-put.ts` with `greeks: 'vendor'` over
 * 2019-01-02..2020-12-31 on `data/sample` (a copy with the session column files a commit writes,
 * `sample-store.ts`), end to end, against the same strategy written as plain DuckDB
 * SQL over the store's Parquet files plus a small JS loop (`bench/backtest-duckdb.ts`), in the same
 * process, alternately, best of three each; the trades of the two are compared. pitchain runs from the
 * built package (`dist/`), as installed; the baseline's few helpers (the normal CDF, the SQL session) are
 * the same either way.
 */
import { pathToFileURL } from 'node:url';
import type { BacktestOptions, Strategy } from '../src/backtest/types.js';
import { readManifest } from '../src/store/manifest.js';
import { type BaselineTrade, shortPutDuckDb } from './backtest-duckdb.js';
import { defineBenchmark, installedPitchain, ratioRow } from './lib.js';
import { sampleAsCommitted } from './sample-store.js';

const FROM = '2019-01-02';
const TO = '2020-12-31';
const EXAMPLE = 'examples/spy-short-put.ts';

type StrategyModule = {
  default: Strategy;
  options?: Partial<Omit<BacktestOptions, 'store' | 'strategy'>>;
};

const key = ([session, symbol, quantity, price]: BaselineTrade) =>
  `${session} ${symbol} ${quantity} ${price.toFixed(4)}`;

export default defineBenchmark({
  name: 'backtest-duckdb',
  description: `${EXAMPLE} on data/sample (with its session column files) vs plain DuckDB SQL and a JS loop over the same Parquet files`,
  async run(ctx) {
    // The built package, as an installed pitchain runs (the example imports it too).
    const { backtest, openStore } = await installedPitchain();
    // The sample as a commit writes a store (with its session column files; the shipped one has none).
    const dir = await sampleAsCommitted(ctx);
    const example = (await import(pathToFileURL(`${ctx.repoRoot}${EXAMPLE}`).href)) as StrategyModule;
    const ours = async () => {
      const started = performance.now();
      const store = await openStore(dir);
      try {
        const report = await backtest({
          ...example.options,
          greeks: 'vendor',
          store,
          strategy: example.default,
          from: FROM,
          to: TO,
        });
        JSON.stringify(report, null, 2);
        const trades = report.trades.map((t): BaselineTrade => [t.session, t.symbol, t.quantity, t.price]);
        return { seconds: (performance.now() - started) / 1000, trades };
      } finally {
        store.close();
      }
    };
    const baseline = async () => {
      const started = performance.now();
      const manifest = (await readManifest(dir))!;
      const trades = await shortPutDuckDb(dir, manifest, FROM, TO);
      return { seconds: (performance.now() - started) / 1000, trades };
    };
    ctx.log('pitchain and the DuckDB + JS loop, alternately, three runs each');
    const runs = {
      ours: [] as Awaited<ReturnType<typeof ours>>[],
      baseline: [] as Awaited<ReturnType<typeof baseline>>[],
    };
    for (let i = 0; i < 3; i++) {
      runs.ours.push(await ours());
      runs.baseline.push(await baseline());
    }
    const best = (list: { seconds: number }[]) => Math.min(...list.map((r) => r.seconds));
    const a = runs.ours[0]!.trades.map(key);
    const b = runs.baseline[0]!.trades.map(key);
    const differing = Array.from({ length: Math.max(a.length, b.length) }, (_, i) => a[i] !== b[i]).filter(
      Boolean,
    ).length;
    const at = a.findIndex((t, i) => t !== b[i]);
    const verdict =
      differing === 0
        ? `trades identical (${a.length})`
        : `${differing} trades differ, first #${at}: pitchain ${a[at] ?? '(none)'}, baseline ${b[at] ?? '(none)'}`;
    ctx.log(verdict);
    const load = (await import('node:fs/promises')).readFile('/proc/loadavg', 'utf8').catch(() => '? ? ?');
    return [
      ratioRow({
        name: 'backtest: pitchain vs plain DuckDB + JS loop, end to end',
        ours: best(runs.ours),
        baseline: best(runs.baseline),
        unit: 's',
        target: '≤ 0.5× baseline time',
        note: `best of 3 each, alternating; greeks vendor; ${verdict}; load ${(await load).split(' ').slice(0, 3).join(' ')}`,
      }),
      ratioRow({
        name: 'backtest: trades differing, pitchain vs DuckDB + JS loop',
        ours: differing,
        unit: 'trades',
        target: '≤ 0 trades',
        note: verdict,
      }),
    ];
  },
});
