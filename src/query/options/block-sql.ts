/**
 * The SQL of block reads: which store columns a block reads and how each is handed over as a number
 * (strings cost more to read than a session's other columns), and the bounds that let a Parquet scan
 * skip row groups of other dates.
 */
import { TABLES } from '../../store/schema.js';
import { SYMBOL_KEY } from '../../store/session-columns.js';
import { quoteLiteral } from '../../store/sql.js';
import { QUOTE_COLUMNS } from './block-columns.js';

/** The 53-bit hash of a row's contract symbol, exact as a double: the session column files' keys too. */
export { SYMBOL_KEY };

/**
 * How rows of `alias` name their contract when read as columns: the symbol's hash when the contracts have
 * one key each (`keys`), else the symbol itself (two of the underlying's symbols share a hash).
 */
export function contractKeySql(alias: string, keys: object | undefined): string {
  return keys === undefined ? `${alias}.option_symbol` : SYMBOL_KEY(alias);
}

/** An SQL expression as DOUBLE: the type the store's columns are read in as typed arrays. */
export const asDouble = (expression: string) => `CAST(${expression} AS DOUBLE)`;

/**
 * An SQL expression whose values are 32-bit integers by the store's schema (a size, a day number, flags),
 * as INTEGER: read into the same Float64Arrays, at half the bytes of a DOUBLE to hand over
 * (`SqlSession.typedColumns`).
 */
export const asInteger = (expression: string) => `CAST(${expression} AS INTEGER)`;

/** A DATE column as its day number (days since 1970-01-01, `days.ts`), as INTEGER. */
export const dayNumberSql = (column: string) => asInteger(`${column} - DATE '1970-01-01'`);

/** Each of `QUOTE_COLUMNS` after the contract: the store's column of quotes `q` it reads, and how. */
const QUOTE_READS: Record<Exclude<(typeof QUOTE_COLUMNS)[number], 'contract'>, readonly [string, string]> = {
  day: ['session_date', dayNumberSql('q.session_date')],
  quote_time: ['quote_time', asDouble('epoch_ms(q.quote_time) / 1000')],
  bid: ['bid', asDouble('q.bid')],
  ask: ['ask', asDouble('q.ask')],
  bid_size: ['bid_size', asInteger('q.bid_size')],
  ask_size: ['ask_size', asInteger('q.ask_size')],
  last: ['last', asDouble('q."last"')],
  volume: ['volume', asDouble('q.volume')],
  volume_time: ['volume_time', asDouble('epoch_ms(q.volume_time) / 1000')],
  underlying_price: ['underlying_price', asDouble('q.underlying_price')],
  iv: ['iv', asDouble('q.iv')],
  delta: ['delta', asDouble('q.delta')],
  gamma: ['gamma', asDouble('q.gamma')],
  theta: ['theta', asDouble('q.theta')],
  vega: ['vega', asDouble('q.vega')],
};

/** The reads of `QUOTE_COLUMNS` after the contract, in their order. */
const QUOTE_READ_ORDER = QUOTE_COLUMNS.slice(1).map((name) => QUOTE_READS[name as keyof typeof QUOTE_READS]);

/**
 * The store's wide integer columns (BIGINT, DECIMAL) a read may hand over in 32 bits when every value of
 * the files read has at most nine digits (`SqlSession.narrowColumns`): per table, each column's scale, as the schema types it.
 * A BIGINT goes as INTEGER, a `DECIMAL(12,2)` price as a `DECIMAL(9,2)`, whose digits `typedColumns`
 * divides back to the double DuckDB's own cast gives.
 */
const NARROWABLE = {
  option_quotes: wideIntegerColumns('option_quotes'),
  open_interest: wideIntegerColumns('open_interest'),
} as const;

/** A table's BIGINT and DECIMAL columns, each with its scale (0 for BIGINT). */
function wideIntegerColumns(table: 'option_quotes' | 'open_interest'): ReadonlyMap<string, number> {
  const scales = new Map<string, number>();
  for (const { name, type } of TABLES[table]) {
    const decimal = /^DECIMAL\(\d+,(\d+)\)$/.exec(type);
    if (decimal !== null) scales.set(name, Number(decimal[1]));
    else if (type === 'BIGINT') scales.set(name, 0);
  }
  return scales;
}

