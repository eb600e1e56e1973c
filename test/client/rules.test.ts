/**
 * The client's rules on the failure modes of the remote service, against a test double that produces
 * them on demand: retries only above 500 and on dropped connections (backoff, or `Retry-After` when the
 * service sends one), never on a 4xx; typed errors per status; at most one `mode=live` fallback after a
 * 204; at most 50 requests in flight; credits from the rate-limit headers; the SDKs' environment variables.
 * Waits are recorded, not slept.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  createClient,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  PayloadTooLargeError,
  PaymentRequiredError,
  RateLimitError,
  ServerError,
} from '../../src/client/index.js';
import { MarketDataError } from '../../src/errors.js';
import { candlesBody, rateHeaders, type Scripted, scriptedServer } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A double answering `script[i]` to the i-th request (the last one repeats), and a client of it recording waits. */
async function double(script: readonly Scripted[], options: { maxRetries?: number } = {}) {
  const server = await scriptedServer((_, i) => script[Math.min(i, script.length - 1)]!);
  closers.push(server.close);
  const waits: number[] = [];
  const client = createClient({
    baseUrl: server.url,
    token: 'secret-token',
    wait: async (ms) => {
      waits.push(ms);
    },
    ...options,
  });
  return { server, client, waits };
}

const ok = (consumed = 1): Scripted => ({ status: 200, headers: rateHeaders(consumed), body: candlesBody() });
const error = (status: number, errmsg: string, headers: Record<string, string> = {}): Scripted => ({
  status,
  headers,
  body: JSON.stringify({ s: 'error', errmsg }),
});

describe('retries', () => {
  it('retries a 503 after the Retry-After it names, not the backoff', async () => {
    const { client, server, waits } = await double([
      error(503, 'Service Unavailable', { 'Retry-After': '7' }),
      ok(),
    ]);
    const result = await client.stocks.candles('D', 'SPY', { date: '2020-03-02' });
    expect(result.length).toBe(1);
    expect(server.requests).toHaveLength(2);
    expect(waits).toEqual([7000]);
  });

  it('backs off 0.5 s, 1 s, 2 s on statuses above 500, then throws a ServerError after 4 attempts', async () => {
    const { client, server, waits } = await double([error(502, 'Bad Gateway')]);
    const failure = await client.stocks.candles('D', 'SPY').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ServerError);
    expect(failure).toMatchObject({ status: 502, message: 'Bad Gateway' });
    expect(server.requests).toHaveLength(4);
    expect(waits).toEqual([500, 1000, 2000]);
  });

  it('retries a dropped connection, and throws a NetworkError once retries run out', async () => {
    const recovered = await double(['drop', 'drop', ok()]);
    expect((await recovered.client.stocks.candles('D', 'SPY')).length).toBe(1);
    expect(recovered.waits).toEqual([500, 1000]);
    const lost = await double(['drop'], { maxRetries: 1 });
    await expect(lost.client.stocks.candles('D', 'SPY')).rejects.toBeInstanceOf(NetworkError);
    expect(lost.server.requests).toHaveLength(2);
  });

  it('gives up on an attempt that outlasts timeoutMs, and retries it as a network failure', async () => {
    let first = true;
    const server = await scriptedServer(async () => {
      if (!first) return ok();
      first = false;
      return new Promise<Scripted>(() => {}); // never answers
    });
    closers.push(server.close);
    const waits: number[] = [];
    const client = createClient({
      baseUrl: server.url,
      timeoutMs: 200,
      wait: async (ms) => {
        waits.push(ms);
      },
    });
    expect((await client.stocks.candles('D', 'SPY')).length).toBe(1);
    expect([server.requests.length, waits]).toEqual([2, [500]]);
  });

  it('never retries a 4xx, nor a 500 (the request itself failed), nor a 429 with Retry-After', async () => {
    for (const [status, Kind] of [
      [400, BadRequestError],
      [500, ServerError],
    ] as const) {
      const { client, server, waits } = await double([error(status, 'no')]);
      await expect(client.stocks.candles('D', 'SPY')).rejects.toBeInstanceOf(Kind);
      expect([server.requests.length, waits]).toEqual([1, []]);
    }
    const limited = await double([
      error(429, 'Too many concurrent requests. Please reduce parallel requests and retry.', {
        'Retry-After': '3',
      }),
    ]);
    const failure = await limited.client.stocks.candles('D', 'SPY').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RateLimitError);
    expect(failure).toMatchObject({ status: 429, retryAfterSeconds: 3 });
    expect(limited.server.requests).toHaveLength(1);
  });
});

