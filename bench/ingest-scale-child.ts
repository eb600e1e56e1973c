/**
 * One side of the ingest-scale benchmark, in a process of its own so that its peak RSS (the kernel's
 * high-water mark, VmHWM) is its own: pitchain staging the generated option rows and committing them as
 * one version, or DuckDB alone writing the same rows in the store's layout (same sort, row groups,
 * Parquet options and partitions). Both sides get the same memory limit and spill inside their target.
 *
 * Job (IPC message): `{ side: 'pitchain' | 'duckdb', rows, dir, memoryLimit }`;
 * answer: `{ rows, wallMs, peakMb }` or `{ error }`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSessionsTable, SESSIONS_TABLE } from '../src/ingest/calendar-table.js';
import { fileColumns, PARTITION_EXPRESSIONS } from '../src/store/layout.js';
import { parquetOptions } from '../src/store/parquet.js';
import { TABLE_SORT } from '../src/store/schema.js';
import {
  quoteIdentifier as q,
  quoteLiteral,
  SqlSession as Session,
  type SqlSession,
} from '../src/store/sql.js';
import { WriteTransaction } from '../src/store/writer.js';

export type ScaleJob = {
  side: 'pitchain' | 'duckdb';
  rows: number;
  dir: string;
  memoryLimit: string;
};

export type ScaleAnswer = { rows: number; wallMs: number; peakMb: number } | { error: string };

const UNDERLYINGS = ['SPY', 'QQQ', 'IWM', 'AAPL'];
const FIRST_SESSION = '2016-01-04';
const LAST_SESSION = '2023-12-29';

/**
 * A SELECT of `rows` end-of-day option quotes in the canonical columns: every session of 2016-2023 for
 * four underlyings, the same number of contracts each (ten weekly expirations, calls and puts, strikes a
 * dollar apart), prices and Greeks from the row's numbers. Needs the sessions table.
 */
export async function generatedRowsSql(sql: SqlSession, rows: number): Promise<string> {
  await createSessionsTable(sql);
  const sessions = Number(
    await sql.value(
      `SELECT count(*) FROM ${q(SESSIONS_TABLE)} WHERE session_date BETWEEN DATE '${FIRST_SESSION}' AND DATE '${LAST_SESSION}'`,
    ),
  );
  const perSession = Math.ceil(rows / (sessions * UNDERLYINGS.length));
  const underlyings = UNDERLYINGS.map((u, i) => `(${quoteLiteral(u)}, ${i})`).join(', ');
  // Expirations are Fridays on a weekly grid shared by every session, so that contracts repeat from one
  // session to the next, as listed contracts do.
  const expiration = `(DATE '2016-01-08' + CAST(7 * ((s.session_date - DATE '2016-01-08') // 7 + 1 + (k.range // 2) % 10) AS INTEGER))`;
  const strike = `(50 + k.range // 20 + 10 * u.i)`;
  return `
    SELECT u.underlying,
           u.underlying || strftime(${expiration}, '%y%m%d') || CASE k.range % 2 WHEN 0 THEN 'C' ELSE 'P' END
             || lpad(CAST(${strike} * 1000 AS VARCHAR), 8, '0') AS option_symbol,
           s.session_date, s.eod_at AS quote_time,
           CAST(1 + (hash(k.range, s.session_date) % 1000) / 100 AS DECIMAL(12,2)) AS bid,
           CAST(1.05 + (hash(k.range, s.session_date) % 1000) / 100 AS DECIMAL(12,2)) AS ask,
           CAST(k.range % 500 AS INTEGER) AS bid_size, CAST(k.range % 300 AS INTEGER) AS ask_size,
           CAST(1.02 + (hash(k.range, s.session_date) % 1000) / 100 AS DECIMAL(12,2)) AS "last",
           CAST(k.range % 1000 AS BIGINT) AS volume, s.eod_at AS volume_time,
           CAST(${strike} + 0.25 AS DECIMAL(14,4)) AS underlying_price,
           CAST(0.15 + (k.range % 50) / 1000 AS DECIMAL(10,6)) AS iv,
           CAST(CASE k.range % 2 WHEN 0 THEN 0.5 ELSE -0.5 END AS DECIMAL(10,6)) AS delta,
           CAST(0.01 AS DECIMAL(10,6)) AS gamma, CAST(-0.02 AS DECIMAL(10,6)) AS theta,
           CAST(0.1 AS DECIMAL(10,6)) AS vega
    FROM ${q(SESSIONS_TABLE)} s, (VALUES ${underlyings}) u(underlying, i), range(${perSession}) k
    WHERE s.session_date BETWEEN DATE '${FIRST_SESSION}' AND DATE '${LAST_SESSION}'
    LIMIT ${rows}`;
}

/** pitchain: the rows staged in a write transaction of a new store and committed as one version. */
async function pitchain(job: ScaleJob): Promise<number> {
  const tx = await WriteTransaction.begin(join(job.dir, 'store'), {
    create: true,
    memoryLimit: job.memoryLimit,
  });
  let committed = false;
  try {
    const select = await generatedRowsSql(tx.sql, job.rows);
    await tx.sql.run(`INSERT INTO option_quotes BY NAME ${select}`);
    const result = await tx.commit([], { uniqueKeys: ['option_quotes'] });
    committed = true;
    return result.rows.option_quotes ?? 0;
  } finally {
    if (!committed) await tx.abort();
  }
}

/** DuckDB alone: the same rows into a table, written sorted in the store's partitions and Parquet options. */
async function duckdb(job: ScaleJob): Promise<number> {
  const sql = await Session.open({ memoryLimit: job.memoryLimit, tempDirectory: join(job.dir, '.spill') });
  try {
    await sql.run(`CREATE TABLE rows AS ${await generatedRowsSql(sql, job.rows)}`);
    const table = 'option_quotes';
    return Number(
      await sql.value(
        `COPY (SELECT underlying, ${PARTITION_EXPRESSIONS[table]['year']} AS year, ${fileColumns(table).map(q).join(', ')}
               FROM rows ORDER BY ${TABLE_SORT[table].map(q).join(', ')})
         TO ${quoteLiteral(join(job.dir, table))} (${parquetOptions(table)}, PARTITION_BY (underlying, year))`,
      ),
    );
  } finally {
    sql.close();
  }
}

/** This process's peak resident memory so far, from the kernel (MB). */
async function peakRssMb(): Promise<number> {
  const status = await readFile('/proc/self/status', 'utf8');
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  return kb === undefined ? process.memoryUsage.rss() / 2 ** 20 : Number(kb) / 1024;
}

process.once('message', async (job: ScaleJob) => {
  let answer: ScaleAnswer;
  try {
    const started = performance.now();
    const rows = await (job.side === 'pitchain' ? pitchain(job) : duckdb(job));
    answer = { rows, wallMs: performance.now() - started, peakMb: await peakRssMb() };
  } catch (error) {
    answer = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  process.send!(answer, () => process.disconnect());
});
