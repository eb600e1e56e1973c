/**
 * `lean-option-universe`: QuantConnect Lean's daily option universe files (`option/usa/universes/spy/
 * 20240104.csv`): a header `#expiry,strike,right,open,high,low,close,volume,open_interest,
 * implied_volatility,delta,gamma,vega,theta,rho`, then the underlying's daily bar (expiry, strike and right
 * empty), then one row per contract. The session date D comes from the file name (its last eight digits,
 * `yyyyMMdd`); the underlying from `--symbol`, else from the folder when the path is Lean's
 * (`universes/<ticker>/<date>.csv`). The contracts' root is that symbol (SPXW files: `--symbol SPXW`, filed
 * under SPX).
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
 * underlying row's close is every row's `underlyingPrice`. IV and Greeks are vendor columns, their units
 * established per file as for `hod` (`../greek-units.ts`); `rho` is not kept.
 */
import { basename, dirname } from 'node:path';
import { IngestError } from '../../errors.js';
import { MARKET_ZONE, underlyingOfRoot } from '../../market-time/index.js';
import { quoteIdentifier as q, type SqlSession, type SqlValue } from '../../store/sql.js';
import { insertOpenInterest } from '../calendar-table.js';
import {
  type CsvField,
  type CsvSource,
  columnIndex,
  csvRecordsSql,
  decimalSql,
  greekSql,
  integerSql,
  occKeyChecks,
  rawColumn,
  readCsvHeader,
  readCsvInto,
  writeOccSymbols,
} from '../csv-source.js';
import { dividedSql, establishGreekUnits, GREEKS, parseGreeksUnits } from '../greek-units.js';
import { type IngestFormat, type StageOptions, type StageResult, stagingTable } from './index.js';

/** Options of this format beyond the shared ones: the underlying when the path does not name it. */
export type UniverseStageOptions = StageOptions & { readonly symbol?: string };

