import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResolution } from '../../src/query/candles.js';
import {
  candles,
  DIVIDEND_ONLY_UNSUPPORTED,
  INTRADAY_DIVIDENDS_UNSUPPORTED,
  INTRADAY_RANGE_TOO_LARGE,
  invalidResolution,
  stockCandles,
} from '../../src/query/endpoints/stocks-candles.js';
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
import { dailyBar, minuteBars, thanksgivingBars } from './stock-helpers/synthetic.js';

let store: TestStore;
beforeAll(async () => {
  store = await buildStore(async (sql) => {
    await stageBars(sql, [
      ...thanksgivingBars(),
      // SPL splits 2:1 on 2023-11-24.
      dailyBar('SPL', '2023-11-22', [200, 202, 198, 201, 1000]),
      dailyBar('SPL', '2023-11-24', [100.5, 101, 100, 100.75, 3000]),
      ...minuteBars('SPL', '2023-11-22', 200, 2),
      ...minuteBars('SPL', '2023-11-24', 100.5, 2),
    ]);
    await stageSplits(sql, [{ symbol: 'SPL', exDate: '2023-11-24', ratio: 2 }]);
  });
});
afterAll(() => store.close());

const ask = (resolution: string, symbol: string, query: Record<string, string>, now: number, asOf?: AsOf) =>
  outcome(
    candles(context(store.sql, { now, path: { resolution, symbol }, query, ...(asOf ? { asOf } : {}) })),
  );

const round2 = (x: number) => Math.round(x * 100) / 100;

/** Five-minute candle j of TEST on 2023-11-27, computed by hand from the minute formula. */
function fiveMinute(j: number) {
  return {
    t: et('2023-11-27', '09:30') + 300 * j,
    o: round2(104 + 0.05 * j),
    h: round2(104.07 + 0.05 * j),
    l: round2(103.98 + 0.05 * j),
    c: round2(104.05 + 0.05 * j),
    v: 60 + 25 * j,
  };
}

function columns(rows: readonly { t: number; o: number; h: number; l: number; c: number; v: number }[]) {
  return {
    s: 'ok',
    t: rows.map((r) => r.t),
    o: rows.map((r) => r.o),
    h: rows.map((r) => r.h),
    l: rows.map((r) => r.l),
    c: rows.map((r) => r.c),
    v: rows.map((r) => r.v),
  };
}

describe('resolution parsing', () => {
  it('reads every documented spelling, case-insensitively', () => {
    const table: [string, string][] = [
      ['minutely', '1 minutes'],
      ['1', '1 minutes'],
      ['3', '3 minutes'],
      ['45', '45 minutes'],
      ['390', '390 minutes'],
      ['hourly', '60 minutes'],
      ['H', '60 minutes'],
      ['h', '60 minutes'],
      ['1H', '60 minutes'],
      ['4h', '240 minutes'],
      ['daily', '1 days'],
      ['D', '1 days'],
      ['1d', '1 days'],
      ['2D', '2 days'],
      ['Weekly', '1 weeks'],
      ['W', '1 weeks'],
      ['2w', '2 weeks'],
      ['MONTHLY', '1 months'],
      ['M', '1 months'],
      ['3m', '3 months'],
      ['yearly', '1 years'],
      ['Y', '1 years'],
      ['2Y', '2 years'],
    ];
    const read = table.map(([text]) => {
      const r = parseResolution(text);
      return [text, r === undefined ? 'invalid' : `${r.count} ${r.unit}`];
    });
    expect(read).toEqual(table);
  });

  it('refuses anything else', () => {
    const bad = ['', '0', '0D', 'X', '1.5', '-1', 'DD', 'minute', '5min', '1000000', 'D1'];
    expect(bad.map((text) => parseResolution(text))).toEqual(bad.map(() => undefined));
  });

  it('answers an unknown resolution with a 400 naming it', async () => {
    expect(await ask('5min', 'TEST', {}, et('2023-12-01'))).toEqual({
      status: 400,
      body: { s: 'error', errmsg: invalidResolution('5min') },
    });
  });
});

