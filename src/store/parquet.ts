/** Reading and writing the store's Parquet files through DuckDB. */
import { createHash } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import { HIVE_TYPES } from './layout.js';
import type { TableName } from './schema.js';
import { quoteLiteral } from './sql.js';

/** Parquet writer options: zstd, row groups small enough that one session prunes to few of them. */
export const PARQUET_OPTIONS = 'FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 9, ROW_GROUP_SIZE 65536';

/**
 * Rows of a row group of the tables read a session at a time. Rows are sorted by session, so a session's
 * rows are contiguous and a query of one session decodes only the row groups its rows lie in: at 8,192
 * rows a session of the sample (about 500 rows an underlying) decodes one or two row groups instead of a
 * 65,536-row one, 5.7 ms instead of 12.5 for its SPY chain, for 6 % more bytes (16,384: 6.1 ms, +3 %;
 * 4,096: 6.4 ms, +11 %).
 */
const SESSION_ROW_GROUP = 8192;

/** Columns with more than 100 bytes of distinct values are written as plain pages, not dictionaries. */
const SMALL_DICTIONARIES = 'DICTIONARY_SIZE_LIMIT 100';

/**
 * The writer options of a table's files. The option tables are written without dictionaries beyond tiny
 * ones: their prices, figures and symbols rarely repeat within a row group, so plain zstd pages are smaller.
 * Quotes, the bulk of every ingest, are compressed at zstd level 3: on the sample that writes them twice as
 * fast as level 9 with dictionaries and takes 10.3 B/row against 10.6, for one-session reads ~1.2× and
 * one-contract scans ~1.4× slower (a few ms of a cold chain). Open interest keeps level 9 (1.2 B/row
 * against 1.5 at level 3; four columns, cheap to write). Stock bars are read a session at a time too (a
 * quote during a session sums its minute bars so far): a year of one symbol's minute bars in 8,192-row
 * groups (about 21 sessions each) answers that in 5.4 ms instead of 7.3 on the sample, at 2 % fewer bytes.
 */
export function parquetOptions(table: TableName): string {
  switch (table) {
    case 'option_quotes':
      return `FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 3, ROW_GROUP_SIZE ${SESSION_ROW_GROUP}, ${SMALL_DICTIONARIES}`;
    case 'open_interest':
      return `FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 9, ROW_GROUP_SIZE ${SESSION_ROW_GROUP}, ${SMALL_DICTIONARIES}`;
    case 'stock_bars':
      return `FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 9, ROW_GROUP_SIZE ${SESSION_ROW_GROUP}`;
    default:
      return PARQUET_OPTIONS;
  }
}

/** A `read_parquet(…)` table expression over explicit files, with hive partition columns typed. */
export function readParquetSql(files: readonly string[], hiveKeys: readonly string[]): string {
  const list = `[${files.map(quoteLiteral).join(', ')}]`;
  if (hiveKeys.length === 0) return `read_parquet(${list})`;
  const types = hiveKeys
    .map((k) => `${quoteLiteral(k)}: ${quoteLiteral(HIVE_TYPES[k] ?? 'VARCHAR')}`)
    .join(', ');
  return `read_parquet(${list}, hive_partitioning = true, hive_types = {${types}})`;
}

/** The sha256 of a file's bytes, streamed. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Flushes a file written by another component (DuckDB) to disk. */
export async function fsyncFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
