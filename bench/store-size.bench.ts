/**
 * Store-size benchmark: the sample preset generated into a fresh store through the real commit, in bytes
 * per option row — the option tables (quotes, open interest, contracts) and the whole store — against the
 * same rows written as a HistoricalOptionData L2 CSV. A last row rewrites the quotes at zstd level 9, the
 * store's level for its other tables: smaller, but about twice as slow to write, which every ingest pays.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { generateMarket, sampleOptions } from '../src/ingest/generator/index.js';
import { readManifest } from '../src/store/manifest.js';
import { PARQUET_OPTIONS, parquetOptions } from '../src/store/parquet.js';
import { quoteLiteral, SqlSession } from '../src/store/sql.js';
import { WriteTransaction } from '../src/store/writer.js';
import { writeHodCsv } from './ingest.bench.js';
import { defineBenchmark, directoryBytes, ratioRow } from './lib.js';

const OPTION_TABLES = ['option_quotes', 'open_interest', 'contracts'] as const;

/** The quotes' options with the compression level of the other tables. */
const QUOTES_AT_LEVEL_9 = parquetOptions('option_quotes').replace(
  'COMPRESSION_LEVEL 3',
  PARQUET_OPTIONS.match(/COMPRESSION_LEVEL \d+/)![0],
);

/** Rewrites each file with `options` (rows in the same order) and returns the total bytes. */
async function rewrittenBytes(files: readonly string[], dir: string, options: string): Promise<number> {
  const sql = await SqlSession.open();
  try {
    let total = 0;
    for (const [i, file] of files.entries()) {
      const target = join(dir, `${i}.parquet`);
      await sql.run(
        `COPY (SELECT * FROM read_parquet(${quoteLiteral(file)}, hive_partitioning = false)) TO ${quoteLiteral(target)} (${options})`,
      );
      total += (await stat(target)).size;
    }
    return total;
  } finally {
    sql.close();
  }
}

export default defineBenchmark({
  name: 'store-size',
  description: 'bytes per option row of a freshly committed sample store vs the same rows as a hod CSV',
  async run(ctx) {
    const store = await ctx.tempDir('pitchain-size-store-');
    const scratch = await ctx.tempDir('pitchain-size-scratch-');
    const csv = join(scratch, 'sample_hod_L2.csv');
    const tx = await WriteTransaction.begin(store, { create: true });
    let optionRows: number;
    let committed = false;
    try {
      ctx.log('generating the sample preset');
      const summary = await generateMarket(tx.sql, sampleOptions());
      optionRows = summary.optionRows;
      ctx.log('writing its option rows as a hod L2 CSV');
      const written = await writeHodCsv(tx.sql, csv);
      if (written !== optionRows) throw new Error(`wrote ${written} CSV rows of ${optionRows}`);
      ctx.log('committing');
      await tx.commit([
        {
          source: 'store-size benchmark (sample preset)',
          sha256: '0'.repeat(64),
          format: 'generator',
          rows: { option_quotes: summary.optionRows, open_interest: summary.openInterestRows },
          rejected: 0,
        },
      ]);
      committed = true;
    } finally {
      if (!committed) await tx.abort();
    }

    const manifest = (await readManifest(store))!;
    const bytesOf = (table: keyof typeof manifest.tables) =>
      manifest.tables[table].reduce((sum, file) => sum + file.bytes, 0);
    const optionBytes = OPTION_TABLES.reduce((sum, table) => sum + bytesOf(table), 0);
    const storeBytes = await directoryBytes(store);
    const csvBytes = (await stat(csv)).size;
    const perRow = (bytes: number) => bytes / optionRows;
    const split = OPTION_TABLES.map((t) => `${t} ${perRow(bytesOf(t)).toFixed(2)}`).join(', ');

    ctx.log('rewriting the quotes at zstd level 9');
    const quoteFiles = manifest.tables.option_quotes.map((f) => join(store, f.path));
    const quotesAt9 = await rewrittenBytes(quoteFiles, scratch, QUOTES_AT_LEVEL_9);
    const at9 = optionBytes - bytesOf('option_quotes') + quotesAt9;

    const rows = optionRows.toLocaleString('en-US');
    return [
      ratioRow({
        name: 'store size: option tables per option row',
        ours: perRow(optionBytes),
        baseline: perRow(csvBytes),
        unit: 'B/row',
        target: '≤ 12 B/row',
        note: `${rows} rows; ${split}; baseline = hod L2 CSV`,
      }),
      ratioRow({
        name: 'store size: whole store per option row',
        ours: perRow(storeBytes),
        baseline: perRow(csvBytes),
        unit: 'B/row',
        target: '≤ 0.2× baseline size',
        note: `${(storeBytes / 2 ** 20).toFixed(1)} MB store (stock bars, manifest) vs ${(csvBytes / 2 ** 20).toFixed(0)} MB CSV`,
      }),
      ratioRow({
        name: 'store size: option tables, quotes at zstd level 9',
        ours: perRow(at9),
        baseline: perRow(optionBytes),
        unit: 'B/row',
        target: '≤ 12 B/row',
        note: 'not adopted: every ingest would write its quotes ~2× slower; baseline = as committed (level 3)',
      }),
    ];
  },
});