describe('the one-year limit on intraday ranges (413)', () => {
  const now = et('2025-06-02', '12:00');
  const status = async (resolution: string, query: Record<string, string>) =>
    (await ask(resolution, 'TEST', query, now)).status;

  it('allows one year minus one second and refuses one year, with dates or instants', async () => {
    expect(await status('1', { from: '2024-01-01', to: '2024-12-31' })).toBe(404);
    expect(await status('1', { from: '2024-01-01', to: '2025-01-01' })).toBe(413);
    expect(await status('5', { from: '2024-01-01T00:00:00', to: '2024-12-31T23:59:59' })).toBe(404);
    expect(await status('5', { from: '2024-01-01T00:00:00', to: '2025-01-01T00:00:00' })).toBe(413);
  });

  it('normalises both ends to Eastern time first', async () => {
    // 05:00Z is 00:00 EST: the same instants as above, written in UTC and with an offset.
    expect(await status('H', { from: '2024-01-01T05:00:00Z', to: '2024-12-31T23:59:59-05:00' })).toBe(404);
    expect(await status('H', { from: '2024-01-01T05:00:00Z', to: '2025-01-01T05:00:00Z' })).toBe(413);
    // A year in ET wall time across the spring DST change.
    expect(await status('1', { from: '2024-03-10T00:00:00', to: '2025-03-09T23:59:59' })).toBe(404);
    expect(await status('1', { from: '2024-03-10T00:00:00', to: '2025-03-10T00:00:00' })).toBe(413);
  });

  it('does not apply to daily candles nor to countback, and names the rule', async () => {
    expect(await status('D', { from: '2000-01-03', to: '2025-01-01' })).toBe(200);
    expect(await status('1', { countback: '100000', to: '2025-01-01' })).toBe(404);
    expect(await ask('1', 'TEST', { from: '2023-01-01', to: '2024-06-01' }, now)).toEqual({
      status: 413,
      body: { s: 'error', errmsg: INTRADAY_RANGE_TOO_LARGE },
    });
  });
});

describe('parameter refusals', () => {
  const now = et('2023-12-01', '12:00');
  it.each([
    [
      'D',
      { from: '2023-11-20', countback: '2' },
      'The from and countback parameters cannot be used together.',
    ],
    [
      'D',
      { date: '2023-11-20', to: '2023-11-21' },
      'The date parameter cannot be combined with from, to or countback.',
    ],
    ['D', { from: '2023-11-22', to: '2023-11-21' }, 'The from date is after the to date.'],
    [
      'D',
      { countback: '0' },
      'Invalid parameter countback: expected a whole number from 1 to 10000000, got "0"',
    ],
    ['D', { extended: 'yes' }, 'Invalid parameter extended: expected true or false, got "yes"'],
    ['D', { from: 'soon' }, 'Invalid parameter from: Invalid date input "soon"'],
    ['D', { adjustsplits: 'false' }, DIVIDEND_ONLY_UNSUPPORTED],
    ['W', { adjustsplits: 'false', adjustdividends: 'true' }, DIVIDEND_ONLY_UNSUPPORTED],
    ['5', { adjustdividends: 'true' }, INTRADAY_DIVIDENDS_UNSUPPORTED],
    ['5', { adjustsplits: 'true', adjustdividends: 'true' }, INTRADAY_DIVIDENDS_UNSUPPORTED],
  ])('%s %o → 400', async (resolution, query, errmsg) => {
    expect(await ask(resolution, 'TEST', query, now)).toEqual({ status: 400, body: { s: 'error', errmsg } });
  });

  it('accepts the supported adjustment combinations', async () => {
    const ok = async (resolution: string, query: Record<string, string>) =>
      (await ask(resolution, 'TEST', { from: '2023-11-20', ...query }, now)).status;
    expect(await ok('D', { adjustsplits: 'false', adjustdividends: 'false' })).toBe(200);
    expect(await ok('D', { adjustdividends: 'false' })).toBe(200);
    expect(await ok('D', { adjustsplits: 'true', adjustdividends: 'true' })).toBe(200);
    expect(await ok('5', { to: '2023-11-27', adjustsplits: 'true', adjustdividends: 'false' })).toBe(200);
  });
});

