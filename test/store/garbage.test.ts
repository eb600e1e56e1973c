/**
 * Garbage collection of replaced files: a file is kept for the grace period after it left the manifest,
 * however long ago it was written, so that a reader that has not refreshed can still read it.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { contractColumnsPath } from '../../src/store/contract-columns.js';
import { GARBAGE_GRACE_MS } from '../../src/store/garbage.js';
import { readManifest } from '../../src/store/manifest.js';
import { sessionColumnsPath } from '../../src/store/session-columns.js';
import { StoreReader } from '../../src/store/store.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { pinTimeZone } from '../helpers/time-zone.js';
import { stageSyntheticQuotes } from './fixtures/synthetic.js';

const T0 = Date.parse('2026-03-02T15:00:00Z');
pinTimeZone('America/New_York');
beforeAll(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
});
afterAll(() => {
  vi.useRealTimers();
});

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true });
});

async function ingest(dir: string, batch: number): Promise<void> {
  const tx = await WriteTransaction.begin(dir, { create: true });
  await stageSyntheticQuotes(tx.sql, { batch, sessions: 3, strikes: 10 });
  await tx.commit([{ source: `b${batch}`, sha256: `h${batch}`, format: 'synthetic', rows: {}, rejected: 0 }]);
}

describe('garbage collection', () => {
  it('keeps a replaced file for the grace period after it left the manifest, not after it was written', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-garbage-'));
    dirs.push(dir);
    await ingest(dir, 0);
    const [first] = (await readManifest(dir))!.tables.option_quotes;
    const file = path.join(dir, first!.path);
    // Its session column file lives and goes with it, and is never listed itself.
    const sessions = sessionColumnsPath(file);
    await expect(fs.access(sessions)).resolves.toBeUndefined();
    // Written an hour before it is replaced: its age says nothing about who still reads it.
    const hourAgo = new Date(T0 - 3_600_000);
    await fs.utimes(file, hourAgo, hourAgo);
    const reader = await StoreReader.open(dir);
    try {
      await ingest(dir, 1);
      await ingest(dir, 2);
      expect(await reader.sql.value('SELECT count(*) FROM option_quotes')).toBe(30);
      expect((await readManifest(dir))!.retired).toContainEqual({
        path: first!.path,
        retiredAt: new Date(T0).toISOString(),
      });

      vi.setSystemTime(T0 + GARBAGE_GRACE_MS);
      await ingest(dir, 3);
      await expect(fs.access(file)).resolves.toBeUndefined();
      await expect(fs.access(sessions)).resolves.toBeUndefined();

      vi.setSystemTime(T0 + GARBAGE_GRACE_MS + 1_000);
      await ingest(dir, 4);
      await expect(fs.access(file)).rejects.toThrow();
      await expect(fs.access(sessions)).rejects.toThrow();
      const retired = (await readManifest(dir))!.retired ?? [];
      expect(retired.map((r) => r.path)).not.toContain(first!.path);
      // Each later file is listed once, from the commit that replaced it.
      expect(new Set(retired.map((r) => r.path)).size).toBe(retired.length);
    } finally {
      reader.close();
    }
  });

  it("removes a contract column file with its Parquet file, and keeps a live one's", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-garbage-'));
    dirs.push(dir);
    await ingest(dir, 0);
    const [live] = (await readManifest(dir))!.tables.contracts;
    const kept = contractColumnsPath(path.join(dir, live!.path));
    await expect(fs.access(kept)).resolves.toBeUndefined();
    // One whose Parquet file no manifest lists (a crashed writer's), written long before the grace.
    const orphan = path.join(path.dirname(kept), `${'0'.repeat(32)}.contracts`);
    await fs.writeFile(orphan, 'left behind');
    const longAgo = new Date(T0 - 2 * GARBAGE_GRACE_MS);
    await fs.utimes(orphan, longAgo, longAgo);
    await fs.utimes(kept, longAgo, longAgo);
    await ingest(dir, 1);
    await expect(fs.access(orphan)).rejects.toThrow();
    await expect(fs.access(kept)).resolves.toBeUndefined();
  });
});