const COLUMNS = [
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
  const root = (options.symbol ?? universeSymbolOf(file))?.trim().toUpperCase();
  if (root === undefined || root === '') {
    throw new IngestError(
      file,
      undefined,
      'no underlying: give --symbol, or keep the file in Lean’s universes/<ticker>/ folder',
    );
  }
  const header = await readCsvHeader(file);
  const names = header.names.map((name) => name.replace(/^#/, '').trim().toLowerCase());
  const index = columnIndex(file, { names, line: header.line });
  const positions: Record<string, number> = {};
  for (const column of COLUMNS) {
    const position = index.get(column);
    if (position === undefined) {
      throw new IngestError(file, header.line, `missing column "${column}" in a Lean option universe header`);
    }
    positions[column] = position;
  }
  const raw = (column: (typeof COLUMNS)[number]): string => rawColumn(positions[column]!);
  const source: CsvSource = {
    file,
    columns: header.names.length,
    headerLine: header.line,
    ...(options.scan === undefined ? {} : { scan: options.scan }),
  };
  const spot = await underlyingClose(sql, source, raw, header.line + 1);
  const expirySql = (r: string): string => `CAST(try_strptime(trim(${r}), '%Y%m%d') AS DATE)`;
  const number = (column: (typeof COLUMNS)[number]): string => `TRY_CAST(${raw(column)} AS DOUBLE)`;
  const { divisors } = await establishGreekUnits(
    sql,
    file,
    parseGreeksUnits(options.greeksUnits),
    (limit) => csvRecordsSql(source, limit),
    {
      side: sideSql(raw('right')),
      spot: String(spot),
      strike: number('strike'),
      days: `date_diff('day', DATE '${date}', ${expirySql(raw('expiry'))})`,
      price: number('close'),
      iv: number('implied_volatility'),
      delta: number('delta'),
      gamma: number('gamma'),
      theta: number('theta'),
      vega: number('vega'),
    },
  );

  const params: SqlValue[] = [];
  const bind = (value: SqlValue): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const field = (
    name: string,
    column: (typeof COLUMNS)[number],
    sqlOf: (r: string) => string,
    expect: string,
  ) => ({
    name,
    sql: sqlOf(raw(column)),
    raw: raw(column),
    label: column,
    expect,
  });
  const fields: CsvField[] = [
    field('expiration', 'expiry', expirySql, 'a date like 20240119'),
    field('strike', 'strike', (r) => decimalSql(r, 'DECIMAL(12,3)'), 'a number'),
    field('side', 'right', sideSql, 'C or P'),
    field('volume', 'volume', (r) => integerSql(r), 'a whole number'),
    field('oi', 'open_interest', (r) => integerSql(r), 'a whole number'),
    ...GREEKS.map((greek) =>
      field(greek, VENDOR_COLUMN[greek], (r) => `TRY_CAST(${r} AS DOUBLE)`, 'a number'),
    ),
  ];
  // The underlying's rows leave all three keys empty; a contract row must give each.
  const keys = (['expiry', 'strike', 'right'] as const).map((column) => `${raw(column)} IS NULL`);
  const underlyingRow = `(${keys.join(' AND ')})`;
  const checks = (['expiry', 'strike', 'right'] as const).map((column) => ({
    sql: `NOT ${underlyingRow} AND ${raw(column)} IS NULL`,
    reason: bind(`missing value: ${column}`),
  }));
  checks.push(...occKeyChecks((text) => bind(text), raw('expiry'), raw('strike')));
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
        underlying: bind(underlyingOfRoot(root)),
        option_symbol: 'NULL',
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
        _root: bind(root),
        _expiration: 'r.expiration',
        _side: 'r.side',
        _strike: 'r.strike',
        _oi: 'r.oi',
        _underlying_row: underlyingRow,
      },
    });
    const underlyingRows = await sql.value<number>(
      `SELECT count(*) FROM ${q(quotes)} WHERE _underlying_row AND _reject IS NULL`,
    );
    await sql.run(`DELETE FROM ${q(quotes)} WHERE _underlying_row AND _reject IS NULL`);
    await writeOccSymbols(sql, quotes);
    await insertOpenInterest(sql, stagingTable(options, 'open_interest'), quotes, '_oi', 'previous');
    // The underlying's bar is not a quote: it is counted as read, but no row is staged for it.
    return { rows: read.records + read.malformed.length - underlyingRows, rejects: read.malformed };
  } finally {
    for (const [name] of scratch) await sql.run(`ALTER TABLE ${q(quotes)} DROP COLUMN IF EXISTS ${q(name)}`);
  }
}

/** SQL reading Lean's `right` (C or P; Call and Put also accepted) as 'call' or 'put'. */
function sideSql(raw: string): string {
  return `CASE upper(trim(${raw})) WHEN 'C' THEN 'call' WHEN 'CALL' THEN 'call' WHEN 'P' THEN 'put' WHEN 'PUT' THEN 'put' END`;
}

/** The close of the underlying's bar on the first data line (expiry, strike and right empty). */
async function underlyingClose(
  sql: SqlSession,
  source: CsvSource,
  raw: (column: (typeof COLUMNS)[number]) => string,
  line: number,
): Promise<number> {
  const first = csvRecordsSql(source, 1);
  const rows = await sql.all<{ underlying: boolean; close: number | null }>(
    `SELECT ${raw('expiry')} IS NULL AND ${raw('strike')} IS NULL AND ${raw('right')} IS NULL AS underlying,
            TRY_CAST(${raw('close')} AS DOUBLE) AS close
     FROM (${first.sql})`,
    first.params,
  );
  const row = rows[0];
  if (row === undefined || !row.underlying) {
    throw new IngestError(
      source.file,
      line,
      'not the underlying’s bar: Lean universe files start with it (expiry, strike and right empty)',
    );
  }
  if (row.close === null || !(row.close > 0)) {
    throw new IngestError(source.file, line, 'the underlying’s bar has no close price');
  }
  return row.close;
}

/** QuantConnect Lean option universe files. */
export const leanOptionUniverseFormat: IngestFormat = {
  name: 'lean-option-universe',
  readsCsv: true,
  description:
    'QuantConnect Lean daily option universe CSV (date from the file name; known 00:00 ET after the session)',
  stage: (sql, file, options: UniverseStageOptions) => stage(sql, file, options),
};
