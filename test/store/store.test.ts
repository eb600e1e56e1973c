import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { readManifest } from '../../src/store/manifest.js';
import { StoreReader } from '../../src/store/store.js';
import { type SourceRecord, SPILL_DIR, WriteTransaction } from '../../src/store/writer.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { stageSyntheticQuotes, writeSyntheticBatch } from './fixtures/synthetic.js';

const dirs: string[] = [];
async function tempStore(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-store-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true });
});

const source = (batch: number): SourceRecord => ({
  source: `batch-${batch}.csv`,
  sha256: `hash-${batch}`,
  format: 'synthetic',
  rows: { option_quotes: 30 },
  rejected: 0,
});

async function ingest(dir: string, batch: number, sessions = 3, strikes = 10): Promise<string> {
  const tx = await WriteTransaction.begin(dir, { create: true });
  await stageSyntheticQuotes(tx.sql, { batch, sessions, strikes });
  return (await tx.commit([source(batch)])).dataVersion;
}

describe('store commit and read', () => {
  it('publishes staged rows as a new version that a reader sees whole, with derived contracts', async () => {
    const dir = await tempStore();
    const version = await ingest(dir, 0);
    const reader = await StoreReader.open(dir);
    try {
      expect(reader.dataVersion).toBe(version);
      expect(
        await reader.sql.all(
          'SELECT count(*) AS n, min(session_date) AS first, max(bid) AS bid FROM option_quotes',
        ),
      ).toEqual([{ n: 30, first: '2024-01-02', bid: 14.09 }]);
      expect(
        await reader.sql.all(
          `SELECT underlying, option_symbol, root, expiration, expiration_time, side, strike, settlement, monthly, weekly,
                  quarterly, nonstandard, first_traded FROM contracts ORDER BY option_symbol LIMIT 1`,
        ),
      ).toEqual([
        {
          underlying: 'SPY',
          option_symbol: 'SPY250117C00400000',
          root: 'SPY',
          expiration: '2025-01-17',
          expiration_time: Date.parse('2025-01-17T21:00:00Z') / 1000,
          side: 'call',
          strike: 400,
          settlement: 'PM',
          monthly: true,
          weekly: false,
          quarterly: false,
          nonstandard: false,
          first_traded: '2024-01-02',
        },
      ]);
      const files = reader.manifest.tables.option_quotes.map((f) => f.path);
      expect(files).toEqual([
        expect.stringMatching(/^tables\/option_quotes\/underlying=SPY\/year=2024\/[0-9a-f]{32}\.parquet$/),
      ]);
    } finally {
      reader.close();
    }
  });

  it('partitions stock bars by symbol, resolution and year and reads them back in canonical columns', async () => {
    const dir = await tempStore();
    const tx = await WriteTransaction.begin(dir, { create: true });
    await tx.sql.run(`
      INSERT INTO stock_bars BY NAME
      SELECT 'SPY' AS symbol, 'D' AS resolution, DATE '2019-12-31' + i AS session_date,
             (DATE '2019-12-31' + i)::TIMESTAMP::TIMESTAMPTZ AS t, 300 + i AS o, 301 + i AS h, 299 + i AS l,
             300.5 + i AS c, 1000 AS v, i + 1 AS _line
      FROM (SELECT CAST(i AS INTEGER) AS i FROM range(2) r(i))`);
    await tx.commit([source(9)]);
    const reader = await StoreReader.open(dir);
    try {
      expect(reader.manifest.tables.stock_bars.map((f) => f.partition)).toEqual([
        { symbol: 'SPY', resolution: 'D', year: '2019' },
        { symbol: 'SPY', resolution: 'D', year: '2020' },
      ]);
      expect(
        await reader.sql.all('SELECT symbol, resolution, session_date, c, v FROM stock_bars ORDER BY t'),
      ).toEqual([
        { symbol: 'SPY', resolution: 'D', session_date: '2019-12-31', c: 300.5, v: 1000 },
        { symbol: 'SPY', resolution: 'D', session_date: '2020-01-01', c: 301.5, v: 1000 },
      ]);
    } finally {
      reader.close();
    }
  });

  it('changes nothing when the same source is ingested again, and gives equal stores equal versions', async () => {
    const a = await tempStore();
    const b = await tempStore();
    const first = await ingest(a, 0);
    expect(await ingest(a, 0)).toBe(first);
    expect((await readManifest(a))!.provenance).toHaveLength(1);
    expect(await ingest(b, 0)).toBe(first);
  });

  it('lets a newer source replace the same keys and records both sources', async () => {
    const dir = await tempStore();
    const first = await ingest(dir, 0, 3, 10);
    const second = await ingest(dir, 1, 2, 10);
    expect(second).not.toBe(first);
    const reader = await StoreReader.open(dir);
    try {
      expect(
        await reader.sql.all(
          'SELECT session_date, count(*) AS n, min(bid) AS bid FROM option_quotes GROUP BY ALL ORDER BY ALL',
        ),
      ).toEqual([
        { session_date: '2024-01-02', n: 10, bid: 15 },
        { session_date: '2024-01-03', n: 10, bid: 15 },
        { session_date: '2024-01-04', n: 10, bid: 14 },
      ]);
      expect(reader.manifest.provenance.map((p) => p.source)).toEqual(['batch-0.csv', 'batch-1.csv']);
    } finally {
      reader.close();
    }
  });

  it('keeps the latest line of a key staged twice, and skips that check only for tables vouched unique', async () => {
    const commit = async (duplicate: boolean, uniqueKeys?: 'option_quotes'[]) => {
      const dir = await tempStore();
      const tx = await WriteTransaction.begin(dir, { create: true });
      await stageSyntheticQuotes(tx.sql, { batch: 0, sessions: 3, strikes: 10 });
      if (duplicate) {
        await tx.sql.run(`INSERT INTO option_quotes
          SELECT * REPLACE (bid + 100 AS bid, 1000 AS _line) FROM option_quotes ORDER BY _line LIMIT 1`);
      }
      const { dataVersion } = await tx.commit([source(0)], uniqueKeys === undefined ? {} : { uniqueKeys });
      const reader = await StoreReader.open(dir);
      try {
        const rows = await reader.sql.all('SELECT count(*) AS n, max(bid) AS bid FROM option_quotes');
        return { dataVersion, rows };
      } finally {
        reader.close();
      }
    };
    const plain = await commit(false);
    expect(await commit(false, ['option_quotes'])).toEqual(plain);
    expect(plain.rows).toEqual([{ n: 30, bid: 14.09 }]);
    const twice = await commit(true);
    expect(twice.rows).toEqual([{ n: 30, bid: expect.any(Number) }]);
    expect(twice.rows[0]!['bid']).toBeGreaterThan(100);
  });

  it('keeps a reader on its version while a writer commits, until it refreshes', async () => {
    const dir = await tempStore();
    const first = await ingest(dir, 0);
    const reader = await StoreReader.open(dir);
    try {
      const second = await ingest(dir, 1, 5, 10);
      expect(await reader.sql.value('SELECT count(*) FROM option_quotes')).toBe(30);
      expect(reader.dataVersion).toBe(first);
      expect(await reader.refresh()).toBe(true);
      expect(reader.dataVersion).toBe(second);
      expect(await reader.sql.value('SELECT count(*) FROM option_quotes')).toBe(50);
    } finally {
      reader.close();
    }
  });

  it('admits one writer at a time and refuses to open what is not a store', async () => {
    const dir = await tempStore();
    const tx = await WriteTransaction.begin(dir, { create: true });
    try {
      await expect(WriteTransaction.begin(dir)).rejects.toThrow(/another process \(pid \d+\) is writing/);
    } finally {
      await tx.abort();
    }
    await expect(StoreReader.open(dir)).rejects.toBeInstanceOf(StoreError);
    await expect(WriteTransaction.begin(path.join(dir, 'missing'))).rejects.toThrow(/does not exist/);
  });
});

