/**
 * `parquet` and `arrow`: files that hold one canonical table in exactly the store's columns (names and
 * types of `src/store/schema.ts`), and `exportCanonical`, which writes such files. The table is named by
 * an option or inferred from the columns. `_line` of an imported row is its 1-based row number.
 */
import { promises as fs } from 'node:fs';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import { StoreError, UsageError } from '../../errors.js';
import {
  arrowToTempTable,
  describeQuery,
  duckdbTypeOf,
  normalizeDuckdbType,
  queryArrow,
} from '../../store/arrow.js';
import { TABLES, type TableName } from '../../store/schema.js';
import { quoteIdentifier, quoteLiteral, type SqlParams, type SqlSession } from '../../store/sql.js';
import { tempTableName } from '../csv-source.js';
import { validateBars, validateSplits } from '../validate-bars.js';
import { fileProblem, readErrorReason } from './candles.js';
import { type IngestFormat, type StageOptions, type StageResult, stagingTable } from './types.js';

/** Options of the canonical formats: the table the file holds, when its columns should not decide. */
export type CanonicalStageOptions = StageOptions & { readonly table?: TableName };

/** A column of a file as DuckDB names its type. */
export type FileColumn = { readonly name: string; readonly type: string };

/** The file formats `exportCanonical` writes. */
export type CanonicalFormat = 'parquet' | 'arrow';

const TABLE_NAMES = Object.keys(TABLES) as TableName[];

/**
 * The canonical table whose columns `columns` are exactly (any order), or the reason they are not: the
 * missing and extra column names against the named (or closest) table, or each column of the wrong type.
 */
export function matchCanonicalTable(
  columns: readonly FileColumn[],
  table?: TableName,
): { table: TableName } | { reason: string } {
  const names = new Set(columns.map((column) => column.name));
  const overlap = (name: TableName) => TABLES[name].filter((spec) => names.has(spec.name)).length;
  const exact = TABLE_NAMES.filter(
    (name) => TABLES[name].length === names.size && overlap(name) === names.size,
  );
  const chosen = table ?? exact[0] ?? [...TABLE_NAMES].sort((a, b) => overlap(b) - overlap(a))[0]!;
  const expected = TABLES[chosen];
  const expectedNames = new Set(expected.map((spec) => spec.name));
  const missing = expected.filter((spec) => !names.has(spec.name)).map((spec) => spec.name);
  const extra = columns.filter((column) => !expectedNames.has(column.name)).map((column) => column.name);
  if (missing.length > 0 || extra.length > 0) {
    const parts = [
      ...(missing.length > 0 ? [`missing ${missing.join(', ')}`] : []),
      ...(extra.length > 0 ? [`extra ${extra.join(', ')}`] : []),
    ];
    const which =
      table === undefined ? `match no canonical table; closest is ${chosen}` : `do not match ${chosen}`;
    return { reason: `columns ${which}: ${parts.join('; ')}` };
  }
  const wrong = expected.flatMap((spec) => {
    const actual = columns.find((column) => column.name === spec.name)!.type;
    const want = normalizeDuckdbType(spec.type);
    return actual === want ? [] : [`column ${spec.name} is ${actual}, expected ${want}`];
  });
  if (wrong.length > 0) return { reason: `wrong types for ${chosen}: ${wrong.join('; ')}` };
  return { table: chosen };
}

/**
 * Moves rows of a temp table with the canonical columns of `table` into its staging table, numbering
 * them in order, with the bar and split rules for `stock_bars` and `splits`. Drops `source`.
 */
async function stageCanonicalRows(
  sql: SqlSession,
  table: TableName,
  source: string,
  options: StageOptions,
): Promise<number> {
  const numbered = tempTableName(`${table}_import`);
  const columns = TABLES[table].map((spec) => quoteIdentifier(spec.name)).join(', ');
  try {
    await sql.run(
      `CREATE TEMP TABLE ${quoteIdentifier(numbered)} AS
       SELECT ${columns}, row_number() OVER () AS _line, CAST(NULL AS VARCHAR) AS _reject FROM ${quoteIdentifier(source)}`,
    );
    const rows = await sql.value<number>(`SELECT count(*) FROM ${quoteIdentifier(numbered)}`);
    const target = stagingTable(options, table);
    if (table === 'stock_bars') await validateBars(sql, numbered, target);
    else if (table === 'splits') await validateSplits(sql, numbered, target);
    else {
      await sql.run(
        `INSERT INTO ${quoteIdentifier(target)} (${columns}, _line, _reject)
         SELECT ${columns}, _line, _reject FROM ${quoteIdentifier(numbered)}`,
      );
    }
    return rows;
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(numbered)}`);
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(source)}`);
  }
}

