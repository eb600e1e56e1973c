/** Reading and writing the store's Parquet files through DuckDB. */
import { createHash } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import { HIVE_TYPES } from './layout.js';
import { quoteLiteral } from './sql.js';

/** Parquet writer options: zstd, row groups small enough that one session prunes to few of them. */
export const PARQUET_OPTIONS = 'FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 9, ROW_GROUP_SIZE 65536';

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
