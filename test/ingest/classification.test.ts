/**
 * Contract classification from the data: a contract is nonstandard (adjusted) when its source files it under
 * another underlying than its root's own — the root change after a corporate action (AAPL1 under AAPL) —
 * and never because of the root's shape: a root ending in a digit (T001) is an ordinary root whose default
 * chain answers. An adjusted contract is found under the underlying its source files it under, in a
 * session loop too (as a backtest marks what it holds).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitStaged, stageFiles } from '../../src/ingest/ingest.js';
import { openStore, type Store } from '../../src/library/store.js';
import { etWallToSeconds } from '../../src/market-time/index.js';
import { WriteTransaction } from '../../src/store/writer.js';

const MAPPING = JSON.stringify({
  underlying: 'Underlying',
  root: 'Root',
  expiration: 'Expiration',
  side: 'Type',
  strike: 'Strike',
  bid: 'Bid',
  ask: 'Ask',
  sessionDate: 'Date',
});
/** AAPL and AAPL1 quoted over six sessions, 2024-03-15 the fifth; T001 on 2024-03-15 only. */
const SESSIONS = ['2024-03-11', '2024-03-12', '2024-03-13', '2024-03-14', '2024-03-15', '2024-03-18'];
const ADJUSTED = 'AAPL1240419C00175000';
const CSV = [
  'Underlying,Root,Expiration,Type,Strike,Bid,Ask,Date',
  'T001,T001,2024-04-19,call,25,1.10,1.20,2024-03-15',
  ...SESSIONS.flatMap((session, i) => [
    `AAPL,AAPL,2024-04-19,call,175,${(2.7 + i / 10).toFixed(2)},${(2.8 + i / 10).toFixed(2)},${session}`,
    `AAPL,AAPL1,2024-04-19,call,175,${(8.7 + i / 10).toFixed(2)},${(8.8 + i / 10).toFixed(2)},${session}`,
  ]),
].join('\n');

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-classification-'));
  const file = path.join(dir, 'roots.csv');
  await fs.writeFile(file, `${CSV}\n`);
  const tx = await WriteTransaction.begin(path.join(dir, 'store'), { create: true });
  await commitStaged(tx, await stageFiles(tx.sql, [file], 'csv', { mapping: MAPPING }));
  store = await openStore(path.join(dir, 'store'), { threads: 1 });
});
afterAll(async () => {
  store.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('contract classification', () => {
  it('answers the default chain of a root ending in a digit', async () => {
    const chain = await store.options.chain('T001', { date: '2024-03-15' });
    expect(chain.columns.optionSymbol).toEqual(['T001240419C00025000']);
  });

  it('keeps an adjusted root out of its underlying’s default chain, and serves it when asked', async () => {
    const standard = await store.options.chain('AAPL', { date: '2024-03-15' });
    expect(standard.columns.optionSymbol).toEqual(['AAPL240419C00175000']);
    const all = await store.options.chain('AAPL', { date: '2024-03-15', nonstandard: true });
    expect([...all.columns.optionSymbol].sort()).toEqual(['AAPL1240419C00175000', 'AAPL240419C00175000']);
  });
});

describe('an adjusted root in a session loop', () => {
  it("answers the contract's quote at every session, as it does outside a loop", async () => {
    const bids: (number | null)[] = [];
    for (const session of SESSIONS) {
      const quote = await store.at(etWallToSeconds(session, '16:30')).options.quotes(ADJUSTED);
      bids.push(quote.length === 0 ? null : (quote.columns.bid[0] ?? null));
    }
    expect(bids).toEqual([8.7, 8.8, 8.9, 9, 9.1, 9.2]);
  });

  it('gives its terms under the underlying the store files it under', async () => {
    const [terms] = await store.contracts([ADJUSTED]);
    expect(terms).toMatchObject({ symbol: ADJUSTED, underlying: 'AAPL', root: 'AAPL1', strike: 175 });
  });
});
