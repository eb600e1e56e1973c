/**
 * The writer in bounded memory: its staging database runs under DEFAULT_WRITER_MEMORY unless given a
 * limit, staged rows past it spill to the store's `.spill/` (removed when the write ends), a commit under
 * a limit publishes one version, and the session a contract known only from open interest was first
 * traded is the market's (New York's) date of its publication, not UTC's.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readManifest } from '../../src/store/manifest.js';
import { readParquetSql } from '../../src/store/parquet.js';
import { SqlSession } from '../../src/store/sql.js';
import { DEFAULT_WRITER_MEMORY, SPILL_DIR, WriteTransaction } from '../../src/store/writer.js';
import { stageSyntheticQuotes } from './fixtures/synthetic.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true });
});

async function tempStore(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-writer-memory-'));
  dirs.push(dir);
  return path.join(dir, 'store');
}

/** DuckDB's spelling of a memory limit (`1.8 GiB`, `122.0 MiB`) in bytes, to the rounding it is shown with. */
function bytesOf(setting: string): number {
  const [, amount, unit] = /^([\d.]+) (\w+)$/.exec(setting) ?? [];
  const scale: Record<string, number> = { KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40 };
  return Number(amount) * (scale[unit ?? ''] ?? Number.NaN);
}

async function rowsOf(dir: string, table: 'option_quotes' | 'contracts'): Promise<number> {
  const manifest = (await readManifest(dir))!;
  return manifest.tables[table].reduce((n, f) => n + f.rows, 0);
}

/** Stages `sessions` consecutive days from 2016-01-04 of `contracts` SPY calls each. */
async function stageRows(tx: WriteTransaction, sessions: number, contracts: number): Promise<void> {
  await tx.sql.run(`
    INSERT INTO option_quotes BY NAME
    SELECT 'SPY' AS underlying,
           'SPY300118C' || lpad(CAST((100 + k) * 1000 AS VARCHAR), 8, '0') AS option_symbol,
           DATE '2016-01-04' + CAST(d AS INTEGER) AS session_date,
           (DATE '2016-01-04' + CAST(d AS INTEGER))::TIMESTAMP::TIMESTAMPTZ + INTERVAL 21 HOUR AS quote_time,
           CAST(k % 97 AS DECIMAL(12,2)) AS bid, CAST(k % 97 + 1 AS DECIMAL(12,2)) AS ask,
           CAST(k AS BIGINT) AS volume, 470.5 AS underlying_price
    FROM range(${sessions}) s(d), range(${contracts}) c(k)`);
}

describe('the writer in bounded memory', () => {
  it('runs its staging database under DEFAULT_WRITER_MEMORY, or the limit it is given', async () => {
    const store = await tempStore();
    for (const [given, expected] of [
      [undefined, DEFAULT_WRITER_MEMORY],
      ['256MB', '256MB'],
    ] as const) {
      const tx = await WriteTransaction.begin(
        store,
        given === undefined ? { create: true } : { create: true, memoryLimit: given },
      );
      try {
        const setting = String(await tx.sql.value("SELECT current_setting('memory_limit')"));
        // DuckDB keeps a limit in binary units: 2GB is 1.8 GiB.
        const bytes = Number.parseInt(expected, 10) * (expected.endsWith('GB') ? 1e9 : 1e6);
        expect(Math.abs(bytesOf(setting) - bytes) / bytes).toBeLessThan(0.05);
      } finally {
        await tx.abort();
      }
    }
  });

  it('spills staged rows past its memory limit to the store, and removes the spill when it ends', async () => {
    const store = await tempStore();
    const tx = await WriteTransaction.begin(store, { create: true, memoryLimit: '128MB' });
    try {
      await stageRows(tx, 2000, 1000); // more staged rows than 128 MB hold
      expect((await fs.readdir(path.join(store, SPILL_DIR))).length).toBeGreaterThan(0);
      const used = Number(await tx.sql.value('SELECT sum(memory_usage_bytes) FROM duckdb_memory()'));
      expect(used).toBeLessThanOrEqual(128e6);
    } finally {
      await tx.abort();
    }
    await expect(fs.access(path.join(store, SPILL_DIR))).rejects.toThrow();
  });

  it('commits what it staged under a memory limit as one version', async () => {
    const store = await tempStore();
    const tx = await WriteTransaction.begin(store, { create: true, memoryLimit: '256MB' });
    await stageRows(tx, 500, 1000);
    const result = await tx.commit([], { uniqueKeys: ['option_quotes'] });
    expect(result.changed).toBe(true);
    expect(result.rows.option_quotes).toBe(500_000);
    expect(await rowsOf(store, 'option_quotes')).toBe(500_000);
    expect(await rowsOf(store, 'contracts')).toBe(1_000);
    await expect(fs.access(path.join(store, SPILL_DIR))).rejects.toThrow();
  });

  it("dates a contract known only from open interest by the market's date of its publication", async () => {
    const store = await tempStore();
    const tx = await WriteTransaction.begin(store, { create: true });
    // Published 2024-03-05 02:30 UTC: still 2024-03-04 in New York, already the 5th in UTC.
    await tx.sql.run(`
      INSERT INTO open_interest BY NAME
      SELECT 'SPY' AS underlying, 'SPY240419C00500000' AS option_symbol, DATE '2024-03-01' AS settled_session,
             TIMESTAMPTZ '2024-03-05 02:30:00+00' AS published_at, 10 AS open_interest`);
    await tx.commit([]);
    const manifest = (await readManifest(store))!;
    const files = manifest.tables.contracts.map((f) => path.join(store, f.path));
    const sql = await SqlSession.open();
    try {
      const first = await sql.value(
        `SELECT CAST(first_traded AS VARCHAR) FROM ${readParquetSql(files, ['underlying'])}`,
      );
      expect(first).toBe('2024-03-04');
    } finally {
      sql.close();
    }
  });

  it('cuts a new large partition from the staged rows into the same files as a merge cuts', async () => {
    const ingest = async (dir: string, batch: number) => {
      const tx = await WriteTransaction.begin(dir, { create: true });
      // 250 sessions of 1,100 strikes: 275,000 rows, past the rows of one file.
      await stageSyntheticQuotes(tx.sql, { batch, sessions: 250, strikes: 1_100 });
      await tx.commit([
        { source: `b${batch}`, sha256: `b${batch}`, format: 'synthetic', rows: {}, rejected: 0 },
      ]);
    };
    const merged = await tempStore();
    await ingest(merged, 0);
    await ingest(merged, 1); // replaces every key: written whole with the old rows, then cut
    const fresh = await tempStore();
    await ingest(fresh, 1); // nothing to merge: cut from the staged rows
    const files = async (dir: string) =>
      (await readManifest(dir))!.tables.option_quotes.map((f) => [f.path, f.rows, f.sessions]);
    const written = await files(fresh);
    expect(written.length).toBe(2);
    expect(written).toEqual(await files(merged));
  }, 120_000);
});
