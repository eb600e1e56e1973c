/**
 * Contract classification from the data: a contract is nonstandard (adjusted) when its source files it under
 * another underlying than its root's own — the root change after a corporate action (AAPL1 under AAPL) —
 * and never because of the root's shape: a root ending in a digit (T001) is an ordinary root whose default
 * chain answers.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitStaged, stageFiles } from '../../src/ingest/ingest.js';
import { openStore, type Store } from '../../src/library/store.js';
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
const CSV = [
  'Underlying,Root,Expiration,Type,Strike,Bid,Ask,Date',
  'T001,T001,2024-04-19,call,25,1.10,1.20,2024-03-15',
  'AAPL,AAPL,2024-04-19,call,175,3.10,3.20,2024-03-15',
  'AAPL,AAPL1,2024-04-19,call,175,9.10,9.20,2024-03-15',
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
