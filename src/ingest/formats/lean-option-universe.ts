/**
 * `lean-option-universe`: QuantConnect Lean's daily option universe files, one per underlying and date
 * (`option/usa/universes/spy/20240104.csv`), in either of Lean's layouts:
 * - keys: a header `#expiry,strike,right,open,high,low,close,volume,open_interest,implied_volatility,
 *   delta,gamma,vega,theta,rho`, then the underlying's daily bar (expiry, strike and right empty), then one
 *   row per contract. The contracts' root is `--symbol`, else the folder when the path is Lean's
 *   (`universes/<ticker>/<date>.csv`); SPXW files (`--symbol SPXW`) are filed under SPX.
 * - symbols: `symbol_id,symbol_value,open,high,low,close,volume,open_interest,implied_volatility,delta,
 *   gamma,vega,theta,rho` (the header, `#`-prefixed, may be missing); the underlying's row first, with its
 *   ticker as `symbol_value`, then the contracts, each named by its OSI ticker (`SPY   240119C00470000`).
 * The session date D comes from the file name (its last eight digits, `yyyyMMdd`).
 *
 * Timing: the file dated D holds session D's end-of-day data (the underlying's bar of D, contracts still
 * alive after D), and Lean makes a universe row available at the end of its day (`EndTime = Time + 1
 * day`): 00:00 ET of the calendar day after D. That is the rows' quote time q and volume stamp v (a
 * full-session volume); a dated request for D serves them as D's latest snapshot. The open interest is
 * filed as settled the session before D and published 09:30 ET of D, the latest figure OPRA had published
 * when the file became available.
 *
 * Values: no bid, ask or sizes (the rows have none), no `last`: an option row's open/high/low/close are
 * not trade prices (Lean prints them on rows without volume, to the half cent), so they are not kept. The
 * underlying row's close is every row's `underlyingPrice`. IV and Greeks are vendor columns in the store's
 * own units, as QuantConnect computes every universe file (IV a fraction, delta and gamma per $1, theta per
 * calendar day, vega per volatility point): the format states them, so the default `--greeks-units auto`
 * detects nothing; a stated `--greeks-units` (or `auto` with some columns stated) is honoured as for
 * `hod`. `rho` is not kept.
 */
import { basename, dirname } from 'node:path';
import { IngestError } from '../../errors.js';
import { MARKET_ZONE, underlyingOfRoot } from '../../market-time/index.js';
import { quoteIdentifier as q, type SqlSession, type SqlValue } from '../../store/sql.js';
import { insertOpenInterest } from '../calendar-table.js';
import {
  type CsvCheck,
  type CsvField,
  type CsvSource,
  columnIndex,
  csvRecordsSql,
  decimalSql,
  greekSql,
  integerSql,
  occKeyChecks,
  occPartsSql,
  rawColumn,
  readCsvHeader,
  readCsvInto,
  remapColumn,
  writeOccSymbols,
} from '../csv-source.js';
import {
  describeGreekUnits,
  dividedSql,
  establishGreekUnits,
  formatUnits,
  GREEKS,
  GREEKS_UNITS_PRESETS,
  parseGreeksUnits,
} from '../greek-units.js';
import { type IngestFormat, type StageOptions, type StageResult, stagingTable } from './types.js';

/** Options of this format beyond the shared ones: the underlying when the path does not name it. */
export type UniverseStageOptions = StageOptions & { readonly symbol?: string };

/** The columns of the key layout (`#expiry,strike,right,…`) that are read, as its header names them. */
const KEY_COLUMNS = [
  'expiry',
  'strike',
  'right',
  'close',
  'volume',
  'open_interest',
  'implied_volatility',
  'delta',
  'gamma',
  'vega',
  'theta',
] as const;

/** Every column of the symbol layout, in order (its header may be missing). */
const SYMBOL_COLUMNS = [
  'symbol_id',
  'symbol_value',
  'open',
  'high',
  'low',
  'close',
  'volume',
  'open_interest',
  'implied_volatility',
  'delta',
  'gamma',
  'vega',
  'theta',
  'rho',
] as const;

type Column = (typeof KEY_COLUMNS)[number] | (typeof SYMBOL_COLUMNS)[number];

/** The vendor column of each IV and Greek. */
const VENDOR_COLUMN = {
  iv: 'implied_volatility',
  delta: 'delta',
  gamma: 'gamma',
  theta: 'theta',
  vega: 'vega',
} as const;

