/**
 * The client against the real `pitchain serve` (a generated store on a free port): the same typed results
 * as the store it serves, symbol batches at the 4,094-byte edge of the request line, intraday ranges in
 * year chunks at the edge of the service's 413, and the 204 of a cache miss answered by one `mode=live`.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Client,
  candleChunks,
  createClient,
  PayloadTooLargeError,
  type ResponseEvent,
} from '../../src/client/index.js';
import { openStore, type Store } from '../../src/library/store.js';
import type { ServerProcess } from '../http/helpers/server.js';
import { generatedStore, NOW, serve } from './helpers.js';

let dir: string;
let server: ServerProcess;
let store: Store;
let events: ResponseEvent[];
let client: Client;

beforeAll(async () => {
  const generated = await generatedStore();
  dir = generated.dir;
  server = await serve(generated.source, path.join(dir, 'requests.jsonl'));
  store = await openStore(generated.source, { now: NOW, threads: 1 });
}, 120_000);
afterAll(async () => {
  store?.close();
  if (server !== undefined && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
});
function fresh(): Client {
  events = [];
  client = createClient({ baseUrl: server.url, token: 'any', onResponse: (event) => events.push(event) });
  return client;
}

describe('one line moves a script between the service and the store', () => {
  it('answers every endpoint function with the columns the store gives', async () => {
    const remote = fresh();
    const calls: [
      string,
      (face: Pick<Store, 'options' | 'stocks' | 'markets'>) => Promise<{
        columns: unknown;
        length: number;
        meta: { scalars: Readonly<Record<string, unknown>> };
      }>,
    ][] = [
      ['chain', (f) => f.options.chain('SPY', { date: '2020-03-05', side: 'put', strikeLimit: 3 })],
      ['quotes', (f) => f.options.quotes('SPY200320P00300000', { from: '2020-03-02', to: '2020-03-14' })],
      ['expirations', (f) => f.options.expirations('AAPL', { date: '2020-03-06' })],
      ['strikes', (f) => f.options.strikes('AAPL', { date: '2020-03-06' })],
      ['lookup', (f) => f.options.lookup('SPY 3/20/2020 300 Put')],
      ['candles', (f) => f.stocks.candles('D', 'SPY', { from: '2020-03-02', to: '2020-03-13' })],
      ['bulkCandles', (f) => f.stocks.bulkCandles('D', { symbols: 'SPY,AAPL', date: '2020-03-06' })],
      ['quotes', (f) => f.stocks.quotes(['SPY', 'AAPL'])],
      ['prices', (f) => f.stocks.prices('SPY')],
      ['status', (f) => f.markets.status({ from: '2020-03-01', to: '2020-03-14' })],
    ];
    for (const [name, call] of calls) {
      const [there, here] = await Promise.all([call(remote), call(store)]);
      expect([name, there.columns, there.meta.scalars]).toEqual([name, here.columns, here.meta.scalars]);
      expect([name, there.length > 0 || Object.keys(there.meta.scalars).length > 0]).toEqual([name, true]);
    }
  });
});

describe('symbol batches', () => {
  const line = (target: string) => Buffer.byteLength(`GET ${target} HTTP/1.1`);
  /** Symbols (SPY, AAPL, then made-up ones) whose bulk-candles request line is `bytes` long. */
  function symbolsFor(bytes: number): string[] {
    const empty = line('/v1/stocks/bulkcandles/D/?symbols=&date=2020-03-06');
    const symbols = ['SPY', 'AAPL'];
    let left = bytes - empty - 'SPY,AAPL'.length;
    // Eight-letter symbols (nine bytes with the comma), then one that takes exactly the bytes left.
    while (left > 0) {
      const length = left >= 11 || left === 9 ? 8 : left - 1;
      symbols.push(`X${String(symbols.length).padStart(8, '0')}`.slice(0, length));
      left -= length + 1;
    }
    expect(line(`/v1/stocks/bulkcandles/D/?symbols=${symbols.join(',')}&date=2020-03-06`)).toBe(bytes);
    return symbols;
  }

  it('sends a request line of exactly 4,094 bytes as one request, and one of 4,095 as two', async () => {
    for (const [bytes, requests] of [
      [4094, 1],
      [4095, 2],
    ] as const) {
      const symbols = symbolsFor(bytes);
      expect(symbols.length).toBeLessThanOrEqual(500);
      const result = await fresh().stocks.bulkCandles('D', {
        symbols: symbols.join(','),
        date: '2020-03-06',
      });
      const lines = events.map((e) => line(e.target));
      // A batch of made-up symbols alone is a 404 (no data); a request line too long would be a 400.
      expect(events.every((e) => e.status === 200 || e.status === 404)).toBe(true);
      expect(events).toHaveLength(requests);
      expect(Math.max(...lines)).toBeLessThanOrEqual(4094);
      if (requests === 1) expect(lines).toEqual([4094]);
      expect(result.columns['symbol']).toEqual(['SPY', 'AAPL']);
    }
  });

  it('keeps at most 500 symbols in a request however short they are', async () => {
    const symbols = ['SPY', ...Array.from({ length: 500 }, (_, i) => `Q${i}`), 'AAPL'];
    const result = await fresh().stocks.bulkCandles('D', { symbols: symbols.join(','), date: '2020-03-06' });
    const counts = events.map(
      (e) => new URL(e.target, 'http://x').searchParams.get('symbols')!.split(',').length,
    );
    expect(counts.sort((a, b) => b - a)).toEqual([500, 2]);
    expect(result.columns['symbol']).toEqual(['SPY', 'AAPL']);
  });
});

