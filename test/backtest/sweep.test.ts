/**
 * Sweeps on the sample store: a grid of four combinations on two worker threads gives, combination by
 * combination, the report and statistics of running that combination alone; grids are read and refused
 * as the CLI takes them.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStrategyModule } from '../../src/backtest/load-strategy.js';
import { withStatistics } from '../../src/backtest/report-files.js';
import { backtest } from '../../src/backtest/runner.js';
import {
  combinations,
  defaultWorkerCount,
  formatSweepTable,
  parseGrid,
  sweep,
  sweepCsv,
} from '../../src/backtest/sweep.js';
import type { BacktestOptions } from '../../src/backtest/types.js';
import { UsageError } from '../../src/errors.js';
import { openStore, type Store } from '../../src/library/store.js';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { REPO_ROOT } from '../helpers/paths.js';

const STRATEGY = 'test/fixtures/strategies/sweep-put.ts';
const FROM = '2020-01-02';
const TO = '2020-02-28';

let store: Store;
beforeAll(async () => {
  store = await openStore('data/sample');
});
afterAll(() => store.close());

describe('sweep', () => {
  it('runs every combination on worker threads, each equal to its run alone, sorted by the statistic', async () => {
    const progress: number[] = [];
    const results = await sweep({
      strategy: STRATEGY,
      grid: 'dte=30,45 take=0.5,0.8',
      store: 'data/sample',
      from: FROM,
      to: TO,
      fill: { spread: 0.5 },
      workers: 2,
      sortBy: 'pnl',
      riskFreeRate: 0.01,
      onProgress: (done, total) => progress.push(done * 10 + total),
    });
    expect(progress).toEqual([14, 24, 34, 44]);
    expect(results.map((r) => r.index).sort()).toEqual([0, 1, 2, 3]);
    const pnls = results.map((r) => r.report.pnl);
    expect(pnls).toEqual([...pnls].sort((a, b) => b - a));

    // Each combination alone, in this thread: the module's options, the sweep's, then the parameters.
    const { strategy, options } = await loadStrategyModule(STRATEGY);
    expect(options).toEqual({ commission: { option: 0.5 } });
    const byIndex = new Map(results.map((r) => [r.index, r]));
    for (const [index, parameters] of combinations(parseGrid('dte=30,45 take=0.5,0.8')).entries()) {
      const run = { ...options, fill: { spread: 0.5 }, riskFreeRate: 0.01, from: FROM, to: TO, parameters };
      const alone = await backtest({
        ...(run as Omit<BacktestOptions, 'store' | 'strategy'>),
        store,
        strategy,
      });
      const swept = byIndex.get(index)!;
      expect(swept.parameters).toEqual(parameters);
      expect(swept.report).toEqual(alone);
      expect(swept.statistics).toEqual(withStatistics(alone, { riskFreeRate: 0.01 }).statistics);
    }
    // The parameters reach the strategy: the combinations trade differently.
    expect(new Set(results.map((r) => r.report.pnl)).size).toBeGreaterThan(1);
    expect(results[0]!.report.trades.length).toBeGreaterThan(0);
    expect(results[0]!.report.trades[0]!.tag).toBe('open');

    const table = formatSweepTable(results, 'pnl');
    expect(table.split('\n')[0]).toBe('sorted by pnl');
    expect(table.split('\n')[1]).toMatch(/^dte\s+take\s+P&L\s+return\s+Sharpe/);
    expect(table.trimEnd().split('\n')).toHaveLength(6);
    const csv = sweepCsv(results).trimEnd().split('\n');
    expect(csv[0]!.startsWith('dte,take,pnl,totalReturn,cagr,volatility,sharpe,sortino,maxDrawdown')).toBe(
      true,
    );
    expect(csv).toHaveLength(5);
  }, 120_000);

  it("names the combination and keeps a usage error's class when a run refuses its options", async () => {
    const error = await sweep({
      strategy: STRATEGY,
      grid: { dte: [30] },
      store: 'data/sample',
      from: '2020-02-28',
      to: '2020-01-02',
      workers: 1,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toBe('dte=30: from (2020-02-28) is after to (2020-01-02)');
  }, 60_000);

  it('refuses a missing strategy file or store, a bad worker count or an unknown statistic', async () => {
    const base = { strategy: STRATEGY, grid: 'dte=30', store: 'data/sample', from: FROM, to: TO };
    await expect(sweep({ ...base, strategy: 'nope.ts' })).rejects.toThrow(/no strategy file nope.ts/);
    await expect(sweep({ ...base, store: 'no-store' })).rejects.toThrow(/no store directory no-store/);
    await expect(sweep({ ...base, workers: 0 })).rejects.toThrow(/workers must be a whole number/);
    await expect(sweep({ ...base, sortBy: 'luck' as 'pnl' })).rejects.toThrow(UsageError);
  });
});

describe('defaultWorkerCount', () => {
  it('starts one worker per 1.5 cores, at least one: a second worker on 2 cores only slows a sweep', () => {
    expect([1, 2, 3, 4, 8, 16].map(defaultWorkerCount)).toEqual([1, 1, 2, 2, 5, 10]);
  });
});

describe('parseGrid', () => {
  it('reads numbers, booleans and text, and combines them with the last parameter fastest', () => {
    const grid = parseGrid(' dte=30,45  delta=0.2,0.3 hedge=true,false side=put ');
    expect(grid).toEqual({ dte: [30, 45], delta: [0.2, 0.3], hedge: [true, false], side: ['put'] });
    expect(combinations(parseGrid('a=1,2 b=x,y'))).toEqual([
      { a: 1, b: 'x' },
      { a: 1, b: 'y' },
      { a: 2, b: 'x' },
      { a: 2, b: 'y' },
    ]);
    expect(combinations(parseGrid('dte=30,45 delta=0.2,0.3 take=0.5,0.75'))).toHaveLength(8);
  });

  it('refuses what it cannot read, with an example', () => {
    for (const spec of ['', 'dte', 'dte=', 'dte=30,,45', '3d=1', 'dte=30 dte=45']) {
      expect(() => parseGrid(spec), spec).toThrow(UsageError);
      expect(() => parseGrid(spec), spec).toThrow(/dte=30,45 delta=0.2,0.3/);
    }
  });
});

describe('pitchain backtest --grid', () => {
  const cli = (...args: string[]) =>
    runCli(['backtest', STRATEGY, '--store', 'data/sample', ...args], { cwd: REPO_ROOT, timeoutMs: 120_000 });
  beforeAll(async () => {
    await ensureBuilt();
  }, 300_000);

  it('prints the sorted results table and writes sweep.csv', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'pitchain-sweep-'));
    try {
      const run = await cli(
        '--from',
        FROM,
        '--to',
        '2020-01-31',
        '--grid',
        'dte=30,45',
        '--workers',
        '2',
        '--sort',
        'pnl',
        '--out',
        out,
      );
      expect([run.code, run.signal, run.stderr]).toEqual([0, null, expect.any(String)]);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('sorted by pnl');
      expect(lines[1]).toMatch(/^dte\s+P&L\s+return\s+Sharpe/);
      expect(
        lines
          .slice(2)
          .map((line) => line.split(/\s+/)[0])
          .sort(),
      ).toEqual(['30', '45']);
      const csv = (await readFile(path.join(out, 'sweep.csv'), 'utf8')).trimEnd().split('\n');
      expect(csv[0]).toMatch(/^dte,pnl,totalReturn,/);
      expect(csv).toHaveLength(3);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 120_000);

  it('refuses a grid it cannot read, an unknown statistic or a bad worker count, with exit 2 and an example', async () => {
    const grid = await cli('--from', FROM, '--to', TO, '--grid', 'dte');
    expect(grid.code).toBe(2);
    expect(grid.stderr).toContain("e.g. --grid 'dte=30,45 delta=0.2,0.3'");
    const sort = await cli('--from', FROM, '--to', TO, '--grid', 'dte=30', '--sort', 'luck');
    expect([sort.code, sort.stderr]).toEqual([
      2,
      expect.stringMatching(/^pitchain: --sort takes one of sharpe, /),
    ]);
    const workers = await cli('--from', FROM, '--to', TO, '--grid', 'dte=30', '--workers', '1.5');
    expect(workers.code).toBe(2);
  }, 120_000);
});
