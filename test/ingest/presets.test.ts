/**
 * The vendor presets of the `csv` format: for each, a small file written in the vendor's documented layout
 * (header exactly as documented) ingests into a store, and the chain it answers is asserted field by field
 * with the instant each field is known at (docs/vendor-formats.md).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitStaged, type StageFilesResult, stageFiles } from '../../src/ingest/ingest.js';
import { openStore, type Store } from '../../src/library/store.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { REPO_ROOT } from '../helpers/paths.js';

const vendorFile = (name: string) => path.join(REPO_ROOT, 'test/fixtures/ingest/vendors', name);
const at = (iso: string) => Date.parse(iso) / 1000;

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-presets-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** A store holding `file` ingested with the preset; the staged rows of its quotes and open interest. */
async function ingest(
  name: string,
  file: string,
  options: { mapping: string; symbol?: string },
): Promise<{
  store: Store;
  staged: StageFilesResult;
  quotes: Record<string, unknown>[];
  oi: Record<string, unknown>[];
}> {
  const storeDir = path.join(dir, name);
  const tx = await WriteTransaction.begin(storeDir, { create: true });
  const staged = await stageFiles(tx.sql, [file], 'csv', options);
  const rows = async (query: string) => tx.sql.all<Record<string, unknown>>(query);
  const quotes = await rows(
    `SELECT option_symbol, underlying, CAST(session_date AS VARCHAR) AS session_date, quote_time, volume_time,
            CAST(bid AS DOUBLE) AS bid, CAST(ask AS DOUBLE) AS ask, bid_size, ask_size, CAST(last AS DOUBLE) AS last,
            volume, CAST(underlying_price AS DOUBLE) AS underlying_price, CAST(iv AS DOUBLE) AS iv,
            CAST(delta AS DOUBLE) AS delta, CAST(gamma AS DOUBLE) AS gamma, CAST(theta AS DOUBLE) AS theta,
            CAST(vega AS DOUBLE) AS vega
     FROM option_quotes ORDER BY option_symbol`,
  );
  const oi = await rows(
    `SELECT option_symbol, CAST(settled_session AS VARCHAR) AS settled_session, published_at, open_interest
     FROM open_interest ORDER BY option_symbol`,
  );
  await commitStaged(tx, staged);
  return { store: await openStore(storeDir, { threads: 1 }), staged, quotes, oi };
}

describe('optionsdx (EOD: q = QUOTE_READTIME, 16:00 ET; no open interest)', () => {
  let result: Awaited<ReturnType<typeof ingest>>;
  beforeAll(async () => {
    result = await ingest('optionsdx', vendorFile('spy_eod_202112.txt'), {
      mapping: 'optionsdx',
      symbol: 'SPY',
    });
  });
  afterAll(() => result.store.close());

  it('stages a call and a put per row, every field known at the 16:00 ET quote time', () => {
    const q = at('2021-12-01T16:00:00-05:00');
    const common = {
      underlying: 'SPY',
      session_date: '2021-12-01',
      quote_time: q,
      volume_time: q,
      underlying_price: 450.44,
    };
    expect(result.quotes).toEqual([
      {
        option_symbol: 'SPY211217C00450000',
        ...common,
        bid: 9.4,
        ask: 9.6,
        bid_size: 12,
        ask_size: 30,
        last: 9.5,
        volume: 1500,
        iv: 0.25,
        delta: 0.52,
        gamma: 0.02,
        theta: -0.21,
        vega: 0.45,
      },
      {
        option_symbol: 'SPY211217C00455000',
        ...common,
        bid: 6.9,
        ask: 7.1,
        bid_size: 5,
        ask_size: 7,
        last: null,
        volume: null,
        iv: 0.24,
        delta: 0.4,
        gamma: 0.02,
        theta: -0.2,
        vega: 0.44,
      },
      {
        option_symbol: 'SPY211217P00450000',
        ...common,
        bid: 8.7,
        ask: 8.9,
        bid_size: 40,
        ask_size: 25,
        last: 8.8,
        volume: 2100,
        iv: 0.26,
        delta: -0.48,
        gamma: 0.02,
        theta: -0.19,
        vega: 0.45,
      },
      {
        option_symbol: 'SPY211217P00455000',
        ...common,
        bid: 11.2,
        ask: 11.5,
        bid_size: 3,
        ask_size: 4,
        last: 11.3,
        volume: 10,
        iv: 0.25,
        delta: -0.6,
        gamma: 0.02,
        theta: -0.18,
        vega: 0.44,
      },
    ]);
    expect(result.oi).toEqual([]);
    expect(result.staged.files[0]!.quality).toMatchObject({
      rows: 4,
      sessions: 1,
      contracts: 4,
      missingOpenInterest: 4,
    });
  });

  it('answers the dated chain with those quotes, updated at 16:00 ET, and no open interest', async () => {
    const chain = await result.store.options.chain('SPY', { date: '2021-12-01' });
    const c = chain.columns;
    // Calls, then puts, each by strike.
    expect(c.optionSymbol).toEqual([
      'SPY211217C00450000',
      'SPY211217C00455000',
      'SPY211217P00450000',
      'SPY211217P00455000',
    ]);
    expect(c.bid).toEqual([9.4, 6.9, 8.7, 11.2]);
    expect(c.ask).toEqual([9.6, 7.1, 8.9, 11.5]);
    expect(c.mid).toEqual([9.5, 7, 8.8, 11.35]);
    expect(c.bidSize).toEqual([12, 5, 40, 3]);
    expect(c.askSize).toEqual([30, 7, 25, 4]);
    expect(c.last).toEqual([9.5, null, 8.8, 11.3]);
    expect(c.volume).toEqual([1500, null, 2100, 10]); // the file leaves it empty
    expect(c.openInterest).toEqual([null, null, null, null]);
    expect(c.underlyingPrice).toEqual([450.44, 450.44, 450.44, 450.44]);
    expect(c.updated).toEqual(Array(4).fill(at('2021-12-01T16:00:00-05:00')));
  });
});
