import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parquetOptions } from '../../src/store/parquet.js';
import type { TableName } from '../../src/store/schema.js';
import { quoteLiteral, SqlSession } from '../../src/store/sql.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pitchain-parquet-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The row counts of the row groups DuckDB writes for 20,000 rows with a table's writer options. */
async function rowGroups(sql: SqlSession, table: TableName): Promise<number[]> {
  const file = path.join(dir, `${table}.parquet`);
  await sql.run(
    `COPY (SELECT range AS x FROM range(20000)) TO ${quoteLiteral(file)} (${parquetOptions(table)})`,
  );
  const rows = await sql.all<{ n: number }>(
    `SELECT CAST(row_group_num_rows AS DOUBLE) AS n FROM parquet_metadata(${quoteLiteral(file)})
     ORDER BY row_group_id`,
  );
  return rows.map((row) => row.n);
}

describe('parquetOptions', () => {
  it('writes the tables read a session at a time in row groups of at most 8,192 rows', async () => {
    const sql = await SqlSession.open({ threads: 1 });
    try {
      // A session's rows are contiguous: a one-session read decodes only the small groups they lie in
      // (a chain's quotes and open interest, a quote's minute bars of its session so far).
      for (const table of ['option_quotes', 'open_interest', 'stock_bars'] as const) {
        const groups = await rowGroups(sql, table);
        expect([table, Math.max(...groups), groups.reduce((a, b) => a + b, 0)]).toEqual([table, 8192, 20000]);
      }
      // The tables read whole (an underlying's contract terms, every split) keep the large groups.
      for (const table of ['contracts', 'splits'] as const) {
        expect([table, await rowGroups(sql, table)]).toEqual([table, [20000]]);
      }
    } finally {
      sql.close();
    }
  });
});
