import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etWallToSeconds, isSession } from '../../src/market-time/index.js';
import { currentAsOf } from '../../src/pit/as-of.js';
import { dailyHistory } from '../../src/query/daily-history.js';
import { bulkCandles } from '../../src/query/endpoints/stocks-bulkcandles.js';
import { candles } from '../../src/query/endpoints/stocks-candles.js';
import { prices } from '../../src/query/endpoints/stocks-prices.js';
import { quotes } from '../../src/query/endpoints/stocks-quotes.js';
import type { AsOf, EndpointContext, EndpointResult } from '../../src/query/types.js';
import { StoreCache } from '../../src/store/cache.js';
import { StoreReader } from '../../src/store/store.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { outcome } from './stock-helpers/store.js';

let reader: StoreReader;
beforeAll(async () => {
  reader = await StoreReader.open('data/sample');
});
afterAll(() => reader.close());

/** A cache too small to keep a symbol's daily history: every answer asks its statements. */
const statementsOnly = () => new StoreCache(() => reader.dataVersion, { sessionCacheBytes: 1024 });

type Request = {
  readonly handler: (ctx: EndpointContext) => Promise<EndpointResult>;
  readonly path?: Record<string, string>;
  readonly query?: Record<string, string>;
};

/** The stock requests compared: every endpoint that reads daily bars, single and several symbols. */
function requestsAt(day: string): [string, Request][] {
  const monthBefore = new Date(Date.parse(`${day}T12:00:00Z`) - 30 * 86_400_000).toISOString().slice(0, 10);
  return [
    ['quote SPY', { handler: quotes, path: { symbol: 'SPY' } }],
    [
      'quote AAPL 52-week, candle',
      { handler: quotes, path: { symbol: 'AAPL' }, query: { '52week': 'true', candle: 'true' } },
    ],
    [
      'quotes SPY,AAPL regular hours',
      { handler: quotes, query: { symbols: 'SPY,AAPL,NOPE', extended: 'false' } },
    ],
    ['quote NOPE', { handler: quotes, path: { symbol: 'NOPE' } }],
    ['prices', { handler: prices, query: { symbols: 'AAPL,SPY' } }],
    [
      'daily candles',
      { handler: candles, path: { resolution: 'D', symbol: 'SPY' }, query: { from: monthBefore, to: day } },
    ],
    [
      'countback',
      { handler: candles, path: { resolution: 'D', symbol: 'AAPL' }, query: { to: day, countback: '4' } },
    ],
    [
      'weekly candles',
      { handler: candles, path: { resolution: 'W', symbol: 'AAPL' }, query: { from: monthBefore, to: day } },
    ],
    [
      'unadjusted candles',
      {
        handler: candles,
        path: { resolution: 'D', symbol: 'AAPL' },
        query: { from: monthBefore, to: day, adjustsplits: 'false', adjustdividends: 'false' },
      },
    ],
    ['bulk candles', { handler: bulkCandles, path: { resolution: 'D' }, query: { symbols: 'SPY,AAPL' } }],
    [
      'bulk candles of a date',
      { handler: bulkCandles, path: { resolution: 'D' }, query: { symbols: 'AAPL,SPY', date: day } },
    ],
  ];
}

/** Clock times around the session's edges, the delay of stock quotes, and the extended hours. */
const TIMES = [
  '03:59',
  '04:00',
  '04:01',
  '09:30',
  '09:31',
  '12:00',
  '15:45',
  '15:59',
  '16:00',
  '16:01',
  '19:59',
  '20:01',
  '23:59',
];

describe("a symbol's daily history in memory", () => {
  it('answers stock quotes, prices, candles and bulk candles at random instants exactly as the statements do', async () => {
    const random = seededRandom(20_201_127);
    const memory = new StoreCache(() => reader.dataVersion);
    const first = Date.parse('2018-12-20T12:00:00Z');
    const last = Date.parse('2021-01-10T12:00:00Z');
    let compared = 0;
    for (let draw = 0; draw < 14; draw++) {
      const day = new Date(first + Math.floor(random() * ((last - first) / 86_400_000)) * 86_400_000)
        .toISOString()
        .slice(0, 10);
      const now = etWallToSeconds(day, TIMES[Math.floor(random() * TIMES.length)]!);
      const asOfs: AsOf[] = [
        currentAsOf('live', now),
        currentAsOf('delayed', now),
        currentAsOf('eod', now),
        ...(isSession(day) ? [{ kind: 'dated', session: day } as const] : []),
      ];
      for (const asOf of asOfs) {
        for (const [name, request] of requestsAt(day)) {
          const ask = (cache: StoreCache) =>
            outcome(
              request.handler({
                sql: reader.sql,
                cache,
                nowSeconds: now,
                greeks: 'vendor',
                path: request.path ?? {},
                query: request.query ?? {},
                asOf,
                mode: 'live',
              }),
            );
          expect(await ask(memory), `${name} at ${day} ${JSON.stringify(asOf)}`).toEqual(
            await ask(statementsOnly()),
          );
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(350);
    // Both symbols' histories were kept, and read once each.
    expect(memory.heldSized('daily-history:SPY')).toBeDefined();
    expect(memory.heldSized('daily-history:AAPL')).toBeDefined();
    expect(statementsOnly().heldSized('daily-history:SPY')).toBeUndefined();
  }, 240_000);

  it('answers a quote after the close and a dated daily candle with no statement once the history is read', async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const ask = (handler: Request['handler'], now: number, path: Record<string, string>, asOf: AsOf) =>
      outcome(
        handler({
          sql: reader.sql,
          cache,
          nowSeconds: now,
          greeks: 'vendor',
          path,
          query: {},
          asOf,
          mode: 'live',
        }),
      );
    const after = etWallToSeconds('2020-03-20', '16:30');
    expect((await ask(quotes, after, { symbol: 'SPY' }, currentAsOf('live', after))).status).toBe(200);
    const statements: string[] = [];
    const prepare = reader.sql.prepare;
    reader.sql.prepare = async (text) => {
      statements.push(text);
      await prepare?.(text);
    };
    try {
      for (const session of ['2020-03-23', '2020-06-01', '2019-02-04']) {
        const close = etWallToSeconds(session, '16:00');
        const quote = await ask(quotes, close, { symbol: 'SPY' }, currentAsOf('live', close));
        expect(quote.status).toBe(200);
        const daily = await ask(
          candles,
          close,
          { resolution: 'D', symbol: 'SPY' },
          { kind: 'dated', session },
        );
        expect(daily.status).toBe(200);
      }
    } finally {
      reader.sql.prepare = prepare;
    }
    expect(statements).toEqual([]);
  });

  it('decides once per version not to keep a history: the manifest is not walked again for it', () => {
    const cache = statementsOnly();
    const extent = reader.sql.extentSource;
    let walks = 0;
    reader.sql.extentSource = (table, partition) => {
      walks++;
      return extent?.(table, partition);
    };
    try {
      for (let i = 0; i < 3; i++) expect(dailyHistory(reader.sql, cache, 'SPY')).toBeUndefined();
      expect(dailyHistory(reader.sql, cache, 'NOPE')).toBeUndefined();
      expect(dailyHistory(reader.sql, cache, 'NOPE')).toBeUndefined();
    } finally {
      reader.sql.extentSource = extent;
    }
    expect(walks).toBe(2);
  });
});
