/**
 * The API face end to end: real vendor files ingested with the CLI into a store on disk, then every
 * endpoint asked through `openStore(…).request` and through `pitchain request`, and compared with the
 * documented example bodies (keys, key order, JSON types).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { MarketDataError } from '../src/errors.js';
import { openStore, type Store } from '../src/library/store.js';
import { ensureBuilt, runCli } from './helpers/build.js';
import { sharedPath, withData } from './helpers/shared-data.js';
import { example, shapeMismatches } from './query/helpers/shape.js';

const NOW = '2018-03-01T12:00:00-05:00';
const GREEKS = ['iv', 'delta', 'gamma', 'theta', 'vega'];
// HistoricalOptionData files carry no bid/ask sizes.
const NO_SIZES = ['bidSize', 'askSize'];

const SPXW = 'data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv';
const { afterAll, beforeAll, describe, it } = withData([SPXW]);
const EXAMPLES = ['options_chain', 'options_lookup', 'stocks_candles', 'stocks_bulkcandles', 'stocks_quotes'];
const docs = withData(
  [...EXAMPLES, 'stocks_prices', 'markets_status'].map((name) => `spec/examples/${name}.json`),
);

let dir: string;
let store: Store;

async function cli(...args: string[]) {
  return runCli(args, { timeoutMs: 120_000 });
}

beforeAll(async () => {
  await ensureBuilt();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-face-'));
  const options = await cli('ingest', '--store', dir, '--format', 'hod', sharedPath(SPXW));
  expect(options.stderr).toBe('');
  expect(options.stdout).toMatch(/^data version: [0-9a-f]{16} \(was [0-9a-f]{16}\)$/m);
  const bars = await cli(
    'ingest',
    '--store',
    dir,
    '--format',
    'candles',
    sharedPath('data/stocks/lean_daily_spy_raw_19980102_20210331.csv'),
  );
  expect(bars.code).toBe(0);
  store = await openStore(dir, { now: NOW, threads: 2 });
}, 300_000);

afterAll(async () => {
  store?.close();
  if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
});

const ask = async (target: string, now?: string) => {
  const res = await store.request(target, now === undefined ? {} : { now });
  return {
    status: res.status,
    json: res.body === '' ? {} : (JSON.parse(res.body) as Record<string, unknown>),
    res,
  };
};

docs.describe('every endpoint answers in the shape of its documented example', () => {
  it('option chain, historical: Greeks null, OI of the row dated D, updated 16:00 ET, billed per 1,000', async () => {
    const { status, json, res } = await ask('/v1/options/chain/SPX/?date=2018-02-05&expiration=2018-02-28');
    expect(status).toBe(200);
    expect(shapeMismatches(json, example('options_chain.json'), [...GREEKS, ...NO_SIZES])).toEqual([]);
    const n = (json['optionSymbol'] as string[]).length;
    expect(n).toBeGreaterThan(100);
    expect(new Set(json['updated'] as number[])).toEqual(
      new Set([Date.parse('2018-02-05T21:00:00Z') / 1000]),
    );
    for (const greek of GREEKS) expect(new Set(json[greek] as unknown[])).toEqual(new Set([null]));
    expect(res.credits).toBe(Math.ceil(n / 1000));
  });

  it('option chain, current at T: Greeks present, quotes from the latest session known', async () => {
    const { status, json } = await ask(
      '/v1/options/chain/SPX/?expiration=2018-02-28&strike=2700',
      '2018-02-06T12:00:00-05:00',
    );
    expect(status).toBe(200);
    expect(shapeMismatches(json, example('options_chain.json'), NO_SIZES)).toEqual([]);
    expect(json['updated']).toEqual([1517864400, 1517864400]); // 2018-02-05 16:00 ET, the last close before T
    // Open interest settled from 2018-02-05 was published at 09:30 on the 6th: the file's row dated the 6th.
    expect(json['openInterest']).toEqual([2308, 10916]);
    // Once the contract has expired it is no longer listed in a current chain.
    expect((await ask('/v1/options/chain/SPX/?expiration=2018-02-28')).status).toBe(404);
  });

  it('option quotes, lookup, expirations and strikes', async () => {
    const quote = await ask('/v1/options/quotes/SPXW180228C02700000/?date=2018-02-05');
    expect(quote.status).toBe(200);
    expect(shapeMismatches(quote.json, example('options_chain.json'), [...GREEKS, ...NO_SIZES])).toEqual([]);
    const lookup = await ask('/v1/options/lookup/SPXW%202/28/18%20$2700%20Call/');
    expect(lookup).toMatchObject({ status: 200, json: { s: 'ok', optionSymbol: 'SPXW180228C02700000' } });
    expect(shapeMismatches(lookup.json, example('options_lookup.json'))).toEqual([]);
    const expirations = await ask('/v1/options/expirations/SPX/?date=2018-02-05');
    expect(expirations.json).toEqual({ s: 'ok', expirations: ['2018-02-28'], updated: 1517864400 });
    const strikes = await ask('/v1/options/strikes/SPX/?date=2018-02-05&expiration=2018-02-28');
    expect(Object.keys(strikes.json)).toEqual(['s', 'updated', '2018-02-28']);
  });

  it('stock candles, bulk candles, quotes, prices and market status', async () => {
    const candles = await ask('/v1/stocks/candles/D/SPY/?from=2018-02-01&to=2018-02-05');
    expect(candles.status).toBe(200);
    expect(Object.keys(candles.json)).toEqual(['s', 't', 'o', 'h', 'l', 'c', 'v']);
    expect(
      shapeMismatches(candles.json, {
        s: 'ok',
        ...orderedLike(example('stocks_candles.json'), ['t', 'o', 'h', 'l', 'c', 'v']),
      }),
    ).toEqual([]);
    const bulk = await ask('/v1/stocks/bulkcandles/D/?symbols=SPY&date=2018-02-05');
    expect(shapeMismatches(bulk.json, example('stocks_bulkcandles.json'))).toEqual([]);
    const quote = await ask('/v1/stocks/quotes/SPY/');
    expect(quote.status).toBe(200);
    expect(Object.keys(quote.json)).toEqual(Object.keys(example('stocks_quotes.json')));
    const prices = await ask('/v1/stocks/prices/?symbols=SPY');
    expect(shapeMismatches(prices.json, example('stocks_prices.json'))).toEqual([]);
    const status = await ask('/v1/markets/status/?date=2018-02-05');
    expect(status.json).toEqual({ s: 'ok', date: [1517806800], status: ['open'] });
    expect(shapeMismatches(status.json, example('markets_status.json'))).toEqual([]);
  });
});

describe('failures side by side with successes', () => {
  it('refuses a bad OCC symbol with the fixed 400 and a date in a current request with the other', async () => {
    expect(await ask('/v1/options/quotes/SPXW180230C02700000/')).toMatchObject({
      status: 400,
      json: { s: 'error', errmsg: 'Invalid option symbol. Use valid OCC symbology for the option symbol.' },
    });
    expect(await ask('/v1/options/chain/SPX/?date=2018-02-05&mode=live')).toMatchObject({
      status: 400,
      json: { s: 'error', errmsg: 'Invalid date. The date parameter is used for historical queries only.' },
    });
    expect(await ask('/v1/options/chain/QQQ/?date=2018-02-05')).toMatchObject({
      status: 404,
      json: { s: 'no_data', errmsg: 'Symbol not found.' },
    });
    expect(await ask('/v1/options/chain/SPX/?date=2018-02-19')).toMatchObject({
      status: 404,
      json: { s: 'no_data', errmsg: 'Market closed on this date.' },
    });
  });

  it('answers 413 for an intraday span of a year and allows one second less', async () => {
    const year = await ask(
      '/v1/stocks/candles/1/SPY/?from=2017-01-03T09:30:00-05:00&to=2018-01-03T09:30:00-05:00',
    );
    expect(year.status).toBe(413);
    const less = await ask(
      '/v1/stocks/candles/1/SPY/?from=2017-01-03T09:30:00-05:00&to=2018-01-03T09:29:59-05:00',
    );
    expect(less.status).not.toBe(413);
  });

  it('gives typed endpoint functions the same answers, throwing MarketDataError for errors', async () => {
    const chain = await store.options.chain('SPX', {
      date: '2018-02-05',
      expiration: '2018-02-28',
      side: 'put',
      strike: 2700,
    });
    expect(chain.columns.optionSymbol).toEqual(['SPXW180228P02700000']);
    expect(chain.length).toBe(1);
    const body = JSON.parse(
      (
        await store.request(
          '/v1/options/chain/SPX/?date=2018-02-05&expiration=2018-02-28&side=put&strike=2700',
        )
      ).body,
    ) as Record<string, unknown[]>;
    for (const [key, values] of Object.entries(chain.columns))
      expect([key, values]).toEqual([key, body[key]]);
    expect(chain.meta).toMatchObject({ credits: 1, lookAhead: [], mode: 'historical', status: 200 });
    const refused = await store.options.quotes('nope').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MarketDataError);
    expect((refused as MarketDataError).status).toBe(400);
    const none = await store.options.chain('SPX', { date: '2018-02-05' });
    expect([none.length, none.meta.noData, none.columns.bid]).toEqual([0, true, []]);
  });
});

describe('pitchain request', () => {
  it('prints the body as the server would, and with -i the status line and headers first', async () => {
    const target =
      '/v1/options/chain/SPX/?date=2018-02-05&expiration=2018-02-28&strike=2700&columns=optionSymbol,openInterest';
    const plain = await cli('request', '--store', dir, '--now', NOW, target);
    expect([plain.code, plain.stdout]).toEqual([
      0,
      '{"optionSymbol":["SPXW180228C02700000","SPXW180228P02700000"],"openInterest":[2122,13038]}\n',
    ]);
    const included = await cli('request', '--store', dir, '--now', NOW, '-i', target);
    const [head, body] = included.stdout.split('\r\n\r\n');
    const lines = head!.split('\r\n');
    expect(lines[0]).toBe('HTTP/1.1 200 OK');
    expect(lines).toContain('X-Api-Ratelimit-Consumed: 1');
    expect(lines).toContain('Content-Type: application/json');
    expect(body).toBe(
      '{"optionSymbol":["SPXW180228C02700000","SPXW180228P02700000"],"openInterest":[2122,13038]}',
    );
    const bad = await cli('request', '--store', dir, '--now', NOW, '-f', '/v1/options/quotes/BAD/');
    expect([bad.code, bad.stdout]).toEqual([
      22,
      '{"s":"error","errmsg":"Invalid option symbol. Use valid OCC symbology for the option symbol."}\n',
    ]);
  });
});

function orderedLike(body: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, body[k]]));
}
