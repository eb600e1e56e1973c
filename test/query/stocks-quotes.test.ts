import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prices, stockPrices, stockPricesList } from '../../src/query/endpoints/stocks-prices.js';
import {
  bulkQuotes,
  quotes,
  stockBulkQuotes,
  stockQuotes,
  stockQuotesList,
} from '../../src/query/endpoints/stocks-quotes.js';
import type { AsOf } from '../../src/query/types.js';
import { StoreCache } from '../../src/store/cache.js';
import { sharedJson, withData } from '../helpers/shared-data.js';
import {
  buildStore,
  context,
  et,
  outcome,
  shape,
  stageBars,
  stageSplits,
  type TestStore,
} from './stock-helpers/store.js';
import { dailyBar, thanksgivingBars } from './stock-helpers/synthetic.js';

let store: TestStore;
beforeAll(async () => {
  store = await buildStore(async (sql) => {
    await stageBars(sql, [
      ...thanksgivingBars(),
      dailyBar('SPL', '2023-11-22', [200, 202, 198, 201, 1000]),
      dailyBar('SPL', '2023-11-24', [100.5, 101, 100, 100.75, 3000]),
    ]);
    await stageSplits(sql, [{ symbol: 'SPL', exDate: '2023-11-24', ratio: 2 }]);
  });
});
afterAll(() => store.close());

// 2023-11-27 10:00:30 ET: TEST's minute bars 09:30–09:59 are known, its last daily bar is 11-24's.
const T = et('2023-11-27', '10:00:30');

type Ask = {
  path?: Record<string, string>;
  query?: Record<string, string>;
  now?: number;
  asOf?: AsOf;
};
const ask = (handler: typeof quotes, { now = T, ...rest }: Ask) =>
  outcome(handler(context(store.sql, { now, ...rest })));

const example = (name: string) => sharedJson(`spec/examples/${name}`);
/** The documented example bodies these tests compare with. */
const docs = withData(['spec/examples/stocks_quotes.json', 'spec/examples/stocks_prices.json']);

