/** Where each table's files live and how its partitions are derived from its columns. */
import { StoreError } from '../errors.js';
import { TABLE_PARTITIONS, TABLES, type TableName } from './schema.js';
import { quoteLiteral } from './sql.js';

export const TABLES_DIR = 'tables';

/** The date column each table's `year` partition is taken from: its session column. */
export const YEAR_COLUMN: Partial<Record<TableName, string>> = {
  option_quotes: 'session_date',
  open_interest: 'settled_session',
  stock_bars: 'session_date',
};

const yearOf = (table: TableName) => `year("${YEAR_COLUMN[table]!}")`;

/** SQL expressions that compute each partition column from a canonical row. */
export const PARTITION_EXPRESSIONS: Record<TableName, Record<string, string>> = {
  option_quotes: { underlying: '"underlying"', year: yearOf('option_quotes') },
  open_interest: { underlying: '"underlying"', year: yearOf('open_interest') },
  contracts: { underlying: '"underlying"' },
  stock_bars: { symbol: '"symbol"', resolution: '"resolution"', year: yearOf('stock_bars') },
  splits: {},
};

/**
 * SQL conditions selecting the rows of one partition from a table in canonical columns. A year is matched
 * as a range of its date column, not with `year(…)`: a range is compared against each row group's
 * minimum and maximum first, so the scan skips whole row groups of other years.
 */
export function partitionMatchSql(table: TableName, partition: Record<string, string>): string[] {
  return TABLE_PARTITIONS[table].map((key) => {
    const value = partition[key]!;
    const dateColumn = YEAR_COLUMN[table];
    if (key === 'year' && dateColumn !== undefined && /^\d{4}$/.test(value)) {
      const column = `"${dateColumn}"`;
      return `${column} >= DATE '${value}-01-01' AND ${column} < DATE '${Number(value) + 1}-01-01'`;
    }
    // The literal takes the expression's type, so rows are compared as they are (a CAST of every row to
    // text, once per partition, would cost a scan of the whole staged table).
    return `(${PARTITION_EXPRESSIONS[table][key]}) = ${quoteLiteral(value)}`;
  });
}

/** DuckDB types of the hive partition columns, so that readers never guess them. */
export const HIVE_TYPES: Record<string, string> = {
  underlying: 'VARCHAR',
  symbol: 'VARCHAR',
  resolution: 'VARCHAR',
  year: 'INTEGER',
};

const PARTITION_VALUE = /^[A-Za-z0-9.-]{1,16}$/;

/** The directory (relative to the store, `/`-separated) of one partition of a table. */
export function partitionDirectory(table: TableName, partition: Record<string, string>): string {
  const parts = [TABLES_DIR, table];
  for (const key of TABLE_PARTITIONS[table]) {
    const value = partition[key];
    if (value === undefined || !PARTITION_VALUE.test(value)) {
      throw new StoreError(`invalid ${key} '${String(value)}' for table ${table}`);
    }
    parts.push(`${key}=${value}`);
  }
  return parts.join('/');
}

/** The canonical columns stored inside a table's files (partition columns live in the path). */
export function fileColumns(table: TableName): string[] {
  const partitionKeys = new Set(TABLE_PARTITIONS[table]);
  return TABLES[table].map((c) => c.name).filter((name) => !partitionKeys.has(name));
}

/** Whether two partition descriptions are the same. */
export function samePartition(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
}
