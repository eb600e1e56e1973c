import { afterAll, describe, expect, it } from 'vitest';
import { marketStatus, marketStatusEndpoint } from '../../src/query/endpoints/markets-status.js';
import { STOCK_ENDPOINTS } from '../../src/query/endpoints/stocks.js';
import { SqlSession } from '../../src/store/sql.js';
import { sharedJson, withData } from '../helpers/shared-data.js';
import { context, outcome, shape } from './stock-helpers/store.js';

// The endpoint reads no table; a bare session stands in for the store.
const sql = await SqlSession.open({ threads: 1 });
afterAll(() => sql.close());

// Friday 2023-11-24 12:00 ET (the day after Thanksgiving, an early close).
const NOW = Date.parse('2023-11-24T17:00:00Z') / 1000;
const midnight = (iso: string) => Date.parse(iso) / 1000;

const ask = (query: Record<string, string>, now = NOW) => outcome(marketStatus(context(sql, { now, query })));

describe('market status', () => {
  it('answers today (ET date of the clock) without parameters; a half day is open', async () => {
    expect(await ask({})).toEqual({
      status: 200,
      body: { s: 'ok', date: [midnight('2023-11-24T05:00:00Z')], status: ['open'] },
    });
  });

  it('lists every calendar day of a range, with holidays and weekends closed', async () => {
    expect(await ask({ from: '2023-11-22', to: '2023-11-27' })).toEqual({
      status: 200,
      body: {
        s: 'ok',
        date: [22, 23, 24, 25, 26, 27].map((d) => midnight(`2023-11-${d}T05:00:00Z`)),
        status: ['open', 'closed', 'open', 'closed', 'closed', 'open'],
      },
    });
  });

  it('gives 00:00 ET across the DST changes', async () => {
    expect((await ask({ from: '2024-03-09', to: '2024-03-11' })).body).toEqual({
      s: 'ok',
      date: ['2024-03-09T05:00:00Z', '2024-03-10T05:00:00Z', '2024-03-11T04:00:00Z'].map(midnight),
      status: ['closed', 'closed', 'open'],
    });
    expect(((await ask({ date: '2024-11-04' })).body as { date: number[] }).date).toEqual([
      midnight('2024-11-04T05:00:00Z'),
    ]);
  });

  it('reads relative dates and countback against the clock', async () => {
    const days = async (query: Record<string, string>) =>
      ((await ask(query)).body as { date: number[]; status: string[] }).status;
    expect(await days({ date: 'yesterday' })).toEqual(['closed']);
    expect(await days({ countback: '3', to: '2023-11-27' })).toEqual(['closed', 'closed', 'open']);
    expect(await days({ from: '-2 days', to: '2023-11-27' })).toEqual(['closed', 'closed', 'open']);
    expect(await days({ from: '2023-11-21' })).toEqual(['open', 'open', 'closed', 'open']);
    expect(await days({ date: String(NOW) })).toEqual(['open']);
  });

  it('is null outside the calendar years', async () => {
    expect((await ask({ date: '1980-01-02' })).body).toMatchObject({ status: [null] });
    expect((await ask({ date: '2040-01-02' })).body).toMatchObject({ status: [null] });
  });

  it('knows only the US; refuses bad values and combinations', async () => {
    const refused = (errmsg: string) => ({ status: 400, body: { s: 'error', errmsg } });
    expect((await ask({ country: 'us' })).status).toBe(200);
    expect(await ask({ country: 'CA' })).toEqual({ status: 404, body: { s: 'no_data' } });
    expect(await ask({ country: 'USA' })).toEqual(
      refused('Invalid parameter country: expected a two-letter ISO 3166 country code such as US.'),
    );
    expect(await ask({ date: 'someday' })).toEqual(
      refused('Invalid parameter date: Invalid date input "someday"'),
    );
    expect(await ask({ date: '2023-11-24', from: '2023-11-20' })).toEqual(
      refused('The date parameter cannot be combined with from, to or countback.'),
    );
    expect(await ask({ from: '2023-11-20', countback: '2' })).toEqual(
      refused('The from and countback parameters cannot be used together.'),
    );
    expect(await ask({ from: '2023-11-28', to: '2023-11-27' })).toEqual(
      refused('The from date is after the to date.'),
    );
    expect(await ask({ countback: '100001' })).toEqual(refused('Too many days: at most 100000 per request.'));
    expect(await ask({ from: '1800-01-01', to: '2100-01-01' })).toEqual(
      refused('Too many days: at most 100000 per request.'),
    );
  });

  withData(['spec/examples/markets_status.json']).it(
    'matches the example shape and declares itself',
    async () => {
      const example = sharedJson('spec/examples/markets_status.json');
      const { body } = await ask({ date: '2023-04-04' });
      expect(body).toEqual(example);
      expect(shape(body as Record<string, unknown>)).toEqual(shape(example));
      const result = await marketStatus(context(sql, { now: NOW }));
      expect(
        result.kind === 'ok' && [result.billing, result.rowKey, result.fields.map((f) => f.human)],
      ).toEqual(['per-response', 'date', ['Date', 'Status']]);
      expect([marketStatusEndpoint.pattern, marketStatusEndpoint.family, marketStatusEndpoint.dated]).toEqual(
        ['/v1/markets/status/', 'none', false],
      );
      expect(STOCK_ENDPOINTS.map((e) => e.pattern)).toEqual([
        '/v1/stocks/candles/:resolution/:symbol/',
        '/v1/stocks/bulkcandles/:resolution/',
        '/v1/stocks/quotes/:symbol/',
        '/v1/stocks/quotes/',
        '/v1/stocks/bulkquotes/',
        '/v1/stocks/prices/:symbol/',
        '/v1/stocks/prices/',
        '/v1/markets/status/',
      ]);
    },
  );
});