describe('stock quotes', () => {
  it('builds quotes from the bars known at the cutoff, in request order, skipping unknown symbols', async () => {
    expect(await ask(quotes, { query: { symbols: 'abc,NOPE,TEST' } })).toEqual({
      status: 200,
      body: {
        s: 'ok',
        symbol: ['ABC', 'TEST'],
        ask: [53.5, 104.3],
        askSize: [0, 0],
        bid: [53.5, 104.3],
        bidSize: [0, 0],
        mid: [53.5, 104.3],
        last: [53.5, 104.3],
        change: [1, 0.3],
        changepct: [0.019, 0.0029],
        volume: [260, 735],
        updated: [et('2023-11-24', '13:00'), et('2023-11-27', '10:00')],
      },
    });
  });

  it('quotes a symbol stored as daily bars only at an instant of a session, as the statements do', async () => {
    // The latest daily bar known (11-24) is before the cutoff's date: the symbol's minute files are asked,
    // and it has none. A cache too small to keep its daily bars answers by the statements alone.
    const request = { now: T, path: { symbol: 'SPL' } };
    const memory = await outcome(quotes(context(store.sql, request)));
    const statements = await outcome(
      quotes({
        ...context(store.sql, request),
        cache: new StoreCache(() => 'test', { sessionCacheBytes: 1024 }),
      }),
    );
    expect(memory.status).toBe(200);
    expect((memory.body as { last: number[] }).last).toEqual([100.75]);
    expect(memory).toEqual(statements);
  });

  it('adds the 52-week range for a single symbol and the session candle when asked', async () => {
    const { body } = await ask(quotes, {
      path: { symbol: 'TEST' },
      query: { '52week': 'true', candle: 'true' },
    });
    expect(body).toMatchObject({
      symbol: ['TEST'],
      last: [104.3],
      '52weekHigh': [105],
      '52weekLow': [99],
      o: [104],
      h: [104.32],
      l: [103.98],
      c: [104.3],
    });
    expect(Object.keys(body as object).slice(-6)).toEqual(['52weekHigh', '52weekLow', 'o', 'h', 'l', 'c']);
    const multi = await ask(quotes, { query: { symbols: 'TEST,ABC', '52week': 'true' } });
    expect(Object.keys(multi.body as object)).not.toContain('52weekHigh');
  });

  it('follows the as-of: delayed by 15 minutes, and the last closed session in historical mode', async () => {
    const delayed: AsOf = { kind: 'current', cutoffSeconds: T, eodOnly: false, maxSession: null };
    const later = await ask(quotes, { path: { symbol: 'TEST' }, now: T + 900, asOf: delayed });
    expect(later).toEqual(await ask(quotes, { path: { symbol: 'TEST' } }));
    const historical: AsOf = {
      kind: 'current',
      cutoffSeconds: et('2023-11-24', '16:15'),
      eodOnly: true,
      maxSession: '2023-11-24',
    };
    expect((await ask(quotes, { path: { symbol: 'TEST' }, asOf: historical })).body).toMatchObject({
      last: [104],
      change: [1],
      changepct: [0.0097],
      volume: [600],
      updated: [et('2023-11-24', '13:00')],
    });
  });

  it('measures the change against the split-adjusted previous close', async () => {
    const { body } = await ask(quotes, { path: { symbol: 'SPL' }, now: et('2023-11-24', '16:30') });
    expect(body).toMatchObject({ last: [100.75], change: [0.25], changepct: [0.0025], volume: [3000] });
  });

  it('answers an unknown single symbol with "Symbol not found." and unknown lists with no_data', async () => {
    const notFound = { status: 404, body: { s: 'no_data', errmsg: 'Symbol not found.' } };
    expect(await ask(quotes, { path: { symbol: 'NOPE' } })).toEqual(notFound);
    expect(await ask(quotes, { path: { symbol: 'TEST' }, now: et('2023-11-01') })).toEqual(notFound);
    expect(await ask(quotes, { query: { symbols: 'NOPE,ZZZ' } })).toEqual({
      status: 404,
      body: { s: 'no_data' },
    });
  });

  it('refuses a missing or empty symbols list and bad booleans', async () => {
    const refused = (errmsg: string) => ({ status: 400, body: { s: 'error', errmsg } });
    expect(await ask(quotes, {})).toEqual(
      refused('Invalid parameter symbols: a comma-separated list of symbols is required.'),
    );
    expect(await ask(quotes, { query: { symbols: ' , ' } })).toEqual(
      refused('Invalid parameter symbols: expected a comma-separated list of symbols'),
    );
    expect(await ask(quotes, { path: { symbol: 'TEST' }, query: { candle: 'maybe' } })).toEqual(
      refused('Invalid parameter candle: expected true or false, got "maybe"'),
    );
  });

  it('serves every stored symbol on bulkquotes with snapshot=true', async () => {
    const { body } = await ask(bulkQuotes, { query: { snapshot: 'true' } });
    expect((body as { symbol: string[] }).symbol).toEqual(['ABC', 'SPL', 'TEST']);
    expect((await ask(quotes, { query: { snapshot: 'true' } })).status).toBe(400);
  });

  docs.it(
    "has the example's keys in order and its types: no nulls, quotes at the last price with no size",
    async () => {
      const { body } = await ask(quotes, { query: { symbols: 'TEST,ABC' } });
      expect(shape(JSON.parse(JSON.stringify(body)))).toEqual(shape(example('stocks_quotes.json')));
      const b = body as Record<string, unknown[]>;
      expect([b['bid'], b['ask'], b['mid'], b['bidSize'], b['askSize']]).toEqual([
        b['last'],
        b['last'],
        b['last'],
        [0, 0],
        [0, 0],
      ]);
    },
  );

  it('declares its routes, billing and human keys', async () => {
    const result = await quotes(context(store.sql, { now: T, path: { symbol: 'TEST' } }));
    expect(result.kind === 'ok' && [result.billing, result.rowKey, result.dataAsOfSeconds]).toEqual([
      'per-symbol-with-quote',
      'symbol',
      et('2023-11-27', '10:00'),
    ]);
    expect(result.kind === 'ok' && result.fields.map((f) => f.human)).toEqual([
      'Symbol',
      'Ask',
      'Ask Size',
      'Bid',
      'Bid Size',
      'Mid',
      'Last',
      'Change $',
      'Change %',
      'Volume',
      'Date',
    ]);
    expect(
      [stockQuotes, stockQuotesList, stockBulkQuotes].map((e) => [
        e.service,
        e.pattern,
        e.family,
        e.cacheable,
      ]),
    ).toEqual([
      ['/v1/stocks/quotes/', '/v1/stocks/quotes/:symbol/', 'stocks', true],
      ['/v1/stocks/quotes/', '/v1/stocks/quotes/', 'stocks', true],
      ['/v1/stocks/bulkquotes/', '/v1/stocks/bulkquotes/', 'stocks', true],
    ]);
  });
});

describe('stock prices', () => {
  it('gives the latest price known as mid, with the quote change', async () => {
    expect(await ask(prices, { query: { symbols: 'TEST,ABC' } })).toEqual({
      status: 200,
      body: {
        s: 'ok',
        symbol: ['TEST', 'ABC'],
        mid: [104.3, 53.5],
        change: [0.3, 1],
        changepct: [0.0029, 0.019],
        updated: [et('2023-11-27', '10:00'), et('2023-11-24', '13:00')],
      },
    });
  });

  docs.it('answers unknown symbols like quotes and matches the example shape', async () => {
    expect(await ask(prices, { path: { symbol: 'NOPE' } })).toEqual({
      status: 404,
      body: { s: 'no_data', errmsg: 'Symbol not found.' },
    });
    const { body } = await ask(prices, { path: { symbol: 'TEST' } });
    expect(shape(JSON.parse(JSON.stringify(body)))).toEqual(shape(example('stocks_prices.json')));
  });

  it('declares the prices family, quote billing and human keys', async () => {
    const result = await prices(context(store.sql, { now: T, path: { symbol: 'TEST' } }));
    expect(result.kind === 'ok' && [result.billing, result.fields.map((f) => f.human)]).toEqual([
      'per-symbol-with-quote',
      ['Symbol', 'Mid', 'Change $', 'Change %', 'Date'],
    ]);
    expect([stockPrices, stockPricesList].map((e) => [e.pattern, e.family, e.cacheable, e.dated])).toEqual([
      ['/v1/stocks/prices/:symbol/', 'prices', false, false],
      ['/v1/stocks/prices/', 'prices', false, false],
    ]);
  });
});
