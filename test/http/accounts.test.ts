import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { startServer } from './helpers/server.js';

const NOW = '2020-03-16T15:45:00-04:00';
const PAID = 'paid-token-0123456789';
const FREE = 'free-token-0123456789';

describe('pitchain serve with an accounts file, over a real port', () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    await ensureBuilt();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-http-accounts-'));
    const accounts = path.join(dir, 'accounts.json');
    await fs.writeFile(
      accounts,
      JSON.stringify({
        [PAID]: { plan: 'trader', userType: 'nonpro', opra: true },
        [FREE]: { plan: 'free', userType: 'nonpro', opra: false },
      }),
    );
    server = await startServer(['--now', NOW, '--accounts', accounts]);
  }, 120_000);
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await fs.rm(dir, { recursive: true, force: true });
  });

  const get = (target: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${target}`, { headers });
  const chain = '/v1/options/chain/SPY/?dte=2&side=put&strikeLimit=1';

  it('authenticates by Bearer header or token parameter, and answers 401 otherwise', async () => {
    expect((await get(chain, { Authorization: `Bearer ${PAID}` })).status).toBe(200);
    // The same question at the same cutoff again: from the response cache.
    expect((await get(`${chain}&token=${PAID}`)).status).toBe(203);
    for (const headers of [{}, { Authorization: 'Bearer not-a-token' }, { Authorization: `Token ${PAID}` }]) {
      const response = await get(chain, headers);
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ s: 'error' });
    }
  });

  it('gives free accounts historical data and a 402 for another mode, with the rate-limit headers', async () => {
    const free = await get(`${chain}&mode=live`, { Authorization: `Bearer ${FREE}` });
    expect(free.status).toBe(402);
    const historical = await get(chain, { Authorization: `Bearer ${FREE}` });
    expect(historical.status).toBe(200);
    for (const name of ['limit', 'remaining', 'reset', 'consumed']) {
      expect(historical.headers.get(`x-api-ratelimit-${name}`), name).toMatch(/^\d+$/);
    }
    expect(Number(historical.headers.get('x-api-ratelimit-remaining'))).toBeLessThan(100);
  });

  it('echoes headers with the token redacted to its last four characters, and answers /user/', async () => {
    const headers = (await (await get('/headers/', { Authorization: `Bearer ${PAID}` })).json()) as Record<
      string,
      string
    >;
    expect(headers['authorization']).toBe(`Bearer ${'*'.repeat(PAID.length - 4)}${PAID.slice(-4)}`);
    // Free answers: the rate-limit headers of the account a token names, none without one.
    const withToken = await get('/status/', { Authorization: `Bearer ${PAID}` });
    const without = await get('/status/');
    expect([withToken.status, withToken.headers.get('x-api-ratelimit-limit')]).toEqual([200, '100000']);
    expect([without.status, without.headers.get('x-api-ratelimit-limit')]).toEqual([200, null]);
    const user = (await (await get('/user/', { Authorization: `Bearer ${PAID}` })).json()) as Record<
      string,
      unknown
    >;
    expect(user).toMatchObject({ 'x-options-data-permissions': 'realtime' });
  });
});
