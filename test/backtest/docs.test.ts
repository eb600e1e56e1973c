/**
 * docs/backtest.md as users read it: every strategy file in it loads (as an ESM or a CommonJS project
 * would load it) and trades on the sample store over the sessions its first comment names, on fresh
 * quotes and without look-ahead; the program in it runs.
 */
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadStrategyModule } from '../../src/backtest/load-strategy.js';
import { backtest } from '../../src/backtest/runner.js';
import { openStore, type Store } from '../../src/library/store.js';
import { ensureBuilt } from '../helpers/build.js';
import { REPO_ROOT } from '../helpers/paths.js';

const DOC = readFileSync(path.join(REPO_ROOT, 'docs/backtest.md'), 'utf8');
const blocks = [...DOC.matchAll(/```(ts|js)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));
const strategies = blocks.filter((b) =>
  /export default defineStrategy|module\.exports = defineStrategy/.test(b.code),
);
const programs = blocks.filter((b) => b.code.includes('await backtest('));

let root: string;
let store: Store;
beforeAll(async () => {
  await ensureBuilt();
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-docs-'));
  for (const [name, type] of [
    ['esm', 'module'],
    ['cjs', undefined],
  ] as const) {
    await fs.mkdir(path.join(root, name, 'node_modules'), { recursive: true });
    await fs.symlink(REPO_ROOT, path.join(root, name, 'node_modules', 'pitchain'), 'dir');
    await fs.writeFile(
      path.join(root, name, 'package.json'),
      JSON.stringify({ name, version: '1.0.0', type }),
    );
  }
  store = await openStore(path.join(REPO_ROOT, 'data/sample'), { threads: 1 });
}, 300_000);
afterAll(async () => {
  store?.close();
  await fs.rm(root, { recursive: true, force: true });
});

describe('docs/backtest.md', () => {
  it('has the strategy files and the program it promises', () => {
    expect(strategies.map((s) => s.lang)).toEqual(['ts', 'js']);
    expect(programs).toHaveLength(1);
  });

  it.each(strategies.map((s, i) => [i, s] as const))(
    'strategy file %i trades on fresh quotes',
    async (i, block) => {
      const period = /Sessions (\d{4}-\d{2}-\d{2}) \.\. (\d{4}-\d{2}-\d{2})/.exec(block.code);
      expect(period).not.toBeNull();
      const file = path.join(root, block.lang === 'ts' ? 'esm' : 'cjs', `strategy-${i}.${block.lang}`);
      await fs.writeFile(file, block.code);
      const loaded = await loadStrategyModule(file);
      const report = await backtest({
        ...loaded.options,
        store,
        strategy: loaded.strategy,
        from: period![1]!,
        to: period![2]!,
      });
      expect(report.lookAheadReads).toBe(0);
      const fills = report.trades.filter((t) => t.reason === 'order');
      expect(fills.length).toBeGreaterThan(0);
      for (const t of fills) expect(t.time - t.quoteTime!).toBeLessThanOrEqual(report.maxQuoteAge);
    },
    120_000,
  );

  it('runs the program', async () => {
    const file = path.join(root, 'esm', 'program.mts');
    await fs.writeFile(
      file,
      programs[0]!.code.replace(
        "openStore('data/sample')",
        `openStore(${JSON.stringify(path.join(REPO_ROOT, 'data/sample'))})`,
      ),
    );
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const { tsImport } = await import('tsx/esm/api');
      await tsImport(pathToFileURL(file).href, import.meta.url);
      const [pnl, trades, rejected, marks] = log.mock.calls[0]!;
      expect(typeof pnl).toBe('number');
      expect(trades).toBeGreaterThan(0);
      expect(rejected).toBe(0);
      // Fresh quotes only; far out-of-the-money puts quoted with no bid are marked by the model.
      expect(marks).toMatchObject({ stale: 0, last: 0 });
    } finally {
      log.mockRestore();
    }
  }, 120_000);
});
