/**
 * `Store.close` ends a store: a closed store answers nothing more (not even what its caches hold), keeps
 * none of what it read in memory and no file of the store open, and says so when asked.
 */
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { openStore, storeInternals } from '../../src/library/store.js';
import { commitGenerated, simulatedStock } from '../query/options/generated-store.js';

const SAMPLE = 'data/sample';
const T = '2020-03-16T15:45:00-04:00';

/** The process's open descriptors on files under `dir` (Linux's /proc). */
function openFilesUnder(dir: string): string[] {
  const root = `${resolve(dir)}/`;
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(root) ? [target] : [];
    } catch {
      return []; // closed between the listing and the link
    }
  });
}

describe('a closed store', () => {
  it('refuses every call, its cached answers and views made before included', async () => {
    const store = await openStore(SAMPLE, { now: T, threads: 1 });
    const view = store.at(T);
    const chain = () => store.options.chain('SPY', { dte: 30, side: 'put' });
    const live = () => view.options.chain('SPY', { dte: 30, side: 'put' });
    const dated = '/v1/options/chain/SPY/?date=2020-03-13&side=call';
    // Each answered twice: the second time from the caches.
    for (let i = 0; i < 2; i++) {
      expect((await chain()).length).toBeGreaterThan(0);
      expect((await live()).length).toBeGreaterThan(0);
      expect((await store.request(dated)).status).toBe(200);
    }
    store.close();

    const closed = { name: 'StoreError', message: 'the store is closed' };
    await expect(chain()).rejects.toMatchObject(closed);
    await expect(live()).rejects.toMatchObject(closed);
    await expect(store.request(dated)).rejects.toMatchObject(closed);
    await expect(store.summary()).rejects.toMatchObject(closed);
    await expect(store.splits()).rejects.toMatchObject(closed);
    await expect(store.contracts(['SPY200417P00240000'])).rejects.toMatchObject(closed);
    await expect(store.refresh()).rejects.toMatchObject(closed);
    expect(() => store.at(T)).toThrow(StoreError);
    expect(() => store.announceSessionLoop('2020-01-02', '2020-03-13')).toThrow('the store is closed');
    expect(() => store.close()).not.toThrow();
  });

  it('lets go of the answers it kept', async () => {
    const store = await openStore(SAMPLE, { now: T, threads: 1 });
    const { api } = storeInternals(store);
    await store.at(T).options.chain('SPY', { dte: 30 });
    await store.request('/v1/options/chain/SPY/?date=2020-03-13');
    await store.request('/v1/options/chain/SPY/?date=2020-03-13');
    expect(api.responseCache.size).toBeGreaterThan(0);
    store.close();
    expect(api.responseCache.size).toBe(0);
  });

  it.skipIf(!existsSync('/proc/self/fd'))(
    'holds no file of the store open, and opens none again',
    async () => {
      // A generated store: its session column files are read in JavaScript, their descriptors kept between reads.
      const dir = await mkdtemp(join(tmpdir(), 'pitchain-close-'));
      try {
        await commitGenerated(
          dir,
          simulatedStock(
            { from: '2021-03-01', to: '2021-03-12', seed: 3 },
            { weeklyDays: 0, monthlyMonths: 2, quarterlyMonths: 0, leapsYears: 0 },
          ),
          'generated',
        );
        const store = await openStore(dir, { now: '2021-03-15T12:00:00-04:00', threads: 1 });
        for (const date of ['2021-03-08', '2021-03-09', '2021-03-10'])
          expect((await store.request(`/v1/options/chain/XYZ/?date=${date}`)).status).toBe(200);
        expect(openFilesUnder(dir).length).toBeGreaterThan(0);
        store.close();
        expect(openFilesUnder(dir)).toEqual([]);
        await expect(store.request('/v1/options/chain/XYZ/?date=2021-03-11')).rejects.toThrow(StoreError);
        expect(openFilesUnder(dir)).toEqual([]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