describe('staging beyond its memory limit', () => {
  const stage = async (dir: string, options: { memoryLimit?: string } = {}) => {
    const tx = await WriteTransaction.begin(dir, { create: true, ...options });
    // DuckDB needs some memory per thread: two keep the limit below enough on any machine.
    await tx.sql.run('SET threads = 2');
    // 500,000 rows, well over 80 MB staged.
    await stageSyntheticQuotes(tx.sql, { batch: 0, sessions: 250, strikes: 2000 });
    return tx;
  };

  it('spills into the store, not the working directory, removes the spill when done, and writes the same data', async () => {
    const dir = await tempStore();
    const tx = await stage(dir, { memoryLimit: '80MB' });
    const spilled = await tx.sql.all<{ path: string }>('SELECT path FROM duckdb_temporary_files()');
    expect(spilled.length).toBeGreaterThan(0);
    for (const { path: file } of spilled)
      expect(file.startsWith(path.join(dir, SPILL_DIR) + path.sep)).toBe(true);
    await tx.commit([source(0)]);
    expect(await fs.readdir(dir)).not.toContain(SPILL_DIR);
    const other = await tempStore();
    const unlimited = await stage(other);
    await unlimited.commit([source(0)]);
    // The same rows. The files' bytes may differ: under its memory limit DuckDB may
    // write the last rows as one row group where it otherwise writes two.
    const rows = async (store: string) => {
      const reader = await StoreReader.open(store);
      try {
        return await reader.sql.all('SELECT count(*) AS n, sum(hash(q)) AS digest FROM option_quotes q');
      } finally {
        reader.close();
      }
    };
    expect(await rows(dir)).toEqual(await rows(other));
  }, 60_000);

  it('spills what a reader cannot hold under the system temporary directory, and removes it on close', async () => {
    const dir = await tempStore();
    await ingest(dir, 0);
    const reader = await StoreReader.open(dir, { memoryLimit: '64MB', threads: 2 });
    let spill: string;
    try {
      await reader.sql.run(
        `CREATE TEMP TABLE big AS SELECT i, repeat('x', 40) || i AS s FROM range(2000000) t(i)`,
      );
      const spilled = await reader.sql.all<{ path: string }>('SELECT path FROM duckdb_temporary_files()');
      expect(spilled.length).toBeGreaterThan(0);
      spill = path.dirname(spilled[0]!.path);
      expect(path.dirname(spill)).toBe(os.tmpdir());
      expect(path.basename(spill)).toMatch(new RegExp(`^pitchain-reader-${process.pid}-`));
    } finally {
      reader.close();
    }
    await expect(fs.access(spill)).rejects.toThrow();
  });

  it('removes what a writer killed with -9 spilled when the next writer begins', async () => {
    const dir = await tempStore();
    await fs.mkdir(path.join(dir, SPILL_DIR));
    await fs.writeFile(path.join(dir, SPILL_DIR, 'duckdb_temp_storage_DEFAULT-0.tmp'), 'left behind');
    const tx = await WriteTransaction.begin(dir, { create: true });
    try {
      expect(await fs.readdir(dir)).not.toContain(SPILL_DIR);
    } finally {
      await tx.abort();
    }
  });
});