describe('intraday candles', () => {
  it('aggregates 5-minute candles aligned to 09:30 ET and leaves out the candle in progress', async () => {
    const at = (time: string) =>
      ask('5', 'TEST', { from: '2023-11-27', to: '2023-11-27' }, et('2023-11-27', time));
    const upTo = (n: number) => columns(Array.from({ length: n }, (_, j) => fiveMinute(j)));
    expect(await at('10:05')).toEqual({ status: 200, body: upTo(7) });
    expect(await at('10:04:59')).toEqual({ status: 200, body: upTo(6) });
  });

  it('serves a 1-minute bar from its end on', async () => {
    const at = (time: string) =>
      ask('1', 'TEST', { from: '2023-11-27', to: '2023-11-27' }, et('2023-11-27', time)).then(
        (r) => (r.body as { t: number[] }).t,
      );
    expect((await at('10:02:30')).at(-1)).toBe(et('2023-11-27', '10:01'));
    expect((await at('10:02:00')).at(-1)).toBe(et('2023-11-27', '10:01'));
    expect((await at('10:01:59')).at(-1)).toBe(et('2023-11-27', '10:00'));
  });

  it('builds 4H candles from 09:30 and 13:30, the last one cut at the close (13:00 on an early close)', async () => {
    const expected = [
      { t: et('2023-11-24', '09:30'), o: 103, h: 105.12, l: 102.98, c: 105.1, v: 24045 },
      { t: et('2023-11-27', '09:30'), o: 104, h: 106.42, l: 103.98, c: 106.4, v: 31080 },
      { t: et('2023-11-27', '13:30'), o: 106.4, h: 107.92, l: 106.38, c: 107.9, v: 48675 },
    ];
    const query = { from: '2023-11-24', to: '2023-11-27' };
    expect(await ask('4H', 'TEST', query, et('2023-11-28', '12:00'))).toEqual({
      status: 200,
      body: columns(expected),
    });
    expect(await ask('4h', 'test', query, et('2023-11-27', '15:59:59'))).toEqual({
      status: 200,
      body: columns(expected.slice(0, 2)),
    });
    expect(await ask('240', 'TEST', query, et('2023-11-24', '13:00'))).toEqual({
      status: 200,
      body: columns(expected.slice(0, 1)),
    });
    expect(await ask('4H', 'TEST', query, et('2023-11-24', '12:59:59'))).toEqual({
      status: 404,
      body: { s: 'no_data', nextTime: null, prevTime: null },
    });
  });

  it('answers a dated request with the whole session, and countback with the last N candles', async () => {
    const dated = await ask('5', 'TEST', {}, et('2023-12-01'), { kind: 'dated', session: '2023-11-24' });
    const t = (dated.body as { t: number[] }).t;
    expect([t.length, t[0], t.at(-1)]).toEqual([42, et('2023-11-24', '09:30'), et('2023-11-24', '12:55')]);
    expect(await ask('5', 'TEST', { countback: '2', to: '2023-11-27T09:40:00' }, et('2023-12-01'))).toEqual({
      status: 200,
      body: columns([fiveMinute(1), fiveMinute(2)]),
    });
  });

  it('points to the neighbouring candles when a range holds none', async () => {
    expect(await ask('5', 'TEST', { from: '2023-11-25', to: '2023-11-26' }, et('2023-12-01'))).toEqual({
      status: 404,
      body: { s: 'no_data', nextTime: et('2023-11-27', '09:30'), prevTime: et('2023-11-24', '12:55') },
    });
  });

  it('adjusts for splits only when asked (default raw intraday)', async () => {
    const query = { from: '2023-11-22', to: '2023-11-24' };
    const raw = await ask('1', 'SPL', query, et('2023-12-01'));
    const adjusted = await ask('1', 'SPL', { ...query, adjustsplits: 'true' }, et('2023-12-01'));
    expect((raw.body as { o: number[] }).o).toEqual([200, 200.01, 100.5, 100.51]);
    expect((adjusted.body as { o: number[]; v: number[] }).o).toEqual([100, 100.005, 100.5, 100.51]);
    expect((adjusted.body as { v: number[] }).v).toEqual([20, 22, 10, 11]);
  });
});