describe('intraday year chunks', () => {
  it('splits into chunks of 365 days that meet end to end, dates and epoch seconds alike', () => {
    expect(candleChunks('2019-03-07', '2021-03-10')).toEqual([
      { from: '2019-03-07', to: '2020-03-05' },
      { from: '2020-03-06', to: '2021-03-05' },
      { from: '2021-03-06', to: '2021-03-10' },
    ]);
    expect(candleChunks('2020-03-02', '2020-03-02')).toEqual([{ from: '2020-03-02', to: '2020-03-02' }]);
    const start = 1583159400;
    const chunks = candleChunks(start, start + 2 * 365 * 86_400)!;
    expect(chunks.map((c) => [Number(c.from), Number(c.to)])).toEqual([
      [start, start + 365 * 86_400 - 1],
      [start + 365 * 86_400, start + 2 * 365 * 86_400 - 1],
      [start + 2 * 365 * 86_400, start + 2 * 365 * 86_400],
    ]);
    // Other forms are left to the service in one request.
    expect(candleChunks('2019-03-07', 'today')).toBeUndefined();
  });

  it('asks each chunk without a 413, where one day more is a 413: the chunks sit at the edge', async () => {
    const remote = fresh();
    // From a leap day, from the day US clocks sprang forward, and across a leap day (where a year is 366
    // days, so a chunk of 365 is a day short of the edge).
    for (const [from, atEdge] of [
      ['2020-02-29', true],
      ['2021-03-14', true],
      ['2021-01-04', true],
      ['2019-03-07', false],
    ] as const) {
      const [first] = candleChunks(from, '2030-01-01')!;
      const answer = await remote.get(`/v1/stocks/candles/1/SPY/?from=${first!.from}&to=${first!.to}`);
      expect([from, answer.status]).toEqual([from, answer.status === 404 ? 404 : 200]);
      const dayMore = new Date(Date.parse(`${first!.to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      const refused = await remote
        .get(`/v1/stocks/candles/1/SPY/?from=${first!.from}&to=${dayMore}`)
        .catch((e: unknown) => e);
      if (atEdge) expect(refused).toBeInstanceOf(PayloadTooLargeError);
      else expect(refused).toMatchObject({ status: 200 });
    }
  });

  it('joins the chunks of a range split inside the data: every minute once, in order', async () => {
    const remote = fresh();
    const split = await remote.stocks.candles('1', 'AAPL', { from: '2019-03-07', to: '2020-03-13' });
    // The chunks go out together; they answer in any order, and join in the range's.
    expect(events.map((e) => e.target).sort()).toEqual([
      '/v1/stocks/candles/1/AAPL/?from=2019-03-07&to=2020-03-05',
      '/v1/stocks/candles/1/AAPL/?from=2020-03-06&to=2020-03-13',
    ]);
    const whole = await store.stocks.candles('1', 'AAPL', { from: '2020-03-01', to: '2020-03-13' });
    expect(split.columns).toEqual(whole.columns);
    expect(split.meta.credits).toBe(events.reduce((sum, e) => sum + e.consumed, 0));
  });
});

describe('the 204 of a cache miss', () => {
  it('is asked once more with mode=live, which the service answers', async () => {
    const remote = fresh();
    const result = await remote.options.chain('SPY', {
      mode: 'cached',
      maxage: '1h',
      side: 'call',
      strikeLimit: 1,
    });
    expect(events.map((e) => [e.status, e.target])).toEqual([
      [204, '/v1/options/chain/SPY/?mode=cached&maxage=1h&side=call&strikeLimit=1'],
      [200, '/v1/options/chain/SPY/?mode=live&maxage=1h&side=call&strikeLimit=1'],
    ]);
    expect(result.length).toBeGreaterThan(0);
    expect(result.meta).toMatchObject({ mode: 'live', status: 200 });
    expect(result.meta.credits).toBe(events[1]!.consumed);
  });
});
