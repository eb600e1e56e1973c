/**
 * The store's canonical tables. Ingest adapters and the generator produce rows in exactly these columns
 * (into DuckDB staging tables of the same names); the store partitions, sorts and writes them as Parquet.
 * Instants are TIMESTAMPTZ (UTC); session and expiration dates are DATE in Eastern time.
 */

export type ColumnSpec = { readonly name: string; readonly type: string; readonly nullable: boolean };

const col = (name: string, type: string, nullable = false): ColumnSpec => ({ name, type, nullable });

/** One snapshot of one contract: session D, quote time q, the quote fields as of q. */
export const OPTION_QUOTES: readonly ColumnSpec[] = [
  col('underlying', 'VARCHAR'), // the underlying ticker the service files it under (SPXW rows → SPX)
  col('option_symbol', 'VARCHAR'), // OCC, validated
  col('session_date', 'DATE'), // D
  col('quote_time', 'TIMESTAMPTZ'), // q: EOD rows 16:00 ET of D
  col('bid', 'DECIMAL(12,2)', true),
  col('ask', 'DECIMAL(12,2)', true),
  col('bid_size', 'INTEGER', true),
  col('ask_size', 'INTEGER', true),
  col('last', 'DECIMAL(12,2)', true),
  col('volume', 'BIGINT', true), // cumulative session volume as of volume_time
  col('volume_time', 'TIMESTAMPTZ', true), // v: EOD / full-session figures = close of D
  col('underlying_price', 'DECIMAL(14,4)', true), // as of q
  col('iv', 'DECIMAL(10,6)', true), // vendor-supplied, computed at q
  col('delta', 'DECIMAL(10,6)', true),
  col('gamma', 'DECIMAL(10,6)', true),
  col('theta', 'DECIMAL(10,6)', true),
  col('vega', 'DECIMAL(10,6)', true),
];

/** Open interest by the session it was settled from, with the instant it was published. */
export const OPEN_INTEREST: readonly ColumnSpec[] = [
  col('underlying', 'VARCHAR'),
  col('option_symbol', 'VARCHAR'),
  col('settled_session', 'DATE'), // OI produced by trading through this session
  col('published_at', 'TIMESTAMPTZ'), // default 09:30 ET of the next session
  col('open_interest', 'BIGINT'),
];

/** One row per contract ever seen. Derived from the quotes at commit unless the source states more. */
export const CONTRACTS: readonly ColumnSpec[] = [
  col('underlying', 'VARCHAR'),
  col('option_symbol', 'VARCHAR'),
  col('root', 'VARCHAR'),
  col('expiration', 'DATE'),
  col('expiration_time', 'TIMESTAMPTZ'), // 16:00 ET equity, 16:15 PM index, 09:30 AM index
  col('side', 'VARCHAR'), // call | put
  col('strike', 'DECIMAL(12,3)'),
  col('settlement', 'VARCHAR'), // AM | PM
  col('monthly', 'BOOLEAN'),
  col('weekly', 'BOOLEAN'),
  col('quarterly', 'BOOLEAN'),
  col('nonstandard', 'BOOLEAN'),
  col('first_traded', 'DATE'), // the first session the store saw it, unless the source states it
];

/** Stock bars: resolution 'D' (t = session date 00:00 ET) or '1' (t = minute start). Raw, unadjusted prices. */
export const STOCK_BARS: readonly ColumnSpec[] = [
  col('symbol', 'VARCHAR'),
  col('resolution', 'VARCHAR'), // 'D' | '1'
  col('session_date', 'DATE'),
  col('t', 'TIMESTAMPTZ'),
  col('o', 'DECIMAL(14,4)'),
  col('h', 'DECIMAL(14,4)'),
  col('l', 'DECIMAL(14,4)'),
  col('c', 'DECIMAL(14,4)'),
  col('v', 'BIGINT'),
];

/** Splits: from the ex-date on, one old share is `ratio` new shares (AAPL 2020-08-31: 4). */
export const SPLITS: readonly ColumnSpec[] = [
  col('symbol', 'VARCHAR'),
  col('ex_date', 'DATE'),
  col('ratio', 'DOUBLE'),
];

export const TABLES = {
  option_quotes: OPTION_QUOTES,
  open_interest: OPEN_INTEREST,
  contracts: CONTRACTS,
  stock_bars: STOCK_BARS,
  splits: SPLITS,
} as const;

export type TableName = keyof typeof TABLES;

/** Natural keys: a newer ingest's row with the same key replaces the older one. */
export const TABLE_KEYS: Record<TableName, readonly string[]> = {
  option_quotes: ['option_symbol', 'session_date', 'quote_time'],
  open_interest: ['option_symbol', 'settled_session'],
  contracts: ['option_symbol'],
  stock_bars: ['symbol', 'resolution', 't'],
  splits: ['symbol', 'ex_date'],
};

/** Sort order inside each Parquet file, so that one session of one underlying reads few row groups. */
export const TABLE_SORT: Record<TableName, readonly string[]> = {
  option_quotes: ['session_date', 'option_symbol', 'quote_time'],
  open_interest: ['settled_session', 'option_symbol'],
  contracts: ['expiration', 'option_symbol'],
  stock_bars: ['symbol', 'resolution', 't'],
  splits: ['symbol', 'ex_date'],
};

/** Hive partition columns per table (directory levels). `year` is derived from the first date column. */
export const TABLE_PARTITIONS: Record<TableName, readonly string[]> = {
  option_quotes: ['underlying', 'year'],
  open_interest: ['underlying', 'year'],
  contracts: ['underlying'],
  stock_bars: ['symbol', 'resolution', 'year'],
  splits: [],
};

/** `CREATE TABLE` text for a staging table with the canonical columns. */
export function createTableSql(table: TableName, name: string = table): string {
  const columns = TABLES[table].map((c) => `"${c.name}" ${c.type}${c.nullable ? '' : ' NOT NULL'}`);
  return `CREATE TABLE "${name}" (${columns.join(', ')})`;
}

/**
 * `CREATE TABLE` text for an ingest staging table: the canonical columns, all nullable (validation reports
 * a missing value with its line instead of a constraint error), plus `_line`, the 1-based source line (NULL
 * for rows of a fast read that only stands when nothing is refused, see hod; ranked after earlier files'
 * lines once rows of several files share a table, see ingest), and `_reject`, a problem the format found
 * while parsing the row (NULL when none).
 */
export function createStagingTableSql(table: TableName, name: string = table): string {
  const columns = TABLES[table].map((c) => `"${c.name}" ${c.type}`);
  return `CREATE TABLE "${name}" (${columns.join(', ')}, "_line" BIGINT, "_reject" VARCHAR)`;
}
