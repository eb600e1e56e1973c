/**
 * Generator benchmark: the embedded sample preset (SPY, SPX/SPXW, AAPL over 2019-2020, EOD and 15:45
 * snapshots, minute bars) generated into fresh in-memory staging tables. Reports option rows per second
 * (wall clock and per CPU core used), the sample's row counts, and the zstd Parquet size of the result
 * laid out like the store (partitioned by underlying/symbol and year, sorted by session), with the
 * vendor columns in full, iv only, or none.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type GeneratorOptions, generateMarket, sampleOptions } from '../src/ingest/generator/index.js';
import { createStagingTableSql } from '../src/store/schema.js';
import { quoteLiteral, SqlSession } from '../src/store/sql.js';
import { defineBenchmark, directoryBytes, perSecond, ratioRow, timeIt } from './lib.js';

const STAGING = ['option_quotes', 'open_interest', 'stock_bars', 'splits'] as const;

async function staging(): Promise<SqlSession> {
  const sql = await SqlSession.open();
  for (const table of STAGING) await sql.run(createStagingTableSql(table));
  return sql;
}

/** Writes the staging tables as the store lays them out and returns the bytes of each table. */
async function parquetBytes(
  sql: SqlSession,
  dir: string,
  dropColumns: readonly string[],
): Promise<Record<string, number>> {
  const layouts = [
    ['option_quotes', 'session_date', 'underlying', 'session_date, option_symbol, quote_time'],
    ['open_interest', 'settled_session', 'underlying', 'settled_session, option_symbol'],
    ['stock_bars', 'session_date', 'symbol, resolution', 'symbol, resolution, t'],
  ] as const;
  const bytes: Record<string, number> = {};
  await mkdir(dir, { recursive: true });
  for (const [table, dateColumn, partitions, order] of layouts) {
    const target = join(dir, table);
    const drop = ['_line', '_reject', ...(table === 'option_quotes' ? dropColumns : [])];
    const existing = new Set(
      (
        await sql.all<{ name: string }>(
          `SELECT column_name AS name FROM information_schema.columns WHERE table_name = $1`,
          [table],
        )
      ).map((c) => c.name),
    );
    const excluded = drop.filter((c) => existing.has(c));
    await sql.run(
      `COPY (SELECT * EXCLUDE (${excluded.join(', ')}), year(${dateColumn}) AS year FROM ${table} ORDER BY ${order})
       TO ${quoteLiteral(target)} (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (${partitions}, year))`,
    );
    bytes[table] = await directoryBytes(target);
  }
  return bytes;
}

export default defineBenchmark({
  name: 'generator',
  description:
    'synthetic market: the sample preset (1.3 M option rows) into staging tables, and its Parquet size',
  async run(ctx) {
    const options: GeneratorOptions = sampleOptions();
    let rows = 0;
    let cpuMs = 0;
    const timing = await timeIt(
      async () => {
        const sql = await staging();
        try {
          const cpu = process.cpuUsage();
          rows = (await generateMarket(sql, options)).optionRows;
          const used = process.cpuUsage(cpu);
          cpuMs = (used.user + used.system) / 1000;
        } finally {
          sql.close();
        }
      },
      { warmup: 0, iterations: 2 },
    );
    ctx.log(`generated ${rows.toLocaleString('en-US')} option rows, p50 ${timing.p50Ms.toFixed(0)} ms`);

    const sql = await staging();
    try {
      const summary = await generateMarket(sql, { ...options, greeks: 'all' });
      const dir = await ctx.tempDir('pitchain-generator-');
      const variants = {
        all: await parquetBytes(sql, join(dir, 'all'), []),
        iv: await parquetBytes(sql, join(dir, 'iv'), ['delta', 'gamma', 'theta', 'vega']),
        none: await parquetBytes(sql, join(dir, 'none'), ['iv', 'delta', 'gamma', 'theta', 'vega']),
      };
      const perRow = (bytes: Record<string, number>) => bytes['option_quotes']! / summary.optionRows;
      const total = (bytes: Record<string, number>) => Object.values(bytes).reduce((a, b) => a + b, 0);
      const sampleBytes = variants[options.greeks ?? 'all'];
      return [
        ratioRow({
          name: 'generator: sample option rows/s (wall)',
          ours: perSecond(rows, timing.p50Ms),
          unit: 'rows/s',
          target: '≥ 1000000 rows/s',
          note: `${rows.toLocaleString('en-US')} rows in ${timing.p50Ms.toFixed(0)} ms`,
        }),
        ratioRow({
          name: 'generator: option rows/s per CPU core',
          ours: perSecond(rows, cpuMs),
          unit: 'rows/s',
          target: '≥ 500000 rows/s',
          note: `${cpuMs.toFixed(0)} ms of CPU in the last run`,
        }),
        ratioRow({
          name: 'generator: sample option rows',
          ours: summary.optionRows,
          unit: 'rows',
          target: '≤ 2000000 rows',
          note: `${summary.contracts} contracts, ${summary.openInterestRows} OI rows, ${summary.minuteBars} minute bars`,
        }),
        ratioRow({
          name: 'generator: sample store size (zstd Parquet)',
          ours: total(sampleBytes) / 2 ** 20,
          unit: 'MB',
          target: '≤ 25 MB',
          note: `greeks '${options.greeks ?? 'all'}'; quotes ${(sampleBytes['option_quotes']! / 2 ** 20).toFixed(1)}, OI ${(sampleBytes['open_interest']! / 2 ** 20).toFixed(1)}, bars ${(sampleBytes['stock_bars']! / 2 ** 20).toFixed(1)} MB`,
        }),
        ratioRow({
          name: `generator: option_quotes bytes per option row, greeks '${options.greeks ?? 'all'}'`,
          ours: perRow(sampleBytes),
          unit: 'B/row',
          target: '≤ 12 B/row',
          note: `whole store ${(total(sampleBytes) / summary.optionRows).toFixed(1)} B per option row; with vendor greeks 'all' ${perRow(variants.all).toFixed(1)}, 'none' ${perRow(variants.none).toFixed(1)} B/row (the option tables as committed: npm run bench -- store-size)`,
        }),
      ];
    } finally {
      sql.close();
    }
  },
});
