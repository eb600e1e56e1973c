/**
 * Bounded work per request over a real port: a column named again and again is answered once (it used to
 * be printed once per repeat, 900 times over, until the heap ran out), an answer over the server's byte
 * or row limit is the specification's 413 without credits, and the response cache keeps nothing for
 * parameters the endpoint does not read and no more bytes than its budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/http/index.js';
import { openStore, type Store, storeInternals } from '../../src/library/store.js';

const NOW = '2020-03-16T15:45:00-04:00';
const CANDLES = '/v1/stocks/candles/1/SPY/?from=2020-03-02&to=2020-03-13';

describe('a request past the time limit', () => {
  it('is refused with 524 and charged nothing', async () => {
    const store = await openStore('data/sample', { now: NOW, threads: 1, limits: { maxSeconds: 1e-6 } });
    try {
      const response = await store.request(`${CANDLES}&limit=5`);
      expect([response.status, response.credits]).toEqual([524, 0]);
      expect(JSON.parse(response.body)).toEqual({
        s: 'error',
        errmsg: 'The request took longer than 0.000001 s. Ask for less data per request.',
      });
    } finally {
      store.close();
    }
  });
});

describe('a server with limits', () => {
  let store: Store;
  let server: RunningServer;
  beforeAll(async () => {
    store = await openStore('data/sample', {
      now: NOW,
      threads: 1,
      limits: { maxAnswerBytes: 100_000, maxRows: 5_000 },
      responseCacheBytes: 2_000_000,
    });
    server = await listen(store, { port: 0 });
  }, 60_000);
  afterAll(async () => {
    await server.close();
    store.close();
  });

  it('answers a column named many times once, in JSON and in CSV', async () => {
    const repeated = Array.from({ length: 900 }, () => 't').join(',');
    const json = await fetch(`${server.url}${CANDLES}&limit=3&columns=${repeated},c,t`);
    expect(json.status).toBeLessThan(300);
    expect(Object.keys((await json.json()) as object)).toEqual(['t', 'c']);
    const csv = await fetch(`${server.url}${CANDLES}&limit=2&format=csv&columns=${repeated}`);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe('t');
    expect(lines.slice(1).every((line) => /^\d+$/.test(line))).toBe(true);
  });

  it('refuses an answer over the byte limit with 413 and charges nothing', async () => {
    const response = await fetch(`${server.url}${CANDLES}&limit=5000`);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      s: 'error',
      errmsg: expect.stringMatching(/^Payload too large: an answer of more than 100000 bytes/),
    });
    expect(response.headers.get('x-api-ratelimit-consumed')).toBe('0');
    const small = await fetch(`${server.url}${CANDLES}&limit=5`);
    expect(small.status).toBeLessThan(300);
  });

  it('refuses an endpoint answer of more rows than the limit with 413, whatever the page', async () => {
    const response = await fetch(
      `${server.url}/v1/stocks/candles/1/SPY/?from=2020-01-02&to=2020-03-13&limit=1`,
    );
    expect(response.status).toBe(413);
    expect(((await response.json()) as { errmsg: string }).errmsg).toMatch(
      /rows, more than this server's 5000/,
    );
  });

  it('keeps no cache entry for parameters the endpoint does not read, and stays in its byte budget', async () => {
    const cache = storeInternals(store).api.responseCache;
    const before = cache.size;
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`${server.url}/v1/options/chain/SPY/?dte=2&side=put&zzz=${i}`);
      expect(response.status).toBeLessThan(300);
    }
    expect(cache.size - before).toBe(1);
    for (const dte of [1, 2, 3, 5, 8, 13, 21, 34, 55]) {
      await fetch(`${server.url}/v1/options/chain/SPY/?dte=${dte}`);
      expect(cache.sizeBytes).toBeLessThanOrEqual(cache.capacityBytes);
    }
  });
});
