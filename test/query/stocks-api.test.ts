import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STOCK_ENDPOINTS } from '../../src/query/endpoints/stocks.js';
import { INTRADAY_RANGE_TOO_LARGE } from '../../src/query/endpoints/stocks-candles.js';
import { Api } from '../../src/service/service.js';
import { buildStore, et, stageBars, type TestStore } from './stock-helpers/store.js';
import { thanksgivingBars } from './stock-helpers/synthetic.js';

// Through the request pipeline, as the default local account (paid, non-professional: stock data 15 min delayed).
let store: TestStore;
let api: Api;
beforeAll(async () => {
  store = await buildStore((sql) => stageBars(sql, thanksgivingBars()));
  api = new Api({ sql: store.sql, endpoints: STOCK_ENDPOINTS });
});
afterAll(() => store.close());

const get = async (target: string, now: number) => {
  const res = await api.request(target, { now });
  return { status: res.status, credits: res.credits, body: res.body === '' ? null : JSON.parse(res.body) };
};

describe('stock endpoints through the request pipeline', () => {
  it('serves candles with human keys and a dated session, billed per 1000 candles', async () => {
    const daily = await get(
      '/v1/stocks/candles/D/TEST/?from=2023-11-20&to=2023-11-22&human=true',
      et('2023-12-01'),
    );
    expect(daily).toEqual({
      status: 200,
      credits: 1,
      body: {
        Date: ['2023-11-20', '2023-11-21', '2023-11-22'].map((d) => et(d)),
        Open: [100, 101, 102],
        High: [102, 103, 104],
        Low: [99, 100, 101],
        Close: [101, 102, 103],
        Volume: [1000, 1100, 1200],
      },
    });
    const dated = await get('/v1/stocks/candles/H/TEST/?date=2023-11-24&columns=t', et('2023-12-01'));
    expect(dated.body).toEqual({
      t: ['09:30', '10:30', '11:30', '12:30'].map((time) => et('2023-11-24', time)),
    });
  });

  it('applies the 15-minute delay of the stock entitlement', async () => {
    const minutes = await get('/v1/stocks/candles/1/TEST/?date=2023-11-27&columns=t', et('2023-12-01'));
    expect((minutes.body as { t: number[] }).t.length).toBe(390);
    const live = await get('/v1/stocks/quotes/TEST/', et('2023-11-27', '10:15:30'));
    expect(live.body).toMatchObject({ last: [104.3], updated: [et('2023-11-27', '10:00')] });
  });

  it('passes refusals through with their status and errmsg, at no cost', async () => {
    expect(await get('/v1/stocks/candles/5/TEST/?from=2023-01-01&to=2024-01-01', et('2024-06-03'))).toEqual({
      status: 413,
      credits: 0,
      body: { s: 'error', errmsg: INTRADAY_RANGE_TOO_LARGE },
    });
    expect(await get('/v1/stocks/quotes/NOPE/', et('2023-12-01'))).toEqual({
      status: 404,
      credits: 0,
      body: { s: 'no_data', errmsg: 'Symbol not found.' },
    });
  });

  it('bills bulk candles per symbol and answers market status for any date', async () => {
    const bulk = await get('/v1/stocks/bulkcandles/D/?symbols=TEST,ABC&date=2023-11-24', et('2023-12-01'));
    expect([bulk.status, bulk.credits, bulk.body.symbol]).toEqual([200, 2, ['TEST', 'ABC']]);
    const status = await get(
      '/v1/markets/status/?date=yesterday&dateformat=timestamp',
      et('2023-11-24', '12:00'),
    );
    expect(status).toEqual({
      status: 200,
      credits: 1,
      body: { s: 'ok', date: ['2023-11-23T00:00:00-05:00'], status: ['closed'] },
    });
  });
});
