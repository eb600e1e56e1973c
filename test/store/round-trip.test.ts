/** Every table `pitchain export` writes ingests back with `--format parquet` to the same rows. */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteIdentifier } from '../../src/store/sql.js';
import { StoreReader } from '../../src/store/store.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { pitchain } from './fixtures/children.js';

const SAMPLE = path.join(REPO_ROOT, 'data/sample');

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-round-trip-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** A slice of each table of the sample, small enough to move quickly. */
const SLICES: Record<string, string[]> = {
  option_quotes: ['--underlying', 'SPY', '--from', '2020-03-02', '--to', '2020-03-03'],
  open_interest: ['--underlying', 'SPY', '--from', '2020-03-02', '--to', '2020-03-06'],
  contracts: ['--underlying', 'AAPL', '--from', '2020-03-01', '--to', '2020-03-31'],
  stock_bars: ['--symbol', 'AAPL', '--from', '2020-08-27', '--to', '2020-09-01'],
  splits: [],
};

describe('pitchain export, then ingest --format parquet', () => {
  it('gives back the same rows for every table', async () => {
    const results = await Promise.all(
      Object.entries(SLICES).map(async ([table, slice]) => {
        const exported = path.join(dir, `${table}.parquet`);
        const store = path.join(dir, `store-${table}`);
        const out = await pitchain('export', '--store', SAMPLE, '--table', table, ...slice, exported);
        const ingested = await pitchain('ingest', '--store', store, '--format', 'parquet', exported);
        return { table, exported, store, out, ingested };
      }),
    );
    for (const { table, exported, store, out, ingested } of results) {
      for (const run of [out, ingested]) expect([table, run.code, run.stderr]).toEqual([table, 0, '']);
      const reader = await StoreReader.open(store, { threads: 1 });
      try {
        const rows = await reader.sql.value<number>('SELECT count(*) FROM read_parquet($file)', {
          file: exported,
        });
        expect([table, rows > 0]).toEqual([table, true]);
        // Each command says how many rows it moved: the export its total, the ingest one line per table.
        expect([table, /^(\d+) rows/.exec(out.stdout)?.[1]]).toEqual([table, String(rows)]);
        expect(ingested.stdout).toMatch(new RegExp(`^${table} +${rows}$`, 'm'));
        // The new store holds the slice and nothing else: the table and the file agree row for row.
        const differ = await reader.sql.value<number>(
          `SELECT count(*) FROM (
             (SELECT * FROM read_parquet($file) EXCEPT ALL SELECT * FROM ${quoteIdentifier(table)})
             UNION ALL (SELECT * FROM ${quoteIdentifier(table)} EXCEPT ALL SELECT * FROM read_parquet($file)))`,
          { file: exported },
        );
        expect([table, differ]).toEqual([table, 0]);
      } finally {
        reader.close();
      }
    }
  }, 120_000);
});
