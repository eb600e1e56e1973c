/**
 * Missing and broken quotes are not prices, on the real SPXW file (2018-01-02 .. 2018-02-28). On
 * 2018-02-05, the crash day, the 2018-02-28 2600 put and 2740 put are quoted bid 0, ask 0 (last 70 and
 * 112.85); the 2690 put is quoted 100.5 / 116.5. Before, the 2600 put was marked at 0 (equity rose on
 * the crash) and bought back for $0.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { backtest } from '../../src/backtest/runner.js';
import type { BacktestReport, Order, Position, Strategy } from '../../src/backtest/types.js';
import { commitStaged, stageFiles } from '../../src/ingest/ingest.js';
import { openStore, type Store } from '../../src/library/store.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { sharedPath, withData } from '../helpers/shared-data.js';

const SPXW_FILE = 'data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv';
const spxw = withData([SPXW_FILE]);

const P2600 = 'SPXW180228P02600000';
const P2690 = 'SPXW180228P02690000';
const P2740 = 'SPXW180228P02740000';

let dir: string;
let store: Store;
spxw.beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-backtest-hod-'));
  const tx = await WriteTransaction.begin(dir, { create: true });
  await commitStaged(tx, await stageFiles(tx.sql, [sharedPath(SPXW_FILE)], 'hod'));
  store = await openStore(dir, { threads: 1 });
}, 120_000);
spxw.afterAll(async () => {
  store.close();
  await fs.rm(dir, { recursive: true, force: true });
});

/** Orders by session; records the positions each session saw. */
function scripted(orders: Record<string, Order[]>, seen: Map<string, readonly Position[]>): Strategy {
  return {
    onSession({ session, positions }) {
      seen.set(session, positions);
      return orders[session] ?? [];
    },
  };
}

spxw.describe('broken quotes on 2018-02-05 (real SPXW)', () => {
  let report: BacktestReport;
  const seen = new Map<string, readonly Position[]>();
  spxw.beforeAll(async () => {
    report = await backtest({
      store,
      from: '2018-02-01',
      to: '2018-02-07',
      strategy: scripted(
        {
          '2018-02-01': [
            { symbol: P2600, quantity: -1, tag: 'short put' },
            {
              legs: [
                { symbol: P2740, quantity: -1 },
                { symbol: P2690, quantity: 1 },
              ],
              tag: 'put spread',
            },
          ],
          // A profit take the 0/0 quote would have allowed at $0.
          '2018-02-05': [{ symbol: P2600, quantity: 1, tag: 'buy back' }],
        },
        seen,
      ),
    });
  });

  it('marks the 0/0 put from its last valid IV at the crash-day underlying, never at 0', () => {
    const before = seen.get('2018-02-02')!.find((p) => p.symbol === P2600)!;
    const crash = seen.get('2018-02-05')!.find((p) => p.symbol === P2600)!;
    expect(before).toMatchObject({ mark: 10.4, markSource: 'quote' });
    expect(crash.markSource).toBe('model');
    // 2.1 % lower underlying, same 21.3 % IV: worth more than on 02-02, less than its strike.
    expect(crash.mark!).toBeGreaterThan(10.4);
    expect(crash.mark!).toBeLessThan(2600);
    const equity = (session: string) => report.equity.find((p) => p.session === session)!.equity;
    expect(equity('2018-02-05')).toBeLessThan(equity('2018-02-02'));
  });

  it('refuses to fill on a 0/0 quote', () => {
    expect(report.rejected).toEqual([
      expect.objectContaining({ session: '2018-02-05', symbol: P2600, reason: 'not a price: a 0/0 quote' }),
    ]);
    expect(report.trades.filter((t) => t.session === '2018-02-05')).toEqual([]);
  });

  it('keeps a put spread whose short leg is 0/0 within its width', () => {
    const legs = seen.get('2018-02-05')!;
    const short = legs.find((p) => p.symbol === P2740)!;
    const long = legs.find((p) => p.symbol === P2690)!;
    expect(short.markSource).toBe('model');
    expect(long.markSource).toBe('quote');
    // Short 2740 / long 2690: worth between −50 and 0 points per spread.
    const value = -short.mark! + long.mark!;
    expect(value).toBeGreaterThanOrEqual(-50);
    expect(value).toBeLessThanOrEqual(0);
  });

  it('lists each contract marked without a price', () => {
    expect(report.markNotes).toEqual(
      expect.arrayContaining([
        { symbol: P2600, source: 'model', sessions: 1, first: '2018-02-05', last: '2018-02-05' },
        { symbol: P2740, source: 'model', sessions: 1, first: '2018-02-05', last: '2018-02-05' },
      ]),
    );
    expect(report.marks.model).toBe(2);
  });
});

spxw.describe('settlement without daily bars (real SPXW)', () => {
  it('settles an expiring put at the close its own snapshot carries, never at $0', async () => {
    // SPX closed at 2823.89 on 2018-01-31 (the snapshots' underlying price); the store has no SPX bars.
    const report = await backtest({
      store,
      from: '2018-01-25',
      to: '2018-02-01',
      strategy: {
        onSession: (c) =>
          c.session === '2018-01-25' ? [{ symbol: 'SPXW180131P02850000', quantity: 1 }] : [],
      },
    });
    expect(report.trades.find((t) => t.reason === 'expiration')).toMatchObject({
      session: '2018-01-31',
      symbol: 'SPXW180131P02850000',
      quantity: -1,
      price: 26.11,
      cashFlow: 2611,
    });
    expect(report.warnings).toEqual([]);
  });
});