const WRITE_CHILD = path.join(REPO_ROOT, 'test/store/fixtures/write-child.ts');
const READ_CHILD = path.join(REPO_ROOT, 'test/store/fixtures/read-child.ts');

type ChildResult = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

function runChild(
  script: string,
  args: readonly string[],
  options: { env?: Record<string, string>; killAfterBegunMs?: number } = {},
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    // In-process loader (not the tsx wrapper binary), so that a kill reaches the process doing the work.
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        ...options.env,
        ...(options.killAfterBegunMs === undefined ? {} : { WRITE_CHILD_MARKERS: '1' }),
      },
    });
    let stdout = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      // The delay counts from the moment the writer holds the lock, not from the spawn: how long a
      // loaded machine takes to start Node then changes nothing of what is being tested.
      const delay = options.killAfterBegunMs;
      if (delay !== undefined && timer === undefined && stderr.includes('begun\n')) {
        timer = setTimeout(() => child.kill('SIGKILL'), delay);
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer !== undefined) clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe('crash safety with a real writer process', () => {
  const SIZE = [120, 150] as const;
  const args = (dir: string, batch: number) => [dir, String(batch), ...SIZE.map(String)];

  /**
   * The versions before and after batch 1, written in this process, and a copy of the store before it:
   * the crashed children then start from a copy instead of a write of their own.
   */
  async function reference(): Promise<{ base: string; expected: string; copy: () => Promise<string> }> {
    const dir = await tempStore();
    const base = await writeSyntheticBatch(dir, 0, ...SIZE);
    const pristine = await tempStore();
    await fs.cp(dir, pristine, { recursive: true });
    const expected = await writeSyntheticBatch(dir, 1, ...SIZE);
    const copy = async () => {
      const target = await tempStore();
      await fs.cp(pristine, target, { recursive: true });
      return target;
    };
    return { base, expected, copy };
  }

  /** Whether the store opens and reads as one whole version, the one its manifest names. */
  async function readsWhole(dir: string): Promise<void> {
    const reader = await StoreReader.open(dir);
    try {
      const listed = reader.manifest.tables.option_quotes.reduce((n, f) => n + f.rows, 0);
      expect(await reader.sql.value('SELECT count(*) FROM option_quotes')).toBe(listed);
    } finally {
      reader.close();
    }
  }

  it('leaves the previous version after kill -9 at every commit step, and a re-run matches an uninterrupted one', async () => {
    const { base, expected, copy } = await reference();
    for (const point of ['staged', 'file-written', 'manifest-written', 'committed']) {
      const dir = await copy();
      const crashed = await runChild(WRITE_CHILD, args(dir, 1), { env: { PITCHAIN_CRASH_AT: point } });
      expect(crashed.signal, point).toBe('SIGKILL');
      const after = (await readManifest(dir))!.dataVersion;
      expect(after, point).toBe(point === 'committed' ? expected : base);
      await readsWhole(dir);
      const rerun = await runChild(WRITE_CHILD, args(dir, 1));
      expect(rerun.stderr, point).toBe('');
      expect(rerun.stdout.trim(), point).toBe(expected);
    }
  }, 180_000);

  it('survives kill -9 at arbitrary moments', async () => {
    const { base, expected, copy } = await reference();
    const dir = await copy();
    // Moments after the writer took the lock: staging, the commit's files, the manifest, or done.
    for (const delay of [0, 50, 150, 300, 600, 1200]) {
      await runChild(WRITE_CHILD, args(dir, 1), { killAfterBegunMs: delay });
      expect([base, expected]).toContain((await readManifest(dir))!.dataVersion);
      await readsWhole(dir);
    }
    const rerun = await runChild(WRITE_CHILD, args(dir, 1));
    expect(rerun.stderr).toBe('');
    expect(rerun.stdout.trim()).toBe(expected);
  }, 180_000);
});

