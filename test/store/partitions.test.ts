/**
 * Queries name only the files of the partitions they read: a missing file fails only its own partition's
 * chains and is read again once put back; `refresh()` never leaves a moment without a view; a store whose
 * manifest does not record each file's sessions (written before it did) answers the same.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/library/store.js';
import { readManifest, writeManifest } from '../../src/store/manifest.js';
import { StoreReader } from '../../src/store/store.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { copySampleStore, REPO_ROOT } from '../helpers/paths.js';
import { stageSyntheticQuotes } from './fixtures/synthetic.js';

const SAMPLE = path.join(REPO_ROOT, 'data', 'sample');
const NOW = '2021-06-01T12:00:00-04:00';
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true });
});

async function sampleCopy(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-partitions-'));
  dirs.push(dir);
  await copySampleStore(dir);
  return dir;
}

const chain = (symbol: string, date: string) => `/v1/options/chain/${symbol}/?date=${date}&expiration=all`;

describe('queries over the files of their partitions', () => {
  it('fail only the partition whose file is missing, and read the file again once it is put back', async () => {
    const dir = await sampleCopy();
    const manifest = (await readManifest(dir))!;
    const file = manifest.tables.option_quotes.find(
      (f) => f.partition['underlying'] === 'SPX' && f.partition['year'] === '2019',
    )!;
    const original = await openStore(SAMPLE, { now: NOW });
    const store = await openStore(dir, { now: NOW });
    try {
      const asked = [chain('SPY', '2019-06-14'), chain('SPX', '2020-06-12'), chain('SPXW', '2019-06-14')];
      const expected = await Promise.all(asked.map((p) => original.request(p)));
      expect(expected.map((r) => r.status)).toEqual([200, 200, 200]);
      await fs.rename(path.join(dir, file.path), path.join(dir, `${file.path}.away`));
      // Other underlyings, and SPX's other year, answer as before; SPX in 2019 fails.
      expect((await store.request(asked[0]!)).body).toBe(expected[0]!.body);
      expect((await store.request(asked[1]!)).body).toBe(expected[1]!.body);
      const failed = await store.request(asked[2]!);
      expect(failed.status).toBeGreaterThanOrEqual(500);
      // Put back: the same store reads it again, without reopening.
      await fs.rename(path.join(dir, `${file.path}.away`), path.join(dir, file.path));
      expect((await store.request(asked[2]!)).body).toBe(expected[2]!.body);
    } finally {
      store.close();
      original.close();
    }
  });

  it('answer the same from a store whose manifest does not record the sessions of its files', async () => {
    const dir = await sampleCopy();
    const manifest = (await readManifest(dir))!;
    for (const files of Object.values(manifest.tables)) for (const file of files) delete file.sessions;
    await writeManifest(dir, manifest);
    const original = await openStore(SAMPLE, { now: NOW });
    const store = await openStore(dir, { now: NOW });
    try {
      expect(store.dataVersion).toBe(original.dataVersion);
      for (const asked of [
        chain('SPY', '2019-12-31'),
        chain('AAPL', '2020-01-02'),
        '/v1/options/chain/SPY/?date=2020-03-16&dte=30',
        '/v1/options/quotes/SPY200417P00240000/?from=2020-03-02&to=2020-03-20',
      ]) {
        const ours = await store.request(asked);
        expect(ours.status, asked).toBe(200);
        expect(ours.body, asked).toBe((await original.request(asked)).body);
      }
    } finally {
      store.close();
      original.close();
    }
  });
});

describe('views made on first use', () => {
  it('let statements that ask for a view at once all wait for it to be made', async () => {
    // The second statement found the view on its way and ran before it was made: "Table with name splits
    // does not exist" (a server's first two requests reading the splits at once).
    // Which statement DuckDB takes first is a race: many readers, each asked by many statements at once.
    for (let attempt = 0; attempt < 20; attempt++) {
      const reader = await StoreReader.open(SAMPLE);
      try {
        const counts = await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            reader.sql.value(i % 2 === 0 ? 'SELECT count(*) FROM splits' : 'SELECT count(*) FROM stock_bars'),
          ),
        );
        expect(new Set(counts.filter((_, i) => i % 2 === 0).map(Number)).size).toBe(1);
      } finally {
        reader.close();
      }
    }
  });
});

describe('refresh', () => {
  it('never leaves a moment where a table is missing for the queries running beside it', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-refresh-'));
    dirs.push(dir);
    const ingest = async (batch: number) => {
      const tx = await WriteTransaction.begin(dir, { create: true });
      await stageSyntheticQuotes(tx.sql, { batch, sessions: 3, strikes: 10, underlying: 'SPY' });
      await tx.commit([
        { source: `b${batch}`, sha256: `b${batch}`, format: 'synthetic', rows: {}, rejected: 0 },
      ]);
    };
    await ingest(0);
    const reader = await StoreReader.open(dir);
    try {
      for (let batch = 1; batch <= 3; batch++) {
        await ingest(batch);
        let refreshing = true;
        const refreshed = reader.refresh().finally(() => {
          refreshing = false;
        });
        const counts: number[] = [];
        // Queries issued while the refresh is under way run between its statements.
        while (refreshing) {
          counts.push(
            Number(await reader.sql.value('SELECT count(*) FROM option_quotes')),
            Number(await reader.sql.value('SELECT count(*) FROM contracts')),
          );
        }
        expect(await refreshed).toBe(true);
        expect(counts.length).toBeGreaterThan(0);
        expect(counts.every((n) => n > 0)).toBe(true);
      }
    } finally {
      reader.close();
    }
  });
});

describe('a partition after refresh', () => {
  it('is read from the files of the manifest refreshed to, not of the one its files were first found in', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-refresh-partition-'));
    dirs.push(dir);
    const ingest = async (batch: number, underlying: string, sessions: number) => {
      const tx = await WriteTransaction.begin(dir, { create: true });
      await stageSyntheticQuotes(tx.sql, { batch, sessions, strikes: 10, underlying });
      await tx.commit([
        { source: `b${batch}`, sha256: `b${batch}`, format: 'synthetic', rows: {}, rejected: 0 },
      ]);
    };
    await ingest(0, 'SPY', 3);
    const reader = await StoreReader.open(dir);
    try {
      const count = async (underlying: string) =>
        Number(
          await reader.sql.value(
            `SELECT count(*) FROM ${await reader.partitionSql('option_quotes', { underlying })}`,
          ),
        );
      const before = await count('SPY');
      expect(before).toBeGreaterThan(0);
      expect(await count('QQQ')).toBe(0);
      // Two more sessions of SPY, and a new underlying.
      await ingest(1, 'SPY', 5);
      await ingest(2, 'QQQ', 3);
      expect(await reader.refresh()).toBe(true);
      expect(await count('SPY')).toBe((before / 3) * 5);
      expect(await count('QQQ')).toBeGreaterThan(0);
      expect(reader.extent('option_quotes', { underlying: 'QQQ' })?.rows).toBe(await count('QQQ'));
    } finally {
      reader.close();
    }
  });
});

describe('a large partition', () => {
  it('is kept as files of consecutive sessions, each read alone by a query of its sessions', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-chunks-'));
    dirs.push(dir);
    const ingest = async (batch: number) => {
      const tx = await WriteTransaction.begin(dir, { create: true });
      // 250 sessions of 1,100 strikes: 275,000 rows, past the rows of one file.
      await stageSyntheticQuotes(tx.sql, { batch, sessions: 250, strikes: 1_100 });
      await tx.commit([
        { source: `b${batch}`, sha256: `b${batch}`, format: 'synthetic', rows: {}, rejected: 0 },
      ]);
    };
    await ingest(0);
    await ingest(1); // replaces every key: the files are merged and cut again
    const files = (await readManifest(dir))!.tables.option_quotes;
    expect(files.length).toBe(2);
    expect(files.reduce((n, f) => n + f.rows, 0)).toBe(275_000);
    const [a, b] = [...files].sort((x, y) => (x.sessions!.first < y.sessions!.first ? -1 : 1));
    expect(a!.sessions!.last < b!.sessions!.first).toBe(true);
    const reader = await StoreReader.open(dir);
    try {
      const session = b!.sessions!.first;
      const source = await reader.partitionSql(
        'option_quotes',
        { underlying: 'SPY' },
        { first: session, last: session },
      );
      expect(source).toContain(b!.path);
      expect(source).not.toContain(a!.path);
      const sessionRows = `SELECT count(*) AS n, min(bid) AS bid FROM ${source} WHERE session_date = CAST($s AS DATE)`;
      expect(await reader.sql.all(sessionRows, { s: session })).toEqual([{ n: 1_100, bid: 15 }]);
      expect(
        await reader.sql.all('SELECT count(*) AS n, count(DISTINCT session_date) AS d FROM option_quotes'),
      ).toEqual([{ n: 275_000, d: 250 }]);
    } finally {
      reader.close();
    }
  }, 120_000);
});