describe('daily and longer candles', () => {
  it('serves a daily bar from its session close on (13:00 on an early close)', async () => {
    const dates = async (time: string, day = '2023-11-27') =>
      ((await ask('D', 'TEST', { from: '2023-11-20' }, et(day, time))).body as { t: number[] }).t;
    const days = ['2023-11-20', '2023-11-21', '2023-11-22', '2023-11-24', '2023-11-27'].map((d) => et(d));
    expect(await dates('16:00')).toEqual(days);
    expect(await dates('15:59:59')).toEqual(days.slice(0, 4));
    expect(await dates('13:00', '2023-11-24')).toEqual(days.slice(0, 4));
    expect(await dates('12:59:59', '2023-11-24')).toEqual(days.slice(0, 3));
  });

  it('builds weekly and monthly candles once their period is over', async () => {
    const week = { t: et('2023-11-20'), o: 100, h: 105, l: 99, c: 104, v: 3900 };
    expect(await ask('W', 'TEST', { from: '2023-11-01' }, et('2023-11-24', '13:00'))).toEqual({
      status: 200,
      body: columns([week]),
    });
    expect(await ask('W', 'TEST', { from: '2023-11-01' }, et('2023-11-24', '12:59'))).toEqual({
      status: 404,
      body: { s: 'no_data', nextTime: null, prevTime: null },
    });
    const month = { t: et('2023-11-20'), o: 100, h: 108, l: 99, c: 107.9, v: 5200 };
    expect(await ask('monthly', 'TEST', { from: '2023-11-01' }, et('2023-12-01'))).toEqual({
      status: 200,
      body: columns([month]),
    });
    expect((await ask('M', 'TEST', { from: '2023-11-01' }, et('2023-11-30', '15:59'))).status).toBe(404);
  });

  it('groups 2D candles by runs of two sessions and drops an unfinished run', async () => {
    expect(await ask('2D', 'TEST', { from: '2023-11-01' }, et('2023-12-01'))).toEqual({
      status: 200,
      body: columns([
        { t: et('2023-11-20'), o: 100, h: 103, l: 99, c: 102, v: 2100 },
        { t: et('2023-11-22'), o: 102, h: 105, l: 101, c: 104, v: 1800 },
      ]),
    });
  });

  it('answers countback, the most recent candle by default, and neighbours when empty', async () => {
    const now = et('2023-12-01');
    const t = async (query: Record<string, string>) =>
      ((await ask('D', 'TEST', query, now)).body as { t: number[] }).t;
    expect(await t({ countback: '2', to: '2023-11-24' })).toEqual([et('2023-11-22'), et('2023-11-24')]);
    expect(await t({})).toEqual([et('2023-11-27')]);
    expect(await t({ from: '-3 days', to: '2023-11-24' })).toEqual([
      et('2023-11-21'),
      et('2023-11-22'),
      et('2023-11-24'),
    ]);
    expect(await ask('D', 'TEST', { from: '2023-11-25', to: '2023-11-26' }, now)).toEqual({
      status: 404,
      body: { s: 'no_data', nextTime: et('2023-11-27'), prevTime: et('2023-11-24') },
    });
  });

  it('adjusts for splits by default, from the ex-date on the clock, and not when asked raw', async () => {
    const o = async (query: Record<string, string>, now: number) =>
      (await ask('D', 'SPL', { from: '2023-11-22', ...query }, now)).body as { o: number[]; v: number[] };
    expect(await o({}, et('2023-12-01'))).toMatchObject({ o: [100, 100.5], v: [2000, 3000] });
    expect(await o({ adjustsplits: 'false', adjustdividends: 'false' }, et('2023-12-01'))).toMatchObject({
      o: [200, 100.5],
      v: [1000, 3000],
    });
    expect(await o({}, et('2023-11-22', '20:00'))).toMatchObject({ o: [200], v: [1000] });
  });
});

