import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitStaged, stageFiles } from '../../src/ingest/ingest.js';
import { openStore, type Store } from '../../src/library/store.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { sharedPath, withData } from '../helpers/shared-data.js';

describe('typed results on the library face', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore('data/sample', { now: '2020-03-16T15:45:00-04:00', threads: 1 });
  });
  afterAll(() => store.close());

  it('gives the service columns typed, rows on demand, and Arrow', async () => {
    const chain = await store.options.chain('SPY', {
      date: '2020-03-13',
      dte: 30,
      side: 'put',
      strikeLimit: 2,
    });
    // Typed under strict: these assignments are checked by the compiler.
    const symbols: string[] = chain.columns.optionSymbol;
    const bids: (number | null)[] = chain.columns.bid;
    const strikes: number[] = chain.columns.strike;
    expect(symbols.length).toBe(chain.length);
    expect(bids.every((bid) => bid === null || typeof bid === 'number')).toBe(true);
    expect(Object.keys(chain.columns)).toEqual([
      'optionSymbol',
      'underlying',
      'expiration',
      'side',
      'strike',
      'firstTraded',
      'dte',
      'updated',
      'bid',
      'bidSize',
      'mid',
      'ask',
      'askSize',
      'last',
      'openInterest',
      'volume',
      'inTheMoney',
      'intrinsicValue',
      'extrinsicValue',
      'underlyingPrice',
      'iv',
      'delta',
      'gamma',
      'theta',
      'vega',
    ]);
    const [first] = chain.rows();
    expect(first).toMatchObject({ optionSymbol: symbols[0], strike: strikes[0], side: 'put', iv: null });
    const table = chain.toArrow();
    expect(table.numRows).toBe(chain.length);
    expect(table.schema.fields.map((f) => f.name)).toEqual(Object.keys(chain.columns));
    expect(table.getChild('optionSymbol')?.get(0)).toBe(symbols[0]);
    expect(table.getChild('strike')?.get(0)).toBe(strikes[0]);
    const knownAt = chain.knownAt()!;
    expect(knownAt.quoteTime).toEqual(chain.columns.updated);
    expect(knownAt.oiPublishedAt.every((t) => t === Date.parse('2020-03-13T13:30:00Z') / 1000)).toBe(true);
    expect(knownAt.volumeTime).toEqual(chain.columns.updated);
    expect((await store.stocks.candles('D', 'SPY', { from: '2020-03-09', to: '2020-03-13' })).knownAt()).toBe(
      undefined,
    );
    expect(chain.meta).toMatchObject({
      asOf: Date.parse('2020-03-16T19:45:00Z') / 1000,
      dataVersion: store.dataVersion,
      credits: 1, // a historical chain: 1 per 1,000 rows
      lookAhead: [],
      mode: 'historical',
      status: 200,
      scalars: {},
    });
  });

  it('bills a live chain one credit per contract and answers the same columns as the request', async () => {
    const live = await store.options.chain('SPY', { dte: 2, side: 'call', strikeLimit: 1 });
    expect(live.meta.credits).toBe(live.length);
    const body = JSON.parse(
      (await store.request('/v1/options/chain/SPY/?dte=2&side=call&strikeLimit=1')).body,
    );
    for (const key of Object.keys(live.columns)) expect(live.columns[key as 'bid']).toEqual(body[key]);
  });

  it('types the other endpoints: expirations with their updated scalar, candles, market status', async () => {
    const expirations = await store.options.expirations('SPY');
    expect(expirations.columns.expirations[0]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(typeof expirations.meta.scalars['updated']).toBe('number');
    const candles = await store.stocks.candles('D', 'SPY', { from: '2020-03-09', to: '2020-03-13' });
    expect(candles.length).toBe(5);
    const closes: number[] = candles.columns.c;
    expect(closes.every((c) => c > 0)).toBe(true);
    const status = await store.markets.status({ date: '2020-03-14' });
    expect(status.columns['status']).toEqual(['closed']);
    const quotes = await store.stocks.quotes(['SPY', 'AAPL']);
    expect(quotes.columns['symbol']).toEqual(['SPY', 'AAPL']);
  });

  it('returns no data as an empty result, and refuses bad parameters before asking', async () => {
    const none = await store.options.chain('SPY', { date: '2020-03-13', strike: 10_000 });
    expect([none.length, none.meta.noData, none.meta.credits]).toEqual([0, true, 0]);
    expect(none.meta.prevTime).toBeTypeOf('number');
    await expect(store.options.chain('SPY', { dte: {} as never })).rejects.toMatchObject({
      name: 'UsageError',
    });
    await expect(store.options.chain('SPY', {}, { now: 'yesterday-ish' })).rejects.toThrow(/Invalid instant/);
  });
});

const SPXW = 'data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv';

withData([SPXW]).describe('one cache keyed by the data version', () => {
  let dir: string;
  let files: string;
  let store: Store;

  /** The rows of the real SPXW file quoted on some dates, as a file of their own. */
  async function fileOf(name: string, dates: readonly string[]): Promise<string> {
    const [header, ...lines] = readFileSync(sharedPath(SPXW), 'utf8').trim().split(/\r?\n/);
    const file = path.join(files, name);
    await fs.writeFile(
      file,
      [header, ...lines.filter((line) => dates.some((d) => line.includes(d)))].join('\n'),
    );
    return file;
  }

  async function ingest(file: string): Promise<void> {
    const tx = await WriteTransaction.begin(dir, { create: true });
    await commitStaged(tx, await stageFiles(tx.sql, [file], 'hod'));
  }

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-cache-'));
    files = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-cache-files-'));
    await ingest(await fileOf('jan02.csv', ['01/02/2018']));
    store = await openStore(dir, { now: '2018-01-03T18:00:00-05:00', threads: 1 });
  });
  afterAll(async () => {
    store.close();
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(files, { recursive: true, force: true });
  });

  it('never serves an answer of the old version after refresh()', async () => {
    const target = '/v1/options/chain/SPX/?expiration=2018-01-31&side=put&strike=2700&columns=bid,updated';
    const before = await store.request(target);
    expect(before.status).toBe(200);
    expect((await store.request(target)).status).toBe(203); // the response cache at the same cutoff
    const oldVersion = store.dataVersion;
    await ingest(await fileOf('jan03.csv', ['01/03/2018']));
    expect(await store.refresh()).toBe(true);
    expect(store.dataVersion).not.toBe(oldVersion);
    const after = await store.request(target);
    expect(after.status).toBe(200);
    expect(JSON.parse(after.body).updated[0]).toBeGreaterThan(JSON.parse(before.body).updated[0]);
    expect([JSON.parse(before.body).bid, JSON.parse(after.body).bid]).toEqual([[22.5], [14.7]]);
    const typed = await store.options.chain('SPX', { expiration: '2018-01-31', side: 'put', strike: 2700 });
    expect(typed.meta.dataVersion).toBe(store.dataVersion);
    expect(typed.columns.updated).toEqual(JSON.parse(after.body).updated);
  });
});
