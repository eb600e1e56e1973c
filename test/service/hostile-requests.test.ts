/**
 * Requests a caller gets wrong on purpose or by accident: every one is answered with the service's 4xx
 * and a message in its words, never a 500 or a JavaScript message.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store-api.js';
import { REPO_ROOT } from '../helpers/paths.js';

process.env.TZ = 'Asia/Tokyo';
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
