/**
 * The examples in examples/ as users run them: `pitchain backtest <file> --json` on the sample store.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { BacktestReport } from '../../src/backtest/types.js';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { REPO_ROOT } from '../helpers/paths.js';

const run = (...args: string[]) => runCli(['backtest', ...args], { cwd: REPO_ROOT, timeoutMs: 240_000 });

async function report(example: string, from: string, to: string, ...more: string[]): Promise<BacktestReport> {
  const { code, stdout, stderr } = await run(
    `examples/${example}`,
    '--store',
    'data/sample',
    '--from',
    from,
    '--to',
    to,
    '--json',
    ...more,
  );
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return JSON.parse(stdout) as BacktestReport;
}

beforeAll(async () => {
  await ensureBuilt();
}, 300_000);

describe('pitchain backtest, on the examples', () => {
  it('spy-short-put: sells 30-dte puts near -0.30 delta and takes profit at half the premium', async () => {
    const r = await report('spy-short-put.ts', '2019-01-02', '2020-12-31');
    expect(r).toMatchObject({
      lookAheadReads: 0,
      rejected: [],
      dataVersion: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    const opens = r.trades.filter((t) => t.tag === 'open');
    expect(opens.length).toBeGreaterThan(10);
    for (const t of opens) expect(t).toMatchObject({ quantity: -1, reason: 'order' });
    // Every fill on the quote of its own decision instant: nothing stale, nothing estimated.
    for (const t of r.trades.filter((t) => t.reason === 'order' && t.symbol !== 'SPY'))
      expect(t.quoteTime).toBe(t.time);
    expect(r.marks).toEqual({ stale: 0, model: 0, last: 0 });
    expect(r.trades.some((t) => t.tag === 'take profit')).toBe(true);
    expect(r.equity).toHaveLength(505);
    expect(r.pnl).toBeCloseTo(r.equity.at(-1)!.equity - r.startingCash, 2);
    expect(r.credits).toBe(r.creditsByPart.strategy + r.creditsByPart.runner);
  }, 240_000);

  it('spx-iron-condor: four legs of one AM-settled expiration, cash-settled', async () => {
    const r = await report('spx-iron-condor.ts', '2020-01-02', '2020-06-30');
    const first = r.trades.slice(0, 4);
    expect(first.map((t) => t.quantity)).toEqual([-1, 1, -1, 1]);
    // One combo: one order id, one decision, fresh quotes.
    expect(new Set(first.map((t) => t.orderId)).size).toBe(1);
    for (const t of first) expect(t.quoteTime).toBe(t.time);
    expect(r.rejected).toEqual([]);
    expect(new Set(first.map((t) => t.symbol.slice(0, -15)))).toEqual(new Set(['SPX']));
    const expirations = r.trades.filter((t) => t.reason === 'expiration');
    expect(expirations.length).toBeGreaterThanOrEqual(4);
    expect(r.trades.filter((t) => t.symbol === 'SPX')).toEqual([]); // cash, never shares
  }, 240_000);

  it('aapl-covered-call: the 2020 split turns 100 shares into 400 and one call into four, equity unchanged', async () => {
    const r = await report('aapl-covered-call.ts', '2020-08-03', '2020-10-30');
    // The buy-write: shares and call in one order.
    expect(r.trades.slice(0, 2).map((t) => [t.symbol.slice(0, 4), t.quantity, t.orderId])).toEqual([
      ['AAPL', 100, 1],
      ['AAPL', -1, 1],
    ]);
    const split = r.trades.filter((t) => t.reason === 'split');
    expect(split.map((t) => [t.symbol.slice(0, 4), t.quantity])).toEqual([
      ['AAPL', -100],
      ['AAPL', 400],
      ['AAPL', 1],
      ['AAPL', -4],
    ]);
    const at = (session: string) => r.equity.find((p) => p.session === session)!.equity;
    // The split day's marks are the day before's, divided: no jump from the split itself.
    expect(Math.abs(at('2020-08-31') - at('2020-08-28')) / at('2020-08-28')).toBeLessThan(0.1);
  }, 240_000);

  it('says what is wrong with a bad command line, without running', async () => {
    const bad = await run(
      'examples/spy-short-put.ts',
      '--store',
      'data/sample',
      '--from',
      '2020-01-02',
      '--to',
      '2020-01-31',
      '--fill',
      '2',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--fill takes mid, bid-ask or a fraction/);
    const missing = await run(
      'examples/nope.ts',
      '--store',
      'data/sample',
      '--from',
      '2020-01-02',
      '--to',
      '2020-01-31',
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no strategy file/);
    const help = await run('--help');
    expect(help.stdout).toMatch(/Examples:\n {2}\$ pitchain backtest examples\/spy-short-put.ts/);
  }, 120_000);
});