const SCRATCH = {
  _root: 'VARCHAR',
  _expiration: 'DATE',
  _side: 'VARCHAR',
  _strike: 'DECIMAL(12,3)',
  _oi: 'BIGINT',
  _underlying_row: 'BOOLEAN',
};

/**
 * How one file is laid out: Lean's key layout (expiry, strike and right columns; the underlying's row has
 * them empty), or its symbol layout (`symbol_id,symbol_value,…`, the header optional; a contract's
 * `symbol_value` is its OSI ticker, `SPY   240119C00470000`, the underlying's is its ticker).
 */
type Layout = {
  readonly kind: 'keys' | 'symbols';
  readonly source: CsvSource;
  readonly raw: (column: Column) => string;
};

async function layoutOf(file: string, options: StageOptions): Promise<Layout> {
  const header = await readCsvHeader(file);
  const names = header.names.map((name) => name.replace(/^#/, '').trim().toLowerCase());
  const kind = names[0] === 'expiry' ? 'keys' : 'symbols';
  // A symbol-layout file may start straight with the underlying's row.
  const headerless = kind === 'symbols' && names[0] !== 'symbol_id';
  const expected: readonly Column[] = kind === 'keys' ? KEY_COLUMNS : SYMBOL_COLUMNS;
  const index = headerless
    ? new Map(SYMBOL_COLUMNS.map((column, i) => [column as string, i]))
    : columnIndex(file, { names, line: header.line });
  if (headerless && names.length !== SYMBOL_COLUMNS.length) {
    throw new IngestError(
      file,
      header.line,
      'not a Lean option universe file: no #expiry,strike,right,… or #symbol_id,symbol_value,… header, ' +
        `and not the ${SYMBOL_COLUMNS.length} columns of a headerless one`,
    );
  }
  const positions = new Map<Column, number>();
  for (const column of expected) {
    const position = index.get(column);
    if (position === undefined) {
      throw new IngestError(file, header.line, `missing column "${column}" in a Lean option universe header`);
    }
    positions.set(column, position);
  }
  return {
    kind,
    source: {
      file,
      columns: names.length,
      headerLine: headerless ? 0 : header.line,
      ...(options.scan === undefined ? {} : { scan: options.scan }),
    },
    raw: (column) => rawColumn(positions.get(column)!),
  };
}

/** The session date of a file from its name (the last eight digits, `yyyyMMdd`), or undefined. */
export function universeDateOf(file: string): string | undefined {
  const digits = [...basename(file).matchAll(/(\d{8})/g)].at(-1)?.[1];
  if (digits === undefined) return undefined;
  const date = `${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.slice(6)}`;
  const parsed = new Date(`${date}T00:00:00Z`);
  return Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== date ? undefined : date;
}

/** The ticker a Lean data path names (`…/universes/spy/20240104.csv` → SPY), or undefined. */
export function universeSymbolOf(file: string): string | undefined {
  const folder = dirname(file);
  if (basename(dirname(folder)).toLowerCase() !== 'universes') return undefined;
  const ticker = basename(folder);
  return /^[a-z0-9.]+$/i.test(ticker) ? ticker.toUpperCase() : undefined;
}

async function stage(sql: SqlSession, file: string, options: UniverseStageOptions): Promise<StageResult> {
  const date = universeDateOf(file);
  if (date === undefined) {
    throw new IngestError(file, undefined, 'no session date in the file name (yyyyMMdd, as Lean names it)');
  }
  const layout = await layoutOf(file, options);
  const { raw, source } = layout;
  const first = await underlyingBar(sql, layout);
  // The contracts' root: --symbol, else Lean's folder, else (symbol layout) the underlying's own ticker.
  const root = (options.symbol ?? universeSymbolOf(file) ?? first.ticker)?.trim().toUpperCase();
  if (layout.kind === 'keys' && (root === undefined || root === '')) {
    throw new IngestError(
      file,
      undefined,
      'no underlying: give --symbol, or keep the file in Lean’s universes/<ticker>/ folder',
    );
  }
  const spot = first.close;
  const number = (column: Column): string => `TRY_CAST(${raw(column)} AS DOUBLE)`;
  // The OSI ticker of a symbol-layout row as an OCC symbol (the root's padding dropped).
  const symbol = `upper(replace(${raw('symbol_value')}, ' ', ''))`;
  const occ = occPartsSql(symbol);
  const contract =
    layout.kind === 'keys'
      ? { side: sideSql(raw('right')), strike: number('strike'), expiration: expirySql(raw('expiry')) }
      : { side: occ.side, strike: `${occ.strike} / 1000`, expiration: occ.expiration };
  // QuantConnect computes every universe file's IV and Greeks with one model in the store's units (IV a
  // fraction, theta per day, vega per volatility point): `auto` takes them from the format, as detection
  // cannot judge a file with few near-money rows (a split day's strikes are far from the new price).
  const [units, byFormat] = formatUnits(parseGreeksUnits(options.greeksUnits), GREEKS_UNITS_PRESETS.store);
  const { divisors } = await establishGreekUnits(sql, file, units, (limit) => csvRecordsSql(source, limit), {
    side: contract.side,
    spot: String(spot),
    strike: contract.strike,
    days: `date_diff('day', DATE '${date}', ${contract.expiration})`,
    price: number('close'),
    iv: number('implied_volatility'),
    delta: number('delta'),
    gamma: number('gamma'),
    theta: number('theta'),
    vega: number('vega'),
  });

  const params: SqlValue[] = [];
  const bind = (value: SqlValue): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const field = (name: string, column: Column, sqlOf: (r: string) => string, expect?: string): CsvField => ({
    name,
    sql: sqlOf(raw(column)),
    raw: raw(column),
    label: column,
    ...(expect === undefined ? {} : { expect }),
  });
  const common: CsvField[] = [
    field('volume', 'volume', (r) => integerSql(r), 'a whole number'),
    field('oi', 'open_interest', (r) => integerSql(r), 'a whole number'),
    ...GREEKS.map((greek) =>
      field(greek, VENDOR_COLUMN[greek], (r) => `TRY_CAST(${r} AS DOUBLE)`, 'a number'),
    ),
  ];
  let fields: CsvField[];
  let checks: CsvCheck[];
  let underlyingRow: string;
  if (layout.kind === 'keys') {
    fields = [
      field('expiration', 'expiry', expirySql, 'a date like 20240119'),
      field('strike', 'strike', (r) => decimalSql(r, 'DECIMAL(12,3)'), 'a number'),
      field('side', 'right', sideSql, 'C or P'),
      ...common,
    ];
    // The underlying's rows leave all three keys empty; a contract row must give each.
    const keys = (['expiry', 'strike', 'right'] as const).map((column) => `${raw(column)} IS NULL`);
    underlyingRow = `(${keys.join(' AND ')})`;
    checks = (['expiry', 'strike', 'right'] as const).map((column) => ({
      sql: `NOT ${underlyingRow} AND ${raw(column)} IS NULL`,
      reason: bind(`missing value: ${column}`),
    }));
    checks.push(...occKeyChecks((text) => bind(text), raw('expiry'), raw('strike')));
  } else {
    // The underlying's rows carry its ticker; every other row is a contract, its symbol judged by validation.
    fields = [{ ...field('symbol', 'symbol_value', () => symbol), required: true }, ...common];
    underlyingRow = `coalesce(${symbol} = ${bind(first.ticker ?? '')}, false)`;
    checks = [];
  }
  const session = `CAST(${bind(date)} AS DATE)`;
  const stamp = `timezone(${bind(MARKET_ZONE)}, CAST(${session} + 1 AS TIMESTAMP))`;

  const quotes = stagingTable(options, 'option_quotes');
  const scratch = Object.entries(SCRATCH);
  for (const [name, type] of scratch) await sql.run(`ALTER TABLE ${q(quotes)} ADD COLUMN ${q(name)} ${type}`);
  try {
    const read = await readCsvInto(sql, source, {
      target: quotes,
      fields,
      checks,
      params,
      outputs: {
        underlying:
          layout.kind === 'keys'
            ? bind(underlyingOfRoot(root!))
            : 'CASE WHEN length(r.symbol) > 15 THEN left(r.symbol, length(r.symbol) - 15) END',
        option_symbol: layout.kind === 'keys' ? 'NULL' : 'r.symbol',
        session_date: session,
        quote_time: stamp,
        volume: 'r.volume',
        volume_time: stamp,
        underlying_price: `CAST(${bind(spot)} AS DECIMAL(14,4))`,
        ...Object.fromEntries(
          GREEKS.map((greek) => {
            const divisor = divisors[greek];
            return [greek, divisor === null ? 'NULL' : greekSql(dividedSql(`r.${greek}`, divisor))];
          }),
        ),
        ...(layout.kind === 'keys'
          ? { _root: bind(root!), _expiration: 'r.expiration', _side: 'r.side', _strike: 'r.strike' }
          : {}),
        _oi: 'r.oi',
        _underlying_row: underlyingRow,
      },
    });
    const underlyingRows = await sql.value<number>(
      `SELECT count(*) FROM ${q(quotes)} WHERE _underlying_row AND _reject IS NULL`,
    );
    await sql.run(`DELETE FROM ${q(quotes)} WHERE _underlying_row AND _reject IS NULL`);
    if (layout.kind === 'keys') await writeOccSymbols(sql, quotes);
    else await remapColumn(sql, quotes, 'underlying', underlyingOfRoot);
    await insertOpenInterest(sql, stagingTable(options, 'open_interest'), quotes, '_oi', 'previous');
    // The underlying's bar is not a quote: it is counted as read, but no row is staged for it.
    return {
      rows: read.records + read.malformed.length - underlyingRows,
      rejects: read.malformed,
      greeksUnits: describeGreekUnits(divisors, units, byFormat),
    };
  } finally {
    for (const [name] of scratch) await sql.run(`ALTER TABLE ${q(quotes)} DROP COLUMN IF EXISTS ${q(name)}`);
  }
}

/** SQL reading Lean's `right` (C or P; Call and Put also accepted) as 'call' or 'put'. */
function sideSql(raw: string): string {
  return `CASE upper(trim(${raw})) WHEN 'C' THEN 'call' WHEN 'CALL' THEN 'call' WHEN 'P' THEN 'put' WHEN 'PUT' THEN 'put' END`;
}

/** SQL reading Lean's `expiry` (`yyyyMMdd`) as a DATE. */
function expirySql(raw: string): string {
  return `CAST(try_strptime(trim(${raw}), '%Y%m%d') AS DATE)`;
}

/**
 * The underlying's bar on the first data line: its close, and (symbol layout) its ticker. Its keys are
 * empty (key layout), or its `symbol_value` is no OSI ticker (symbol layout).
 */
async function underlyingBar(
  sql: SqlSession,
  layout: Layout,
): Promise<{ close: number; ticker: string | undefined }> {
  const { raw, source } = layout;
  const first = csvRecordsSql(source, 1);
  const test =
    layout.kind === 'keys'
      ? `${raw('expiry')} IS NULL AND ${raw('strike')} IS NULL AND ${raw('right')} IS NULL`
      : `NOT regexp_full_match(upper(replace(${raw('symbol_value')}, ' ', '')), '.*[0-9]{6}[CP][0-9]{8}')`;
  const rows = await sql.all<{ underlying: boolean | null; close: number | null; ticker: string | null }>(
    `SELECT ${test} AS underlying, TRY_CAST(${raw('close')} AS DOUBLE) AS close,
            ${layout.kind === 'keys' ? 'NULL' : `upper(trim(${raw('symbol_value')}))`} AS ticker
     FROM (${first.sql})`,
    first.params,
  );
  const row = rows[0];
  const line = source.headerLine + 1;
  if (row === undefined || row.underlying !== true) {
    throw new IngestError(
      source.file,
      line,
      layout.kind === 'keys'
        ? 'not the underlying’s bar: Lean universe files start with it (expiry, strike and right empty)'
        : 'not the underlying’s bar: Lean universe files start with it (its ticker, not an option’s)',
    );
  }
  if (row.close === null || !(row.close > 0)) {
    throw new IngestError(source.file, line, 'the underlying’s bar has no close price');
  }
  return { close: row.close, ticker: row.ticker ?? undefined };
}

/** QuantConnect Lean option universe files. */
export const leanOptionUniverseFormat: IngestFormat = {
  name: 'lean-option-universe',
  readsCsv: true,
  description:
    'QuantConnect Lean daily option universe CSV (date from the file name; known 00:00 ET after the session)',
  stage: (sql, file, options: UniverseStageOptions) => stage(sql, file, options),
};
