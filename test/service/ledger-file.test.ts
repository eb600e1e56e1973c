/**
 * The request log and ledger survive the disk: whole lines only (a torn tail is cut on open), a log that
 * cannot be written refuses the request with 503 and Retry-After and charges nothing (and /status/ says
 * degraded until a write succeeds), the file is reopened after a rotation, ids stay unique across
 * restarts, and each account's usage in its window is read back on start.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Account, AccountBook, LOCAL_ACCOUNT } from '../../src/billing/accounts.js';
import { Ledger } from '../../src/billing/ledger.js';
import { openStore, storeInternals } from '../../src/library/store.js';

const NOW = 1_584_387_900; // 2020-03-16T15:45:00-04:00
const ACCOUNT: Account = { ...LOCAL_ACCOUNT, id: 'account-1', credits: { limit: 100, period: 'day' } };

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-ledger-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.useRealTimers();
});

async function lines(file: string): Promise<string[]> {
  return (await fs.readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
}

describe('the request log file', () => {
  it('cuts a torn last line when opened, so the next entry is a line of its own', async () => {
    const file = path.join(dir, 'torn.jsonl');
    const whole = JSON.stringify({
      ray: 'r',
      logId: 7,
      account: 'account-1',
      path: '/x',
      status: 200,
      credits: 1,
      atSeconds: NOW,
    });
    await fs.writeFile(file, `${whole}\n{"ray":"torn","logI`);
    const ledger = new Ledger(file);
    await ledger.record(ACCOUNT, '/v1/markets/status/', 200, 1, NOW);
    await ledger.close();
    const kept = await lines(file);
    expect(kept).toHaveLength(2);
    expect(kept[0]).toBe(whole);
    expect(JSON.parse(kept[1]!)).toMatchObject({ path: '/v1/markets/status/', credits: 1 });
  });

  it('gives ids past an earlier run and reads back the usage of the current window', async () => {
    const file = path.join(dir, 'restart.jsonl');
    const first = new Ledger(file);
    const a = await first.record(ACCOUNT, '/a', 200, 30, NOW);
    await first.record(ACCOUNT, '/b', 200, 12, NOW + 60);
    await first.close();
    const second = new Ledger(file);
    await second.ready;
    expect(second.remaining(ACCOUNT, NOW + 120)).toBe(100 - 42);
    const b = await second.record(ACCOUNT, '/c', 200, 1, NOW + 180);
    expect(b.logId).toBeGreaterThan(a.logId + 1);
    // The next day's window starts empty.
    expect(second.remaining(ACCOUNT, NOW + 86_400)).toBe(100);
    await second.close();
  });

  it('reads usage back to the account that spent it, however the accounts file was reordered', async () => {
    const file = path.join(dir, 'reordered.jsonl');
    const window = {
      plan: 'starter',
      userType: 'nonpro',
      opra: true,
      credits: { limit: 100, period: 'day' },
    } as const;
    const before = new AccountBook({ 'token-a': window, 'token-b': window });
    const first = new Ledger(file);
    await first.record(before.find('token-a')!, '/a', 200, 30, NOW);
    await first.close();
    // After a restart with token-b listed first (or token-a's neighbour removed), token-a keeps its usage.
    const after = new AccountBook({ 'token-b': window, 'token-a': window });
    expect(after.find('token-a')!.id).toBe(before.find('token-a')!.id);
    const second = new Ledger(file);
    await second.ready;
    expect(second.remaining(after.find('token-a')!, NOW + 60)).toBe(70);
    expect(second.remaining(after.find('token-b')!, NOW + 60)).toBe(100);
    await second.close();
    expect(await fs.readFile(file, 'utf8')).not.toContain('token-a');
  });

  it('opens a new file after the log was moved away: on reopen() and by itself once it notices', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const file = path.join(dir, 'rotated.jsonl');
    const ledger = new Ledger(file);
    await ledger.record(ACCOUNT, '/1', 200, 1, NOW);
    await fs.rename(file, `${file}.1`);
    await ledger.reopen();
    await ledger.record(ACCOUNT, '/2', 200, 1, NOW);
    await fs.rename(file, `${file}.2`);
    vi.setSystemTime(Date.now() + 5_000); // past the check of the file's identity
    await ledger.record(ACCOUNT, '/3', 200, 1, NOW);
    await ledger.close();
    expect((await lines(`${file}.1`)).map((l) => JSON.parse(l).path)).toEqual(['/1']);
    expect((await lines(`${file}.2`)).map((l) => JSON.parse(l).path)).toEqual(['/2']);
    expect((await lines(file)).map((l) => JSON.parse(l).path)).toEqual(['/3']);
  });
});

describe('a request log that cannot be written', () => {
  it('answers 503 with Retry-After, charges nothing, and says degraded in /status/ until a write succeeds', async () => {
    const file = path.join(dir, 'full.jsonl');
    await fs.symlink('/dev/full', file); // every write: ENOSPC
    const store = await openStore('data/sample', { now: NOW, threads: 1, ledgerFile: file });
    try {
      const refused = await store.request('/v1/markets/status/?date=2020-03-13');
      expect(refused.status).toBe(503);
      expect(refused.headers['Retry-After']).toBe('5');
      expect(refused.credits).toBe(0);
      expect(JSON.parse(refused.body)).toEqual({
        s: 'error',
        errmsg: 'Service temporarily unavailable. Please retry shortly.',
      });
      expect(storeInternals(store).api.ledger.totalCredits).toBe(0);
      expect(JSON.parse((await store.request('/status/')).body).status[0]).toBe('degraded');
      // The disk has room again (the log rotated onto a file that can be written).
      await fs.rm(file);
      await storeInternals(store).api.ledger.reopen();
      const answered = await store.request('/v1/markets/status/?date=2020-03-13');
      expect([200, 203]).toContain(answered.status); // 203: the refused request's answer was cached
      expect(storeInternals(store).api.ledger.totalCredits).toBe(1);
      expect(JSON.parse((await store.request('/status/')).body).status[0]).toBe('online');
      expect(await lines(file)).toHaveLength(1);
    } finally {
      store.close();
    }
  });
});