/** Stages a Parquet file holding one canonical table. */
export async function stageParquet(
  sql: SqlSession,
  file: string,
  options: CanonicalStageOptions = {},
): Promise<StageResult> {
  let columns: FileColumn[];
  try {
    columns = await describeQuery(sql, 'SELECT * FROM read_parquet($file)', { file });
  } catch (error) {
    return fileProblem(file, `not a readable Parquet file: ${readErrorReason(error)}`, options);
  }
  const match = matchCanonicalTable(columns, options.table);
  if ('reason' in match) return fileProblem(file, match.reason, options);
  const source = tempTableName('parquet');
  await sql.run(`CREATE TEMP TABLE ${quoteIdentifier(source)} AS SELECT * FROM read_parquet($file)`, {
    file,
  });
  const rows = await stageCanonicalRows(sql, match.table, source, options);
  return { rows, rejects: [] };
}

/** Stages an Arrow IPC file (file or stream format) holding one canonical table. */
export async function stageArrow(
  sql: SqlSession,
  file: string,
  options: CanonicalStageOptions = {},
): Promise<StageResult> {
  let table: ReturnType<typeof tableFromIPC>;
  try {
    table = tableFromIPC(await fs.readFile(file));
  } catch (error) {
    return fileProblem(file, `not a readable Arrow IPC file: ${readErrorReason(error)}`, options);
  }
  const columns = table.schema.fields.map((field) => ({
    name: field.name,
    type: duckdbTypeOf(field.type) ?? `Arrow ${String(field.type)}`,
  }));
  const match = matchCanonicalTable(columns, options.table);
  if ('reason' in match) return fileProblem(file, match.reason, options);
  const source = tempTableName('arrow');
  await arrowToTempTable(sql, table, source);
  const rows = await stageCanonicalRows(sql, match.table, source, options);
  return { rows, rejects: [] };
}

/** The canonical format a file name implies (`.parquet`; `.arrow`, `.feather`, `.ipc`, `.arrows`), if any. */
export function canonicalFormatOf(file: string): CanonicalFormat | undefined {
  if (/\.parquet$/i.test(file)) return 'parquet';
  if (/\.(arrow|arrows|feather|ipc)$/i.test(file)) return 'arrow';
  return undefined;
}

/**
 * Writes the rows of `query` to `file` as Parquet (zstd) or as an Arrow IPC file (types as in
 * `src/store/arrow.ts`, so that the file imports back unchanged). Returns the number of rows written.
 */
export async function exportCanonical(
  sql: SqlSession,
  query: string,
  file: string,
  format: CanonicalFormat,
  params?: SqlParams,
): Promise<number> {
  const partial = `${file}.partial-${process.pid}`;
  try {
    if (format === 'parquet') {
      await sql.run(`COPY (${query}) TO ${quoteLiteral(partial)} (FORMAT parquet, COMPRESSION zstd)`, params);
      await fs.rename(partial, file);
      return sql.value<number>('SELECT count(*) FROM read_parquet($file)', { file });
    }
    if (format === 'arrow') {
      const table = await queryArrow(sql, query, params);
      await fs.writeFile(partial, tableToIPC(table, 'file'));
      await fs.rename(partial, file);
      return table.numRows;
    }
  } catch (error) {
    await fs.rm(partial, { force: true });
    if (error instanceof StoreError) throw error;
    throw new StoreError(`export to ${file} failed: ${readErrorReason(error)}`, { cause: error });
  }
  throw new UsageError(`unknown export format ${String(format)} (parquet or arrow)`);
}

/** The `parquet` format. */
export const parquetFormat: IngestFormat = {
  name: 'parquet',
  description: 'one canonical table in a Parquet file (exactly the store columns and types)',
  stage: (sql, file, options: CanonicalStageOptions) => stageParquet(sql, file, options),
};

/** The `arrow` format. */
export const arrowFormat: IngestFormat = {
  name: 'arrow',
  description: 'one canonical table in an Arrow IPC file or stream (exactly the store columns and types)',
  stage: (sql, file, options: CanonicalStageOptions) => stageArrow(sql, file, options),
};