/**
 * Five writer processes one after another and two readers beside them, each starting Node and DuckDB: 17 s
 * on an idle 2-core machine, 55 s and once past 60 s while two suites ran on it at once.
 */
const CONCURRENCY_TIMEOUT_MS = 240_000;

describe('concurrency with real processes', { timeout: CONCURRENCY_TIMEOUT_MS }, () => {
  it('lets readers query while a writer ingests; each read sees one whole version', async () => {
    const dir = await tempStore();
    await runChild(WRITE_CHILD, [dir, '0', '60', '100']);
    // The readers read until the writes are done, which a file beside the store says.
    const stop = `${dir}.writes-done`;
    const readers = [runChild(READ_CHILD, [dir, stop]), runChild(READ_CHILD, [dir, stop])];
    try {
      for (const batch of [1, 2, 3, 4]) {
        const result = await runChild(WRITE_CHILD, [dir, String(batch), '60', '100']);
        expect(result.stderr).toBe('');
      }
    } finally {
      await fs.writeFile(stop, '');
    }
    const results = await Promise.all(readers);
    await fs.rm(stop, { force: true });
    const versions = new Set<string>();
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const lines = result.stdout.trim().split('\n');
      expect(lines.length).toBeGreaterThan(2);
      for (const line of lines) {
        expect(line).toMatch(/^ok [0-9a-f]{16} 6000 [0-4]$/);
        versions.add(line.split(' ')[1]!);
      }
    }
    expect(versions.size).toBeGreaterThan(1);
  });
});
