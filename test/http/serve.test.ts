import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/library/store.js';
import { ensureBuilt } from '../helpers/build.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const NOW = '2020-03-16T15:45:00-04:00';
const ADMIN = 'admin-token-for-tests';

describe('pitchain serve', () => {
  let server: ServerProcess;
  let store: Store;
  beforeAll(async () => {
    await ensureBuilt();
    server = await startServer(['--now', NOW, '--admin-token', ADMIN]);
    store = await openStore('data/sample', { now: NOW, threads: 1 });
  }, 120_000);
  afterAll(() => {
    store.close();
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  });

  it('answers over a real port exactly what store.request answers, headers and all', async () => {
    const target = '/v1/options/chain/SPY/?dte=2&side=put&strikeLimit=1&columns=optionSymbol,bid,updated';
    const [response, expected] = await Promise.all([fetch(`${server.url}${target}`), store.request(target)]);
    expect(response.status).toBe(expected.status);
    expect(await response.text()).toBe(expected.body);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-api-ratelimit-consumed')).toBe(
      expected.headers['X-Api-Ratelimit-Consumed'],
    );
    expect(response.headers.get('cf-ray')).toMatch(/^[0-9a-f]+-/);
    const refused = await fetch(`${server.url}/v1/options/quotes/BAD/`);
    expect([refused.status, await refused.json()]).toEqual([
      400,
      { s: 'error', errmsg: 'Invalid option symbol. Use valid OCC symbology for the option symbol.' },
    ]);
  });

  it('answers HEAD without a body, OPTIONS with CORS, and other methods with 405', async () => {
    const head = await fetch(`${server.url}/v1/markets/status/`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
    const options = await fetch(`${server.url}/v1/options/chain/SPY/`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
    const post = await fetch(`${server.url}/v1/options/chain/SPY/`, { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('lets a request set its clock only with the admin token', async () => {
    const target = '/v1/options/chain/SPY/?dte=2&side=put&strikeLimit=1&columns=optionSymbol,bid,updated';
    const then = '2020-03-13T15:45:00-04:00';
    const refused = await fetch(`${server.url}${target}`, { headers: { 'X-Pitchain-Now': then } });
    expect(refused.status).toBe(403);
    const wrong = await fetch(`${server.url}${target}`, {
      headers: { 'X-Pitchain-Now': then, 'X-Pitchain-Admin': 'admin-token-for-tests!' },
    });
    expect(wrong.status).toBe(403);
    const moved = await fetch(`${server.url}${target}`, {
      headers: { 'X-Pitchain-Now': then, 'X-Pitchain-Admin': ADMIN },
    });
    expect([moved.status, await moved.text()]).toEqual([
      200,
      (await store.request(target, { now: then })).body,
    ]);
  });

  it('runs a replay clock from --replay at --speed', async () => {
    const replay = await startServer(['--replay', '2020-03-16T09:30:00-04:00', '--speed', '60']);
    try {
      const status = (await (await fetch(`${replay.url}/status/`)).json()) as { updated: number[] };
      const start = Date.parse('2020-03-16T13:30:00Z') / 1000;
      // A minute of replay per second of real time: well within an hour of the start for a test's run.
      expect(status.updated[0]).toBeGreaterThanOrEqual(start);
      expect(status.updated[0]).toBeLessThan(start + 3600);
    } finally {
      replay.child.kill('SIGTERM');
      expect(await replay.exited).toBe(0);
    }
  });

  it('stops on SIGTERM and exits 0', async () => {
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});
