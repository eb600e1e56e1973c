/**
 * A contract whose root is not its underlying's own (AAPL1 under AAPL, after a corporate action) asked
 * session after session, as a backtest marks what it holds: the loop's blocks must find it under the
 * underlying its source files it under, not the one its root would suggest.
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
const SESSIONS = ['2024-03-11', '2024-03-12', '2024-03-13', '2024-03-14', '2024-03-15', '2024-03-18'];
const ADJUSTED = 'AAPL1240419C00175000';
const CSV = [
  'Underlying,Root,Expiration,Type,Strike,Bid,Ask,Date',
  ...SESSIONS.flatMap((session, i) => [
    `AAPL,AAPL,2024-04-19,call,175,${(3 + i / 10).toFixed(2)},${(3.1 + i / 10).toFixed(2)},${session}`,
    `AAPL,AAPL1,2024-04-19,call,175,${(9 + i / 10).toFixed(2)},${(9.1 + i / 10).toFixed(2)},${session}`,
  ]),
].join('\n');

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-adjusted-loop-'));
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

describe('an adjusted root in a session loop', () => {
  it("answers the contract's quote at every session, as it does outside a loop", async () => {
    const bids: (number | null)[] = [];
    for (const session of SESSIONS) {
      const quote = await store.at(etWallToSeconds(session, '16:30')).options.quotes(ADJUSTED);
      bids.push(quote.length === 0 ? null : (quote.columns.bid[0] ?? null));
    }
    expect(bids).toEqual([9, 9.1, 9.2, 9.3, 9.4, 9.5]);
  });

  it('gives its terms under the underlying the store files it under', async () => {
    const [terms] = await store.contracts([ADJUSTED]);
    expect(terms).toMatchObject({ symbol: ADJUSTED, underlying: 'AAPL', root: 'AAPL1', strike: 175 });
  });
});
