import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkCandles, stockBulkCandles } from '../../src/query/endpoints/stocks-bulkcandles.js';
import { DIVIDEND_ONLY_UNSUPPORTED } from '../../src/query/endpoints/stocks-candles.js';
import type { AsOf } from '../../src/query/types.js';
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

const LATER = et('2023-12-01', '12:00');
const dated = (session: string): AsOf => ({ kind: 'dated', session });
const ask = (query: Record<string, string>, now = LATER, asOf?: AsOf, resolution = 'D') =>
  outcome(bulkCandles(context(store.sql, { now, path: { resolution }, query, ...(asOf ? { asOf } : {}) })));

describe('bulk candles', () => {
  it('answers one daily candle per symbol of a dated session, in request order', async () => {
    expect(await ask({ symbols: 'TEST,nope,ABC' }, LATER, dated('2023-11-24'))).toEqual({
      status: 200,
      body: {
        s: 'ok',
        symbol: ['TEST', 'ABC'],
        o: [103, 52.5],
        h: [105, 54],
        l: [102, 52],
        c: [104, 53.5],
        v: [600, 260],
        t: [et('2023-11-24'), et('2023-11-24')],
      },
    });
  });

  it('defaults to the latest session with data known: the session in progress from its minute bars', async () => {
    expect(await ask({ symbols: 'TEST,ABC' }, et('2023-11-27', '10:00:30'))).toEqual({
      status: 200,
      body: {
        s: 'ok',
        symbol: ['TEST'],
        o: [104],
        h: [104.32],
        l: [103.98],
        c: [104.3],
        v: [735],
        t: [et('2023-11-27')],
      },
    });
    const morning = await ask({ symbols: 'ABC,TEST' }, et('2023-11-27', '09:30'));
    expect(morning.body).toMatchObject({
      symbol: ['ABC', 'TEST'],
      c: [53.5, 104],
      t: [et('2023-11-24'), et('2023-11-24')],
    });
  });

  it('adjusts for splits known at the clock unless asked for raw prices', async () => {
    expect((await ask({ symbols: 'SPL' }, LATER, dated('2023-11-22'))).body).toMatchObject({
      o: [100],
      h: [101],
      l: [99],
      c: [100.5],
      v: [2000],
    });
    const raw = { symbols: 'SPL', adjustsplits: 'false', adjustdividends: 'false' };
    expect((await ask(raw, LATER, dated('2023-11-22'))).body).toMatchObject({ o: [200], v: [1000] });
    expect((await ask({ symbols: 'SPL' }, et('2023-11-22', '17:00'))).body).toMatchObject({
      o: [200],
      v: [1000],
    });
  });

  it('refuses other resolutions, a missing symbol list and dividend-only adjustment', async () => {
    const refused = (errmsg: string) => ({ status: 400, body: { s: 'error', errmsg } });
    expect(await ask({ symbols: 'TEST' }, LATER, undefined, '5')).toEqual(
      refused('Invalid resolution "5". Bulk candles are daily only: daily, D or 1D.'),
    );
    expect(await ask({ symbols: 'TEST' }, LATER, undefined, '2D')).toEqual(
      refused('Invalid resolution "2D". Bulk candles are daily only: daily, D or 1D.'),
    );
    expect((await ask({ symbols: 'TEST' }, LATER, undefined, 'daily')).status).toBe(200);
    expect((await ask({ symbols: 'TEST' }, LATER, undefined, '1d')).status).toBe(200);
    expect(await ask({})).toEqual(
      refused('Invalid parameter symbols: a comma-separated list of symbols is required.'),
    );
    expect(await ask({ symbols: 'TEST', adjustsplits: 'false' })).toEqual(refused(DIVIDEND_ONLY_UNSUPPORTED));
  });

  it('answers every stored symbol with snapshot=true, and no_data or "Market closed" when there is nothing', async () => {
    expect(
      ((await ask({ snapshot: 'true' }, LATER, dated('2023-11-24'))).body as { symbol: string[] }).symbol,
    ).toEqual(['ABC', 'SPL', 'TEST']);
    expect(await ask({ symbols: 'TEST' }, et('2023-11-01'))).toEqual({ status: 404, body: { s: 'no_data' } });
    expect(await ask({ symbols: 'TEST', date: '2023-11-25' })).toEqual({
      status: 404,
      body: { s: 'no_data', errmsg: 'Market closed on this date.' },
    });
    expect((await ask({ symbols: 'TEST', date: '2023-11-22' })).body).toMatchObject({ c: [103] });
  });

  withData(['spec/examples/stocks_bulkcandles.json']).it(
    'matches the example key order and types, bills per symbol and declares its route',
    async () => {
      const example = sharedJson('spec/examples/stocks_bulkcandles.json');
      const { body } = await ask({ symbols: 'TEST,ABC' }, LATER, dated('2023-11-24'));
      expect(shape(JSON.parse(JSON.stringify(body)))).toEqual(shape(example));
      const result = await bulkCandles(
        context(store.sql, { now: LATER, path: { resolution: 'D' }, query: { symbols: 'TEST' } }),
      );
      expect(result.kind === 'ok' && [result.billing, result.rowKey, result.dataAsOfSeconds]).toEqual([
        'per-row',
        'symbol',
        et('2023-11-27', '16:00'),
      ]);
      expect(result.kind === 'ok' && result.fields.map((f) => f.human)).toEqual([
        'Symbol',
        'Open',
        'High',
        'Low',
        'Close',
        'Volume',
        'Date',
      ]);
      expect([stockBulkCandles.pattern, stockBulkCandles.family, stockBulkCandles.dated]).toEqual([
        '/v1/stocks/bulkcandles/:resolution/',
        'stocks',
        true,
      ]);
    },
  );
});
