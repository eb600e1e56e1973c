/**
 * The official JS SDK's expectations (api-reference §10), held against a real `pitchain serve` process on
 * the sample store with no accounts file. The SDK itself is not on the npm registry, so this test sends
 * its documented calls as it sends them (`format=json` first, its headers, paths ending in `/`, symbols
 * percent-encoded into the path) and validates each answer by the rules §10 states its zod schemas hold:
 * a value of the wrong type, or a null where a number is required, is a failed call for the SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ensureBuilt } from '../helpers/build.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const NOW = '2020-03-16T15:45:00-04:00';

const strings = z.array(z.string());
const numbers = z.array(z.number());
const maybeNumbers = z.array(z.number().nullable());

/** Chain and option quotes: the full chain field set, numbers that are never null where §10 says so. */
const optionRows = z.object({
  s: z.literal('ok'),
  optionSymbol: strings,
  underlying: strings,
  expiration: numbers,
  side: z.array(z.enum(['call', 'put'])),
  strike: numbers,
  firstTraded: numbers,
  dte: numbers,
  updated: numbers,
  bid: maybeNumbers,
  bidSize: maybeNumbers,
  mid: maybeNumbers,
  ask: maybeNumbers,
  askSize: maybeNumbers,
  last: maybeNumbers,
  openInterest: maybeNumbers,
  volume: maybeNumbers,
  inTheMoney: z.array(z.boolean()),
  intrinsicValue: numbers,
  extrinsicValue: numbers,
  underlyingPrice: numbers,
  iv: maybeNumbers,
  delta: maybeNumbers,
  gamma: maybeNumbers,
  theta: maybeNumbers,
  vega: maybeNumbers,
});
const stockQuotes = z.object({
  s: z.literal('ok'),
  symbol: strings,
  ask: numbers,
  askSize: numbers,
  bid: numbers,
  bidSize: numbers,
  mid: numbers,
  last: numbers,
  change: numbers,
  changepct: numbers,
  volume: numbers,
  updated: numbers,
});
const prices = z.object({
  s: z.literal('ok'),
  symbol: strings,
  mid: numbers,
  change: numbers,
  changepct: numbers,
  updated: numbers,
});
const candles = z.object({
  s: z.literal('ok'),
  t: numbers,
  o: numbers,
  h: numbers,
  l: numbers,
  c: numbers,
  v: numbers,
});
const marketStatus = z.object({ s: z.literal('ok'), date: numbers, status: strings });
const expirations = z.object({ s: z.literal('ok'), expirations: strings, updated: z.number() });
const strikes = z
  .object({ s: z.literal('ok'), updated: z.number() })
  .catchall(numbers)
  .refine((body) => Object.keys(body).length > 2, 'no expiration key');
const lookup = z.object({ s: z.literal('ok'), optionSymbol: z.string() });
const serviceStatus = z.object({
  s: z.literal('ok'),
  service: strings,
  status: strings,
  online: z.array(z.boolean()),
  updated: numbers,
});
const user = z.object({
  'x-ratelimit-requests-remaining': z.number(),
  'x-ratelimit-requests-limit': z.number(),
  'x-options-data-permissions': z.string(),
});

/** The SDK's URL: `new URL(`${version}/${path}`, base)`, `format=json` then the call's parameters. */
function sdkUrl(base: string, path: string, params: Record<string, string> = {}, versioned = true): URL {
  const url = new URL(`${versioned ? 'v1/' : ''}${path}`, `${base}/`);
  url.search = new URLSearchParams({ format: 'json', ...params }).toString();
  return url;
}

/** Every columnar array of a body has the same length (one element per row). */
function rowCounts(body: Record<string, unknown>): number[] {
  return [...new Set(Object.values(body).flatMap((v) => (Array.isArray(v) ? [v.length] : [])))];
}

type Call = { name: string; path: string; params?: Record<string, string>; schema: z.ZodType };

/** The documented calls of the SDK, on the sample's sessions (api-reference §10, "Calls seen"). */
const CALLS: Call[] = [
  {
    name: 'markets.status',
    path: 'markets/status/',
    params: { from: '2020-03-09', to: '2020-03-13' },
    schema: marketStatus,
  },
  { name: 'options.expirations', path: 'options/expirations/SPY/', schema: expirations },
  {
    name: 'options.expirations dated',
    path: 'options/expirations/AAPL/',
    params: { date: '2020-03-13' },
    schema: expirations,
  },
  { name: 'options.strikes', path: 'options/strikes/SPY/', params: { date: '2020-03-13' }, schema: strikes },
  {
    name: 'options.lookup',
    path: `options/lookup/${encodeURIComponent('SPY 4/17/20 $250 Put')}/`,
    schema: lookup,
  },
  {
    name: 'options.chain',
    path: 'options/chain/SPY/',
    params: { dte: '30', side: 'put' },
    schema: optionRows,
  },
  {
    name: 'options.chain dated',
    path: 'options/chain/SPY/',
    params: { date: '2020-03-13', dte: '30', side: 'call' },
    schema: optionRows,
  },
  {
    name: 'options.chain index',
    path: 'options/chain/SPX/',
    params: { date: '2020-03-13' },
    schema: optionRows,
  },
  {
    name: 'options.chain all',
    path: 'options/chain/AAPL/',
    params: { expiration: 'all' },
    schema: optionRows,
  },
  { name: 'options.quotes', path: 'options/quotes/SPY200417P00250000/', schema: optionRows },
  {
    name: 'options.quotes range',
    path: 'options/quotes/SPY200417P00250000/',
    params: { from: '2020-03-09', to: '2020-03-13' },
    schema: optionRows,
  },
  {
    name: 'stocks.candles daily',
    path: 'stocks/candles/D/SPY/',
    params: { from: '2020-01-02', to: '2020-03-13' },
    schema: candles,
  },
  {
    name: 'stocks.candles minute',
    path: 'stocks/candles/1/AAPL/',
    params: { from: '2020-03-13', to: '2020-03-13' },
    schema: candles,
  },
  { name: 'stocks.quotes', path: 'stocks/bulkquotes/', params: { symbols: 'SPY,AAPL' }, schema: stockQuotes },
  { name: 'stocks.quotes one', path: 'stocks/quotes/SPY/', schema: stockQuotes },
  { name: 'stocks.prices', path: 'stocks/prices/', params: { symbols: 'SPY,AAPL' }, schema: prices },
];

