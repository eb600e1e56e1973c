/**
 * The typed results' column types say what the endpoints answer: each list of keys below is checked
 * against its type by the type checker (`satisfies`) and against a real answer of the sample store here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  BulkCandleColumns,
  CandleColumns,
  MarketStatusColumns,
  StockPriceColumns,
  StockQuoteColumns,
} from '../../src/library/params.js';
import { openStore, type Store } from '../../src/library/store.js';

const QUOTE_KEYS = [
  'symbol',
  'ask',
  'askSize',
  'bid',
  'bidSize',
  'mid',
  'last',
  'change',
  'changepct',
  'volume',
  'updated',
] as const satisfies readonly (keyof StockQuoteColumns)[];

describe('typed results of the stock and market endpoints', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore('data/sample', { now: '2020-03-16T15:45:00-04:00', threads: 1 });
  });
  afterAll(() => store.close());

  it('stock quotes: the keys and value types of StockQuoteColumns, with the optional ones when asked', async () => {
    const plain = await store.stocks.quotes('SPY');
    expect(Object.keys(plain.columns)).toEqual(QUOTE_KEYS);
    expect(typeof plain.columns.symbol[0]).toBe('string');
    expect(typeof plain.columns.mid[0]).toBe('number');
    const full = await store.stocks.quotes('SPY', { '52week': true, candle: true });
    const optional = [
      '52weekHigh',
      '52weekLow',
      'o',
      'h',
      'l',
      'c',
    ] as const satisfies readonly (keyof StockQuoteColumns)[];
    expect(Object.keys(full.columns)).toEqual([...QUOTE_KEYS, ...optional]);
    expect(typeof full.columns['52weekHigh']?.[0]).toBe('number');
  });

  it('prices, candles, bulk candles and market status', async () => {
    const prices = await store.stocks.prices(['SPY', 'AAPL']);
    expect(Object.keys(prices.columns)).toEqual([
      'symbol',
      'mid',
      'change',
      'changepct',
      'updated',
    ] satisfies (keyof StockPriceColumns)[]);
    const candles = await store.stocks.candles('D', 'SPY', { from: '2020-03-02', to: '2020-03-03' });
    expect(Object.keys(candles.columns).sort()).toEqual(
      (['c', 'h', 'l', 'o', 't', 'v'] satisfies (keyof CandleColumns)[]).sort(),
    );
    const bulk = await store.stocks.bulkCandles('D', { symbols: 'SPY,AAPL' });
    expect(Object.keys(bulk.columns).sort()).toEqual(
      (['c', 'h', 'l', 'o', 'symbol', 't', 'v'] satisfies (keyof BulkCandleColumns)[]).sort(),
    );
    const status = await store.markets.status({ from: '2020-03-01', to: '2020-03-03' });
    expect(status.columns.status).toEqual(['closed', 'open', 'open'] satisfies MarketStatusColumns['status']);
    expect(typeof status.columns.date[0]).toBe('number');
  });

  it('lookup answers in a scalar and strikes by expiration', async () => {
    const lookup = await store.options.lookup('SPY 3/20/20 240 put');
    expect([Object.keys(lookup.columns), lookup.meta.scalars['optionSymbol']]).toEqual([
      [],
      'SPY200320P00240000',
    ]);
    const strikes = await store.options.strikes('SPY', { date: '2020-03-13' });
    const first = Object.values(strikes.columns)[0];
    expect(typeof first?.[0]).toBe('number');
  });

  it('answers no data in one shape: empty columns with the endpoint keys, meta.noData and the message', async () => {
    const shapeOf = (result: { length: number; columns: object; meta: object }) => ({
      length: result.length,
      keys: Object.keys(result.columns).length,
      noData: (result.meta as { noData?: true }).noData,
      errmsg: (result.meta as { errmsg?: string }).errmsg,
    });
    const unknown = await store.options.chain('QQQ', { date: '2020-03-13' });
    expect(shapeOf(unknown)).toEqual({ length: 0, keys: 25, noData: true, errmsg: 'Symbol not found.' });
    const closed = await store.options.chain('SPY', { date: '2020-03-14' });
    expect(shapeOf(closed)).toEqual({
      length: 0,
      keys: 25,
      noData: true,
      errmsg: 'Market closed on this date.',
    });
    expect(closed.columns.bid).toEqual([]);
    const seenAt = await store.at('2020-03-16T15:45:00-04:00').options.chain('SPY', { date: '2020-03-14' });
    expect(shapeOf(seenAt)).toEqual(shapeOf(closed));
    const none = await store.stocks.candles('D', 'SPY', { from: '1999-01-04', to: '1999-01-05' });
    expect(shapeOf(none)).toMatchObject({ length: 0, keys: 6, noData: true });
    expect(none.columns.c).toEqual([]);
    const unknownStock = await store.stocks.quotes('ZZZZ');
    expect(shapeOf(unknownStock)).toEqual({ length: 0, keys: 11, noData: true, errmsg: 'Symbol not found.' });
  });

  it('answers no data with the keys of an answer, in its order', async () => {
    const keys = (result: { columns: object }) => Object.keys(result.columns);
    const pairs = [
      [await store.stocks.quotes('SPY'), await store.stocks.quotes('ZZZZ')],
      [await store.stocks.prices('SPY'), await store.stocks.prices('ZZZZ')],
      [
        await store.stocks.candles('D', 'SPY', { from: '2020-03-02', to: '2020-03-03' }),
        await store.stocks.candles('D', 'SPY', { from: '1999-01-04', to: '1999-01-05' }),
      ],
    ] as const;
    for (const [answer, none] of pairs) {
      expect([answer.meta.noData, none.meta.noData]).toEqual([undefined, true]);
      expect(keys(none)).toEqual(keys(answer));
    }
  });
});
