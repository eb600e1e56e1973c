/**
 * A server beside routine ingests: it follows new commits between requests (in-flight requests finish on
 * their version, none fails while the store moves), a reader's lease keeps the files of its version
 * whatever the time since they left the manifest, and a removed file fails only the queries of its own
 * partition and is read again once put back.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/http/index.js';
import { openStore, type Store } from '../../src/library/store.js';
import { readManifest } from '../../src/store/manifest.js';
import { writeSyntheticBatch } from '../store/fixtures/synthetic.js';

const NOW = '2024-01-10T12:00:00-05:00';
const QUOTE = (underlying: string) =>
  `/v1/options/quotes/${underlying}250117C00400000/?date=2024-01-03&columns=bid`;

let dir: string;
let store: Store;
let server: RunningServer;
const grace = process.env['PITCHAIN_GARBAGE_GRACE_MS'];

beforeAll(async () => {
  // Without leases, the files a reader reads would go the moment they left the manifest.
  process.env['PITCHAIN_GARBAGE_GRACE_MS'] = '0';
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-follow-'));
  await writeSyntheticBatch(dir, 0, 3, 5, 'SPY');
  await writeSyntheticBatch(dir, 0, 3, 5, 'QQQ');
  store = await openStore(dir, { now: NOW, threads: 1, follow: true });
  server = await listen(store, { port: 0 });
}, 120_000);
afterAll(async () => {
  await server.close();
  store.close();
  await fs.rm(dir, { recursive: true, force: true });
  if (grace === undefined) delete process.env['PITCHAIN_GARBAGE_GRACE_MS'];
  else process.env['PITCHAIN_GARBAGE_GRACE_MS'] = grace;
});

async function bid(underlying = 'SPY'): Promise<{ status: number; bid?: number }> {
  const response = await fetch(`${server.url}${QUOTE(underlying)}`);
  const body = (await response.json()) as { bid?: number[] };
  return { status: response.status, ...(body.bid === undefined ? {} : { bid: body.bid[0]! }) };
}

async function freshAnswer(target: string): Promise<string> {
  const fresh = await openStore(dir, { now: NOW, threads: 1 });
  try {
    return (await fresh.request(target)).body;
  } finally {
    fresh.close();
  }
}

describe('a server following a store', () => {
  it('answers from a new commit on the next request, as a fresh reader of that version does', async () => {
    expect(await bid()).toEqual({ status: 200, bid: 14 });
    await writeSyntheticBatch(dir, 1, 3, 5, 'SPY');
    expect(await bid()).toEqual({ status: 200, bid: 15 });
    expect(await (await fetch(`${server.url}${QUOTE('SPY')}`)).text()).toBe(await freshAnswer(QUOTE('SPY')));
  });

  it('answers every request while a commit lands, each from one version or the next', async () => {
    let landed = false;
    const seen: { status: number; bid?: number }[] = [];
    const load = (async () => {
      while (!landed || seen.length < 100) seen.push(await bid());
    })();
    const loads = [
      load,
      ...Array.from({ length: 7 }, () =>
        (async () => {
          while (!landed) seen.push(await bid());
        })(),
      ),
    ];
    await writeSyntheticBatch(dir, 2, 3, 5, 'SPY');
    landed = true;
    await Promise.all(loads);
    expect(seen.filter((s) => s.status !== 200)).toEqual([]);
    expect(new Set(seen.map((s) => s.bid))).toEqual(new Set([15, 16]));
    expect(seen.at(-1)).toEqual({ status: 200, bid: 16 });
  });

  it('keeps the files of a version a live reader leases, and lets them go once it closes', async () => {
    const pinned = await openStore(dir, { now: NOW, threads: 1 });
    const version = (await readManifest(dir))!;
    const files = version.tables.option_quotes.map((f) => path.join(dir, f.path));
    await writeSyntheticBatch(dir, 3, 3, 5, 'SPY');
    await writeSyntheticBatch(dir, 4, 3, 5, 'SPY');
    for (const file of files) await expect(fs.access(file)).resolves.toBeUndefined();
    expect((await pinned.request(QUOTE('SPY'))).body).toBe('{"bid":[16]}');
    // The server has moved on: only the pinned reader still leases the files of its version.
    expect(await bid()).toEqual({ status: 200, bid: 18 });
    pinned.close();
    await writeSyntheticBatch(dir, 5, 3, 5, 'SPY');
    const replaced = files.filter((file) => !file.includes('underlying=QQQ'));
    for (const file of replaced) await expect(fs.access(file)).rejects.toThrow();
    expect(await bid()).toEqual({ status: 200, bid: 19 });
  });
});

describe('a removed file', () => {
  async function removed<T>(underlying: string, work: () => Promise<T>): Promise<T> {
    const manifest = (await readManifest(dir))!;
    const entry = manifest.tables.option_quotes.find((f) => f.partition['underlying'] === underlying)!;
    const file = path.join(dir, entry.path);
    await fs.rename(file, `${file}.away`);
    try {
      return await work();
    } finally {
      await fs.rename(`${file}.away`, file).catch(() => undefined);
    }
  }

  it('missing when a reader opens fails only the queries of its partition', async () => {
    await removed('QQQ', async () => {
      const reopened = await openStore(dir, { now: NOW, threads: 1, follow: true });
      try {
        expect((await reopened.request(QUOTE('SPY'))).body).toBe('{"bid":[19]}');
        expect((await reopened.request(QUOTE('QQQ'))).status).toBe(500);
      } finally {
        reopened.close();
      }
    });
  });

  // A query reads only its partition's files and checks them on use, so one removed under a running
  // reader fails that partition alone.
  it('removed under a running server fails only the queries of its partition', async () => {
    expect(await bid('SPY')).toEqual({ status: 200, bid: 19 });
    await removed('QQQ', async () => {
      expect(await bid('SPY')).toEqual({ status: 200, bid: 19 });
      expect((await bid('QQQ')).status).toBe(500);
    });
  });

  // A file found missing is checked again on the next use of its partition, so one put back is read.
  it('is read again once put back', async () => {
    const reopened = await removed('QQQ', async () => {
      const store = await openStore(dir, { now: NOW, threads: 1, follow: true });
      expect((await store.request(QUOTE('QQQ'))).status).toBe(500);
      return store;
    });
    try {
      expect((await reopened.request(QUOTE('QQQ'))).body).toBe('{"bid":[14]}');
    } finally {
      reopened.close();
    }
  });
});