describe('symbols and the response shape', () => {
  it('answers an unknown symbol, or one not yet listed at T, with "Symbol not found."', async () => {
    const notFound = { status: 404, body: { s: 'no_data', errmsg: 'Symbol not found.' } };
    expect(await ask('D', 'NOPE', {}, et('2023-12-01'))).toEqual(notFound);
    expect(await ask('D', 'TEST', {}, et('2023-11-01'))).toEqual(notFound);
    // SPL's first bars are minute bars of 2023-11-22 from 09:30: known once the first has ended, before
    // its first daily bar is.
    expect(await ask('1', 'SPL', {}, et('2023-11-22', '09:30'))).toEqual(notFound);
    expect(await ask('1', 'SPL', {}, et('2023-11-22', '09:31'))).not.toEqual(notFound);
    expect(await ask('D', 'SPL', {}, et('2023-11-22', '09:31'))).not.toEqual(notFound);
  });

  it('keeps a symbol known from the instant it was found, and never before it', async () => {
    // One store cache for every request, as a store's are: a later request is answered from what an
    // earlier one found, and one before the symbol's first bar still is not.
    const cache = new StoreCache(() => 'test');
    const askShared = (symbol: string, now: number) =>
      outcome(candles({ ...context(store.sql, { now, path: { resolution: '1', symbol } }), cache }));
    const notFound = { status: 404, body: { s: 'no_data', errmsg: 'Symbol not found.' } };
    expect(await askShared('SPL', et('2023-11-24', '10:00'))).not.toEqual(notFound);
    expect(await askShared('SPL', et('2023-11-22', '09:30'))).toEqual(notFound);
    expect(await askShared('SPL', et('2023-11-22', '09:31'))).not.toEqual(notFound);
    expect(await askShared('SPL', et('2023-11-22', '09:30'))).toEqual(notFound);
    expect(await askShared('NOPE', et('2023-12-01'))).toEqual(notFound);
  });

  withData(['spec/examples/stocks_candles.json']).it(
    'has the example keys with the example value types, in the live order t, o, h, l, c, v',
    async () => {
      const example = sharedJson('spec/examples/stocks_candles.json');
      const { body } = await ask('D', 'TEST', { from: '2023-11-20' }, et('2023-12-01'));
      const json = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
      expect(Object.keys(json)).toEqual(['s', 't', 'o', 'h', 'l', 'c', 'v']);
      expect(new Map(shape(json))).toEqual(new Map(shape(example)));
    },
  );

  it('declares its path, family, billing and human keys', async () => {
    const result = await candles(
      context(store.sql, { now: et('2023-12-01'), path: { resolution: 'D', symbol: 'TEST' } }),
    );
    expect(
      result.kind === 'ok' && [result.billing, result.rowKey, result.fields.map((f) => f.human)],
    ).toEqual(['per-1000-rows', 't', ['Date', 'Open', 'High', 'Low', 'Close', 'Volume']]);
    expect(result.kind === 'ok' && result.dataAsOfSeconds).toBe(et('2023-11-27', '16:00'));
    expect([stockCandles.pattern, stockCandles.family, stockCandles.dated, stockCandles.cacheable]).toEqual([
      '/v1/stocks/candles/:resolution/:symbol/',
      'stocks',
      true,
      false,
    ]);
  });
});
