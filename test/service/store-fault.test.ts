/**
 * A store fault is the only 5xx the service answers: the body says no more than "Internal error.", the
 * ray id in the headers names the request-log entry, and `detail` (for the operator's logs) names the
 * cause.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/index.js';
import { storeInternals } from '../../src/library/store.js';
import { copySampleStore, REPO_ROOT } from '../helpers/paths.js';
import { pinTimeZone } from '../helpers/time-zone.js';

pinTimeZone('Europe/Berlin');
const NOW = '2020-03-20T15:45:00-04:00';
const TOKEN = 'fault-token';

let dir: string;
let store: Store;
let missing: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-fault-'));
  const copy = path.join(dir, 'store');
  await copySampleStore(copy);
  const accounts = path.join(dir, 'accounts.json');
  await fs.writeFile(
    accounts,
    JSON.stringify({ [TOKEN]: { plan: 'prime', userType: 'nonpro', opra: true } }),
  );
  store = await openStore(copy, { now: NOW, accounts });
  // The SPY option quotes of 2020 vanish under the open reader.
  const folder = path.join(copy, 'tables/option_quotes/underlying=SPY/year=2020');
  const [file] = await fs.readdir(folder);
  missing = file!;
  await fs.rm(path.join(folder, missing));
});
afterAll(async () => {
  store?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('a store fault', () => {
  it('is a 500 "Internal error." with a ray id, and its detail names the missing file', async () => {
    const response = await store.request('/v1/options/chain/SPY/', { token: TOKEN });
    expect(response.status).toBe(500);
    expect(response.body).toBe('{"s":"error","errmsg":"Internal error."}');
    expect(response.headers['CF-Ray']).toMatch(/^[0-9a-f]{16}-LCL$/);
    expect(response.headers['X-Api-Response-Log-Id']).toMatch(/^\d+$/);
    expect(response.detail).toContain(missing);
    const logged = storeInternals(store).api.ledger.log.at(-1)!;
    expect([logged.ray, logged.status, logged.credits]).toEqual([response.headers['CF-Ray'], 500, 0]);
  });

  it('is answered in CSV too, still without internals', async () => {
    const response = await store.request('/v1/options/chain/SPY/?format=csv', { token: TOKEN });
    expect([response.status, response.body]).toEqual([500, 's,errmsg\r\nerror,Internal error.\r\n']);
    expect(response.headers['CF-Ray']).toMatch(/^[0-9a-f]{16}-LCL$/);
  });

  it('leaves requests that do not read the file answered', async () => {
    const response = await store.request('/v1/markets/status/', { token: TOKEN });
    expect(response.status).toBe(200);
  });
});

describe('a request log that cannot be written', () => {
  it('is a 503 answered, not a throw, and its detail names the cause', async () => {
    const broken = await openStore(path.join(REPO_ROOT, 'data/sample'), { now: NOW, ledgerFile: dir });
    try {
      const response = await broken.request('/v1/markets/status/');
      expect([response.status, response.body]).toEqual([
        503,
        '{"s":"error","errmsg":"Service temporarily unavailable. Please retry shortly."}',
      ]);
      expect(response.detail).toMatch(/EISDIR/);
    } finally {
      broken.close();
    }
  });
});