describe('the official JS SDK against pitchain serve, with no accounts file', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    await ensureBuilt();
    server = await startServer(['--now', NOW]);
  }, 120_000);
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });

  /** Headers as the SDK sends them; with no token it sends no Authorization (its demo mode). */
  const headers = (token: string | undefined): Record<string, string> => ({
    Accept: 'application/json',
    'User-Agent': 'marketdata-sdk-js/1.0.0',
    ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
  });

  it('starts: /user/ answers any token, or none, as the local account, with the rate-limit headers', async () => {
    for (const token of ['any-token-at-all', 'x', undefined]) {
      const response = await fetch(sdkUrl(server.url, 'user/', {}, false), { headers: headers(token) });
      expect(response.status).toBe(200);
      expect(user.parse(await response.json())).toEqual({
        'x-ratelimit-requests-remaining': 1_000_000_000,
        'x-ratelimit-requests-limit': 1_000_000_000,
        'x-options-data-permissions': 'realtime',
      });
      expect(Number(response.headers.get('x-api-ratelimit-remaining'))).toBeGreaterThan(0);
    }
  });

  for (const token of ['any-token-at-all', undefined]) {
    it(`completes every documented call without a validation error (${token === undefined ? 'no token' : 'a token'})`, async () => {
      const failures: string[] = [];
      for (const call of CALLS) {
        const response = await fetch(sdkUrl(server.url, call.path, call.params), { headers: headers(token) });
        const text = await response.text();
        if (response.status !== 200 && response.status !== 203) {
          failures.push(`${call.name}: ${response.status} ${text.slice(0, 200)}`);
          continue;
        }
        // The SDK refuses to send once remaining is not positive: every answer carries the four headers.
        for (const name of ['limit', 'remaining', 'reset', 'consumed']) {
          const value = response.headers.get(`x-api-ratelimit-${name}`);
          if (value === null || !/^-?\d+$/.test(value))
            failures.push(`${call.name}: x-api-ratelimit-${name} ${value}`);
        }
        if (!(Number(response.headers.get('x-api-ratelimit-remaining')) > 0))
          failures.push(`${call.name}: remaining`);
        const body = JSON.parse(text) as Record<string, unknown>;
        const parsed = call.schema.safeParse(body);
        if (!parsed.success) {
          const issue = parsed.error.issues[0]!;
          failures.push(`${call.name}: ${issue.path.join('.')}: ${issue.message}`);
        }
        if (rowCounts(body).length > 1 && call.schema !== strikes)
          failures.push(`${call.name}: ragged columns`);
      }
      expect(failures).toEqual([]);
    });
  }

  it('answers /status/ and /headers/ as the SDK reads them', async () => {
    const status = await fetch(sdkUrl(server.url, 'status/', {}, false), { headers: headers(undefined) });
    const services = serviceStatus.parse(await status.json()).service;
    // The services the SDK looks up before retrying.
    expect(services).toEqual(
      expect.arrayContaining(['/v1/options/chain/', '/v1/stocks/bulkquotes/', '/v1/stocks/prices/']),
    );
    // Free answers carry the account's rate-limit headers too (the Python SDK reads them on every success).
    expect(Number(status.headers.get('x-api-ratelimit-remaining'))).toBeGreaterThan(0);
    const echoed = await fetch(sdkUrl(server.url, 'headers/', {}, false), {
      headers: headers('any-token-at-all'),
    });
    expect(echoed.headers.get('x-api-ratelimit-consumed')).toBe('0');
    expect(await echoed.json()).toMatchObject({
      'user-agent': 'marketdata-sdk-js/1.0.0',
      authorization: `Bearer ${'*'.repeat(12)}-all`,
    });
  });

  it('answers a 404 for no data, which the SDK turns into an empty result', async () => {
    const response = await fetch(
      sdkUrl(server.url, 'options/chain/SPY/', { date: '2020-03-13', strike: '9999' }),
      {
        headers: headers('any-token-at-all'),
      },
    );
    expect([response.status, await response.json()]).toEqual([
      404,
      { s: 'no_data', nextTime: expect.any(Number), prevTime: expect.any(Number) },
    ]);
  });
});