/**
 * The column `column` of rows `alias` of `table` in 32 bits when `narrow` holds it (and it is
 * narrowable), else `otherwise`.
 */
function narrowedOr(
  table: keyof typeof NARROWABLE,
  alias: string,
  column: string,
  narrow: ReadonlySet<string>,
  otherwise: string,
): string {
  const scale = NARROWABLE[table].get(column);
  if (scale === undefined || !narrow.has(column)) return otherwise;
  const value = `${alias}."${column}"`;
  return scale === 0 ? asInteger(value) : `CAST(${value} AS DECIMAL(9,${scale}))`;
}

/**
 * The `QUOTE_COLUMNS` of quotes `q`, as numbers, the contract as its symbol's hash (with `keys`) or as
 * its symbol; but for the store columns in `empty` (NULL in every file read), which are not read:
 * `withEmpty` puts them back as NaN. The columns in `narrow` go in 32 bits (`narrowedOr`). Each column
 * costs about as much to hand over from DuckDB as to read.
 */
export function quoteColumnsSql(
  keys: object | undefined,
  empty: ReadonlySet<string> = new Set(),
  narrow: ReadonlySet<string> = new Set(),
): string {
  return [
    contractKeySql('q', keys),
    ...QUOTE_READ_ORDER.flatMap(([column, sql]) =>
      empty.has(column) ? [] : [narrowedOr('option_quotes', 'q', column, narrow, sql)],
    ),
  ].join(', ');
}

/** One quote column of quotes `q` as a block reads it, in 32 bits when `narrow` holds it. */
export function quoteReadSql(name: keyof typeof QUOTE_READS, narrow: ReadonlySet<string>): string {
  const [column, sql] = QUOTE_READS[name];
  return narrowedOr('option_quotes', 'q', column, narrow, sql);
}

/** A quote read's columns in `QUOTE_COLUMNS` order, with a NaN column for each left out (see `quoteColumnsSql`). */
export function withEmpty(
  columns: readonly (Float64Array | (string | null)[])[],
  empty: ReadonlySet<string>,
): (Float64Array | (string | null)[])[] {
  if (empty.size === 0) return [...columns];
  // One NaN column serves every empty one (rows are only ever moved within a column, NaN over NaN).
  const none = new Float64Array(columns[0]!.length).fill(Number.NaN);
  let read = 1;
  return [columns[0]!, ...QUOTE_READ_ORDER.map(([column]) => (empty.has(column) ? none : columns[read++]!))];
}

/**
 * The condition keeping rows of `alias` whose symbols carry the date `expiration` under one of `roots`:
 * per root, the range of symbols `ROOTyymmdd…`, a plain range a Parquet scan prunes with (a root that is
 * another's prefix and a digit may let a few other rows through, which the numbering drops); `AND false`
 * without a root. A session block's read of one date (a loop's blocks bound theirs by their contracts'
 * symbols, `contractSymbolsSql`).
 */
export function symbolRangesSql(alias: string, expiration: string, roots: readonly string[]): string {
  if (roots.length === 0) return 'AND false';
  const ranges = roots.map((root) => {
    const [low, high] = symbolRange(root, expiration);
    return `(${alias}.option_symbol >= ${quoteLiteral(low)} AND ${alias}.option_symbol < ${quoteLiteral(high)})`;
  });
  return `AND (${ranges.join(' OR ')})`;
}

/**
 * The symbols of `root`'s contracts expiring on `expiration`, as a range of text `[low, high)`: every
 * `ROOTyymmdd…` sorts within it (a root that is another's prefix and a digit may share it, as above).
 */
export function symbolRange(root: string, expiration: string): readonly [low: string, high: string] {
  const date = expiration.slice(2).replaceAll('-', '');
  const next = String(Number(date) + 1).padStart(6, '0');
  return [root + date, root + next];
}

/**
 * Open interest `o`'s contract, settled session (a day number), open interest and publication, as
 * numbers: the open interest as INTEGER when `narrow` holds it.
 */
export function interestColumnsSql(
  keys: object | undefined,
  narrow: ReadonlySet<string> = new Set(),
): string {
  const double = asDouble;
  return [
    contractKeySql('o', keys),
    dayNumberSql('o.settled_session'),
    narrowedOr('open_interest', 'o', 'open_interest', narrow, double('o.open_interest')),
    double('epoch_ms(o.published_at) / 1000'),
  ].join(', ');
}
