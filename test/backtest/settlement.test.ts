/**
 * An expiration the store cannot settle: a vendor file holding a contract's quotes up to the session
 * before its expiration and nothing of its underlying on the expiration session (no bars, no snapshot).
 * Before, the run settled it at $0 with a warning; now it stops with an error naming what is missing,
 * or, asked to, settles at the last underlying price seen and says so.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backtest } from '../../src/backtest/runner.js';
import type { Strategy } from '../../src/backtest/types.js';
import { StoreError } from '../../src/errors.js';
import { commitStaged, stageFiles } from '../../src/ingest/ingest.js';
import { openStore, type Store } from '../../src/library/store.js';
import { WriteTransaction } from '../../src/store/writer.js';

const HEADER =
  'underlying,underlying_last, exchange,optionroot,optionext,type,expiration,quotedate,strike,last,bid,ask,volume,openinterest,impliedvol,delta,gamma,theta,vega,optionalias';
// XYZ at 95 on 2020-01-02; its 2020-01-03 100 put is quoted that day only, and the 2020-01-17 put on
// 2020-01-06 (so that the store's sessions run 2020-01-02 .. 2020-01-06, with nothing of 2020-01-03).
const ROWS = [
  'XYZ,95,*,XYZ200103P00100000,,put,01/03/2020,01/02/2020,100,5.1,5,5.2,10,100,0.3,-0.9,0.01,-0.1,0.01,XYZ200103P00100000',
  'XYZ,96,*,XYZ200117P00100000,,put,01/17/2020,01/06/2020,100,4.6,4.5,4.7,10,100,0.3,-0.8,0.01,-0.1,0.02,XYZ200117P00100000',
];

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-settlement-'));
  const file = path.join(dir, 'xyz.csv');
  await fs.writeFile(file, `${HEADER}\n${ROWS.join('\n')}\n`);
  const tx = await WriteTransaction.begin(path.join(dir, 'store'), { create: true });
  await commitStaged(tx, await stageFiles(tx.sql, [file], 'hod', { greeksUnits: 'none' }));
  store = await openStore(path.join(dir, 'store'), { threads: 1 });
}, 120_000);
afterAll(async () => {
  store.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const buyPut: Strategy = {
  onSession: (c) => (c.session === '2020-01-02' ? [{ symbol: 'XYZ200103P00100000', quantity: 1 }] : []),
};

describe('an expiration without a settlement value', () => {
  it('stops the run with an error naming the underlying and the expiration, never settling at $0', async () => {
    const run = backtest({ store, from: '2020-01-02', to: '2020-01-06', strategy: buyPut });
    await expect(run).rejects.toThrow(StoreError);
    await expect(backtest({ store, from: '2020-01-02', to: '2020-01-06', strategy: buyPut })).rejects.toThrow(
      /^the store has no settlement value of XYZ for the 2020-01-03 expiration; run with missingSettlement: 'last-price'/,
    );
  });

  it("with missingSettlement: 'last-price', settles at the last underlying price seen, and says so", async () => {
    const report = await backtest({
      store,
      from: '2020-01-02',
      to: '2020-01-06',
      strategy: buyPut,
      missingSettlement: 'last-price',
    });
    expect(report.trades.map((t) => [t.session, t.reason, t.quantity, t.price])).toEqual([
      ['2020-01-02', 'order', 1, 5.1],
      ['2020-01-03', 'exercise', -1, 5],
      ['2020-01-03', 'exercise', -100, 95],
    ]);
    expect(report.warnings).toEqual([
      'XYZ 2020-01-03: no settlement value in the store; settled at the last price seen, 95',
    ]);
  });
});
