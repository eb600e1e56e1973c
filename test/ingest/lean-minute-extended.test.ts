/**
 * Lean minute files ingested with the `lean-minute` preset into a store on disk, then asked through the
 * API face: the store keeps the pre- and post-market bars, and the candles endpoint's `extended` decides.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { commitStaged, stageFiles } from '../../src/ingest/ingest.js';
import { openStore, type Store } from '../../src/library/store.js';
import { etWallToSeconds } from '../../src/market-time/index.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { sharedPath, withData } from '../helpers/shared-data.js';

const NOW = '2013-10-07T12:00:00-04:00';
const MINUTE = 'data/stocks/lean_minute/20131004_spy_minute_trade.csv';
const FILE = sharedPath(MINUTE);
const { afterAll, beforeAll, describe, it } = withData([MINUTE]);

let dir: string;
let store: Store;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-lean-minute-'));
  const tx = await WriteTransaction.begin(dir, { create: true });
  try {
    await commitStaged(tx, await stageFiles(tx.sql, [FILE], 'candles', { mapping: 'lean-minute' }));
  } catch (error) {
    await tx.abort();
    throw error;
  }
  store = await openStore(dir, { now: NOW, threads: 1 });
});

afterAll(async () => {
  store?.close();
  if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
});

// A range rather than `date=`: a dated request knows its session only through the close (no post-market).
const times = async (query: string): Promise<number[]> => {
  const res = await store.request(`/v1/stocks/candles/1/SPY/?from=2013-10-04&to=2013-10-04${query}`);
  expect(res.status).toBe(200);
  return (JSON.parse(res.body) as { t: number[] }).t;
};

describe('lean-minute bars through the candles endpoint', () => {
  it('answers the 390 regular-hours bars by default', async () => {
    const t = await times('');
    expect(t).toHaveLength(390);
    expect([t[0], t.at(-1)]).toEqual([
      etWallToSeconds('2013-10-04', '09:30'),
      etWallToSeconds('2013-10-04', '15:59'),
    ]);
  });

  it('answers the pre- and post-market bars too with extended=true', async () => {
    const t = await times('&extended=true');
    expect(t).toHaveLength(711);
    expect([t[0], t.at(-1)]).toEqual([
      etWallToSeconds('2013-10-04', '04:06'),
      etWallToSeconds('2013-10-04', '19:59'),
    ]);
  });
});