describe('typed errors', () => {
  it('throws one class per status, each a MarketDataError with the body and ray id', async () => {
    const cases = [
      [401, AuthenticationError],
      [402, PaymentRequiredError],
      [403, ForbiddenError],
      [404, NotFoundError],
      [413, PayloadTooLargeError],
    ] as const;
    for (const [status, Kind] of cases) {
      const { client } = await double([error(status, `refused ${status}`, { 'CF-Ray': 'abc-LCL' })]);
      const failure = await client.options.quotes('AAPL250117P00150000').catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(Kind);
      expect(failure).toBeInstanceOf(MarketDataError);
      expect(failure).toMatchObject({ status, errmsg: `refused ${status}`, rayId: 'abc-LCL' });
    }
  });

  it('reads the HTML 400 of a request line too large', async () => {
    const html =
      '<html><head><title>Bad Request</title></head><body><h1><p>Bad Request</p></h1>Request Line is too large (5000 > 4094)</body></html>';
    const { client } = await double([{ status: 400, headers: { 'Content-Type': 'text/html' }, body: html }]);
    await expect(client.stocks.candles('D', 'SPY')).rejects.toThrow(
      'Bad Request Bad Request Request Line is too large (5000 > 4094)',
    );
  });

  it('answers a 404 without errmsg as an empty result, with nextTime and prevTime', async () => {
    const { client } = await double([
      { status: 404, body: JSON.stringify({ s: 'no_data', nextTime: 1583159400, prevTime: null }) },
    ]);
    const result = await client.options.chain('SPY', { date: '2020-03-07' });
    expect(result.length).toBe(0);
    expect(result.meta).toMatchObject({ noData: true, nextTime: 1583159400, prevTime: null, credits: 0 });
    expect(Object.keys(result.columns)).toContain('openInterest');
  });
});

describe('204 fallback', () => {
  it('asks once more with mode=live, and no more than once', async () => {
    const { client, server } = await double([{ status: 204, headers: rateHeaders(0) }]);
    const result = await client.options.chain('SPY', { mode: 'cached', maxage: '5min' });
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/options/chain/SPY/?mode=cached&maxage=5min',
      '/v1/options/chain/SPY/?mode=live&maxage=5min',
    ]);
    expect(result.meta).toMatchObject({ noData: true, credits: 0, mode: 'live' });
  });
});

describe('credits, concurrency and the environment', () => {
  it('sums X-Api-Ratelimit-Consumed and keeps the last limit, remaining and reset', async () => {
    const { client } = await double([ok(3), ok(2)]);
    const first = await client.stocks.candles('D', 'SPY');
    await client.stocks.candles('D', 'AAPL');
    expect(first.meta.credits).toBe(3);
    expect(client.credits).toMatchObject({
      spent: 5,
      consumed: 2,
      limit: 100000,
      remaining: 1000,
      requests: 2,
    });
  });

  it('refuses to send once the service said no credit remains in the window', async () => {
    const { client, server } = await double([
      { status: 200, headers: rateHeaders(1, 0), body: candlesBody() },
    ]);
    await client.stocks.candles('D', 'SPY');
    await expect(client.stocks.candles('D', 'SPY')).rejects.toBeInstanceOf(RateLimitError);
    expect(server.requests).toHaveLength(1);
  });

  it('keeps at most 50 requests in flight', async () => {
    const total = 120;
    let answered = 0;
    const held: (() => void)[] = [];
    // The double holds requests until a full window has arrived (or all that are left), then answers them.
    const server = await scriptedServer(async () => {
      await new Promise<void>((resolve) => {
        held.push(resolve);
        if (held.length === Math.min(50, total - answered)) {
          answered += held.length;
          for (const release of held.splice(0)) release();
        }
      });
      return ok();
    });
    closers.push(server.close);
    let inFlight = 0;
    let most = 0;
    const counting: typeof fetch = async (...args) => {
      most = Math.max(most, ++inFlight);
      try {
        return await fetch(...args);
      } finally {
        inFlight--;
      }
    };
    const client = createClient({ baseUrl: server.url, token: 't', fetch: counting });
    const calls = Array.from({ length: total }, () => client.stocks.candles('D', 'SPY'));
    expect((await Promise.all(calls)).every((r) => r.length === 1)).toBe(true);
    expect([most, server.requests.length]).toEqual([50, total]);
  });

  it('reads MARKETDATA_BASE_URL and MARKETDATA_TOKEN, sends the token as a Bearer header only', async () => {
    const { server } = await double([ok()]);
    const saved = { ...process.env };
    try {
      process.env['MARKETDATA_BASE_URL'] = server.url;
      process.env['MARKETDATA_TOKEN'] = 'env-token';
      await createClient().stocks.candles('D', 'SPY', { from: '2020-03-02', to: '2020-03-06' });
    } finally {
      process.env = saved;
    }
    const [request] = server.requests;
    expect(request!.headers['authorization']).toBe('Bearer env-token');
    expect(request!.url).toBe('/v1/stocks/candles/D/SPY/?from=2020-03-02&to=2020-03-06');
  });

  it("counts a base URL's path in the 4,094-byte request line of each batch", async () => {
    const { server } = await double([ok()]);
    const client = createClient({ baseUrl: `${server.url}/behind/a/proxy`, token: 't' });
    const symbols = Array.from({ length: 450 }, (_, i) => `S${String(i).padStart(7, '0')}`);
    await client.stocks.prices(symbols);
    const lines = server.requests.map((r) => `GET ${r.url} HTTP/1.1`.length);
    expect(
      server.requests.every((r) => r.url!.startsWith('/behind/a/proxy/v1/stocks/prices/?symbols=')),
    ).toBe(true);
    expect(lines).toHaveLength(2);
    expect(Math.max(...lines)).toBeLessThanOrEqual(4094);
    const sent = server.requests.flatMap((r) =>
      new URL(r.url!, 'http://x').searchParams.get('symbols')!.split(','),
    );
    expect(sent.sort()).toEqual(symbols);
  });

  it('refuses a clock instant: the service answers at its own', async () => {
    const { client } = await double([ok()]);
    await expect(client.stocks.candles('D', 'SPY', {}, { now: '2020-03-16T15:45:00-04:00' })).rejects.toThrow(
      'The service answers at its own clock',
    );
  });
});
