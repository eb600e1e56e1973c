/**
 * Requests a caller gets wrong on purpose or by accident: every one is answered with the service's 4xx
 * and a message in its words, never a 500 or a JavaScript message.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MarketDataError } from '../../src/errors.js';
import { openStore, type Store } from '../../src/index.js';
import { fixedClock } from '../../src/market-time/index.js';
import { booleanParam, dayParam, parseParams } from '../../src/query/params.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { pinTimeZone } from '../helpers/time-zone.js';

pinTimeZone('Asia/Tokyo');
const NOW = '2020-03-20T15:45:00-04:00';

let store: Store;
beforeAll(async () => {
  store = await openStore(path.join(REPO_ROOT, 'data/sample'), { now: NOW });
});
afterAll(() => store?.close());

async function answer(target: string) {
  const response = await store.request(target);
  return { status: response.status, body: JSON.parse(response.body) as unknown };
}

describe('prototype names as values', () => {
  it.each([
    '/v1/options/expirations/SPY/?mode=constructor',
    '/v1/options/chain/SPY/?mode=__proto__',
    '/v1/stocks/quotes/SPY/?feed=__proto__',
    '/v1/options/strikes/SPY/?feed=Constructor',
  ])('%s is an unknown mode', async (target) => {
    const value = new URLSearchParams(target.split('?')[1]).values().next().value;
    expect(await answer(target)).toEqual({
      status: 400,
      body: {
        s: 'error',
        errmsg: `Invalid mode '${value}'. Use live, delayed, eod, historical or cached.`,
      },
    });
  });

  it.each([
    ['-5%20constructor', '-5 constructor'],
    ['5%20__proto__%20ago', '5 __proto__ ago'],
    ['-1%20hasOwnProperty', '-1 hasOwnProperty'],
  ])('a relative date with the unit %s is not a date', async (value, shown) => {
    expect(await answer(`/v1/stocks/candles/D/SPY/?from=${value}`)).toEqual({
      status: 400,
      body: { s: 'error', errmsg: `Invalid parameter from: Invalid date input "${shown}"` },
    });
  });

  it.each(['constructor', '__proto__', 'valueOf'])('the resolution %s is not a resolution', async (word) => {
    const candles = await answer(`/v1/stocks/candles/${word}/SPY/`);
    expect(candles.status).toBe(400);
    expect(candles.body).toEqual({
      s: 'error',
      errmsg: expect.stringMatching(new RegExp(`^Invalid resolution "${word}"\\. Use minutes`)),
    });
    expect(await answer(`/v1/stocks/bulkcandles/${word}/?symbols=SPY`)).toEqual({
      status: 400,
      body: {
        s: 'error',
        errmsg: `Invalid resolution "${word}". Bulk candles are daily only: daily, D or 1D.`,
      },
    });
  });

  it('echoes a header named __proto__ like any other', async () => {
    const response = await store.request('/headers/', { headers: { ['__proto__']: 'x', Accept: 'a' } });
    expect(response.body).toBe('{"__proto__":"x","accept":"a"}');
  });
});

describe('numbers out of range', () => {
  const DATES_RANGE = 'dates must lie between 1800-01-01 and 2199-12-31';

  it.each([
    [
      '/v1/options/expirations/SPY/?strike=1000000000',
      'Invalid parameter strike: expected a number from 0 to 99999.999, got "1000000000".',
    ],
    ['/v1/options/expirations/SPY/?strike=0x10', 'Invalid parameter strike: expected a number, got "0x10".'],
    [
      '/v1/options/strikes/SPY/?expiration=9223372036854775808',
      'Invalid parameter expiration: expected a date or "all", got "9223372036854775808".',
    ],
    [
      '/v1/options/quotes/SPY200320P00240000/?from=9223372036854775808',
      `Invalid parameter from: Invalid date input "9223372036854775808": ${DATES_RANGE}`,
    ],
    [
      '/v1/stocks/candles/1/SPY/?to=9223372036854775808',
      `Invalid parameter to: Invalid date input "9223372036854775808": ${DATES_RANGE}`,
    ],
    [
      '/v1/stocks/candles/D/SPY/?from=1799-12-31',
      `Invalid parameter from: Invalid date input "1799-12-31": ${DATES_RANGE}`,
    ],
    [
      '/v1/markets/status/?date=2200-01-01',
      `Invalid parameter date: Invalid date input "2200-01-01": ${DATES_RANGE}`,
    ],
  ])('%s is a 400', async (target, errmsg) => {
    expect(await answer(target)).toEqual({ status: 400, body: { s: 'error', errmsg } });
  });

  it.each([
    '/v1/stocks/candles/D/SPY/?from=-99999999999%20days',
    '/v1/stocks/candles/1/SPY/?from=-9999999999%20minutes',
    '/v1/stocks/candles/D/SPY/?from=-999999%20years',
    '/v1/markets/status/?from=-9999999%20weeks',
  ])('a relative date beyond the representable years is a 400: %s', async (target) => {
    const { status, body } = await answer(target);
    expect(status).toBe(400);
    expect(body).toEqual({
      s: 'error',
      errmsg: expect.stringMatching(
        /^Invalid parameter from: Invalid date input .* dates must lie between 0001-01-01 and 9999-12-31$/,
      ),
    });
  });

  it.each(['D', 'W', 'M', 'Y', '2D', '999999W'])(
    'countback beyond the stored history is every candle (%s)',
    async (resolution) => {
      const all = await answer(`/v1/stocks/candles/${resolution}/SPY/?from=1800-01-01&to=2020-03-20`);
      for (const countback of ['368928', '10000000']) {
        const target = `/v1/stocks/candles/${resolution}/SPY/?countback=${countback}&to=2199-12-31`;
        expect(await answer(target)).toEqual(all);
      }
      expect(all.status).toBe(200);
    },
  );

  it('a candle of 999999 years is never complete: no data', async () => {
    expect(await answer('/v1/stocks/candles/999999Y/SPY/?countback=368928')).toEqual({
      status: 404,
      body: { s: 'no_data', nextTime: null, prevTime: null },
    });
  });
});

describe('request options of the wrong kind', () => {
  it('answers with null options as with none', async () => {
    const response = await store.request('/v1/markets/status/', null as never);
    expect([response.status, response.body]).toEqual([
      200,
      '{"s":"ok","date":[1584676800],"status":["open"]}',
    ]);
  });

  it('reads headers that throw when read as far as they go, and answers', async () => {
    const headers = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('no keys');
        },
      },
    );
    const response = await store.request('/v1/markets/status/', { headers: headers as never });
    expect([200, 203]).toContain(response.status);
  });

  const refuse = (shown: string) => ({
    s: 'error',
    errmsg: `Invalid clock instant ${shown}: give epoch seconds, a Date, or a date and time such as 2020-03-16T15:45:00-04:00.`,
  });
  const throwing = {
    toString: () => {
      throw new Error('no text');
    },
  };

  it.each([
    ['an object whose text throws', throwing, 'of type object'],
    ['a null-prototype object', Object.create(null), 'of type object'],
    ['a symbol', Symbol('now'), 'of type symbol'],
    ['an invalid Date', new Date(Number.NaN), 'Invalid Date'],
    ['NaN', Number.NaN, 'NaN'],
    ['a bare date', '2020-03-16', "'2020-03-16'"],
  ])('a now that is %s is a 400 that never asks the value for its text', async (_, now, shown) => {
    const response = await store.request('/v1/markets/status/', { now: now as never });
    expect({ status: response.status, body: JSON.parse(response.body) }).toEqual({
      status: 400,
      body: refuse(shown),
    });
  });
});

describe("every 400 in the service's words", () => {
  it.each([
    // One reader of calendar dates for option and stock endpoints, with the same words.
    ['/v1/options/quotes/SPY200320P00240000/?from=soon', 'Invalid parameter from: Invalid date input "soon"'],
    ['/v1/options/chain/SPY/?to=soon', 'Invalid parameter to: Invalid date input "soon"'],
    ['/v1/markets/status/?from=soon', 'Invalid parameter from: Invalid date input "soon"'],
    // The universal parameters say what they accept, not zod's "Invalid option".
    ['/v1/markets/status/?format=xml', "Invalid parameter 'format': xml (expected json or csv)."],
    ['/v1/markets/status/?human=2', "Invalid parameter 'human': 2 (expected true or false)."],
    [
      `/v1/markets/status/?dateformat=${'i'.repeat(50)}`,
      `Invalid parameter 'dateformat': ${'i'.repeat(40)}… (expected unix, timestamp or spreadsheet).`,
    ],
    // A long value is shown shortened, never whole.
    [
      `/v1/stocks/quotes/SPY/?candle=${'y'.repeat(300)}`,
      `Invalid parameter candle: expected true or false, got "${'y'.repeat(40)}…"`,
    ],
  ])('%s', async (target, errmsg) => {
    expect(await answer(target)).toEqual({ status: 400, body: { s: 'error', errmsg } });
  });

  it('answers a value zod itself refuses without its JavaScript words', () => {
    const schema = z.object({ flag: booleanParam, day: dayParam(fixedClock(0)) });
    const refusal = (query: unknown) => {
      try {
        parseParams(schema, query as Record<string, string>);
      } catch (error) {
        return error instanceof MarketDataError ? [error.status, error.errmsg] : error;
      }
      return undefined;
    };
    expect(refusal({ flag: 1 })).toEqual([400, 'Invalid parameter flag: expected text.']);
    expect(refusal({ flag: 'true', day: 'soon' })).toEqual([
      400,
      'Invalid parameter day: Invalid date input "soon"',
    ]);
  });
});
