/**
 * Cboe DataShop "Option EOD Summary" files (`underlying_symbol, quote_date, root, expiration, strike,
 * option_type, …, bid_1545, …, bid_eod, …, open_interest, delivery_code`), optionally with the "Calcs"
 * columns (`implied_volatility_1545`, `delta_1545`, …).
 *
 * Every source row yields TWO snapshots of its contract on session D:
 * - the 15:45 ET snapshot (12:45 ET on early-close days), from the `*_1545` columns, with the vendor IV
 *   and Greeks when the file has them;
 * - the end-of-day snapshot, from the `*_eod` columns, at the close of the contract's market: 16:15 ET
 *   (13:15 early close) for index options — an `underlying_symbol` starting with `^` (^VIX, ^SPX) or an
 *   index root — and 16:00 ET (13:00) otherwise. Its `last` is `close` when the contract traded.
 * `trade_volume` is the full session's, so both snapshots carry it with volume time v = the end-of-day
 * instant: on the 15:45 row it is look-ahead, which is exactly what storing v lets the query layer see.
 * The 15:45 row has no `last` (the file only has the session's closing trade). The underlying price of a
 * snapshot is the mid of its underlying bid/ask (NULL unless both are positive). `open_interest` is
 * start-of-day OI: settled from the previous session, published 09:30 ET of D.
 *
 * The OCC symbol is built from `root`, `expiration`, `option_type` and `strike`; a Saturday expiration
 * (pre-2015 monthlies) becomes the session before it, as `normalizeExpirationDate` says. The underlying is
 * `underlying_symbol` without its `^`, through `underlyingOfRoot`. `open`, `high`, `low`, `vwap` and
 * `delivery_code` are not kept.
 */
import { IngestError } from '../../errors.js';
import { isIndexRoot, underlyingOfRoot } from '../../market-time/index.js';
import { quoteIdentifier as q, quoteLiteral, type SqlSession, type SqlValue } from '../../store/sql.js';
import { insertOpenInterest, SESSIONS_TABLE } from '../calendar-table.js';
import {
  type CsvField,
  columnIndex,
  decimalSql,
  greekSql,
  integerSql,
  occKeyChecks,
  rawColumn,
  readCsvHeader,
  readCsvInto,
  remapColumn,
  tempTableName,
  writeOccSymbols,
} from '../csv-source.js';
import { type IngestFormat, type StageOptions, type StageResult, stagingTable } from './types.js';

const REQUIRED = [
  'underlying_symbol',
  'quote_date',
  'root',
  'expiration',
  'strike',
  'option_type',
  'close',
  'trade_volume',
  'bid_size_1545',
  'bid_1545',
  'ask_size_1545',
  'ask_1545',
  'underlying_bid_1545',
  'underlying_ask_1545',
  'bid_size_eod',
  'bid_eod',
  'ask_size_eod',
  'ask_eod',
  'underlying_bid_eod',
  'underlying_ask_eod',
  'open_interest',
] as const;

const GREEKS = ['implied_volatility_1545', 'delta_1545', 'gamma_1545', 'theta_1545', 'vega_1545'] as const;

const ISO_DATE = quoteLiteral('%Y-%m-%d');

/** Scratch columns added to the file's quotes table while it is staged. */
const SCRATCH = {
  _root: 'VARCHAR',
  _expiration: 'DATE',
  _side: 'VARCHAR',
  _strike: 'DECIMAL(12,3)',
  _oi: 'BIGINT',
};

async function stage(sql: SqlSession, file: string, options: StageOptions): Promise<StageResult> {
  const header = await readCsvHeader(file);
  const index = columnIndex(file, { names: header.names.map((n) => n.toLowerCase()), line: header.line });
  const raw: Record<string, string> = {};
  for (const column of REQUIRED) {
    const position = index.get(column);
    if (position === undefined) {
      throw new IngestError(file, header.line, `missing column "${column}" in Cboe EOD summary header`);
    }
    raw[column] = rawColumn(position);
  }
  const hasGreeks = GREEKS.every((column) => index.has(column));
  if (hasGreeks) for (const column of GREEKS) raw[column] = rawColumn(index.get(column)!);
  const params: SqlValue[] = [];
  const bind = (value: string): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const field = (
    name: string,
    column: string,
    sqlOf: (raw: string) => string,
    expect?: string,
    extra: Partial<CsvField> = {},
  ): CsvField => ({
    name,
    sql: sqlOf(raw[column]!),
    raw: raw[column]!,
    label: header.names[index.get(column)!]!,
    ...(expect === undefined ? {} : { expect }),
    ...extra,
  });
  const number = 'a number';
  const count = 'a whole number';
  const date = 'a date like 2016-06-01';
  const required = { required: true };
  const snapshot = (suffix: '1545' | 'eod'): CsvField[] => [
    field(`bid_size_${suffix}`, `bid_size_${suffix}`, (r) => integerSql(r, 'INTEGER'), count),
    field(`bid_${suffix}`, `bid_${suffix}`, (r) => decimalSql(r), number),
    field(`ask_size_${suffix}`, `ask_size_${suffix}`, (r) => integerSql(r, 'INTEGER'), count),
    field(`ask_${suffix}`, `ask_${suffix}`, (r) => decimalSql(r), number),
    field(`ubid_${suffix}`, `underlying_bid_${suffix}`, (r) => decimalSql(r, 'DECIMAL(18,6)'), number),
    field(`uask_${suffix}`, `underlying_ask_${suffix}`, (r) => decimalSql(r, 'DECIMAL(18,6)'), number),
  ];
  const fields: CsvField[] = [
    field('underlying', 'underlying_symbol', (r) => `upper(trim(${r}))`, undefined, required),
    field(
      'session_date',
      'quote_date',
      (r) => `CAST(try_strptime(${r}, ${ISO_DATE}) AS DATE)`,
      date,
      required,
    ),
    field('root', 'root', (r) => `upper(trim(${r}))`, undefined, required),
    field('expiration', 'expiration', (r) => `CAST(try_strptime(${r}, ${ISO_DATE}) AS DATE)`, date, required),
    field('strike', 'strike', (r) => decimalSql(r, 'DECIMAL(12,3)'), number, required),
    field(
      'side',
      'option_type',
      (r) => `CASE upper(trim(${r})) WHEN 'C' THEN 'call' WHEN 'P' THEN 'put' END`,
      'C or P',
      required,
    ),
    field('close', 'close', (r) => decimalSql(r), number),
    field('volume', 'trade_volume', (r) => integerSql(r), count),
    field('oi', 'open_interest', (r) => integerSql(r), count),
    ...snapshot('1545'),
    ...snapshot('eod'),
    ...(hasGreeks
      ? GREEKS.map((column) => field(column, column, (r) => `TRY_CAST(${r} AS DOUBLE)`, number))
      : []),
  ];
  const checks = occKeyChecks(bind, raw['expiration']!, raw['strike']!);
  const mid = (suffix: string): string =>
    `CASE WHEN r.ubid_${suffix} > 0 AND r.uask_${suffix} > 0 THEN (r.ubid_${suffix} + r.uask_${suffix}) / 2 END`;
  const both = (first: string, second: string): string => `unnest([${first}, ${second}])`;
  const greek = (column: string): string => (hasGreeks ? both(greekSql(`r.${column}`), 'NULL') : 'NULL');
  const quotes = stagingTable(options, 'option_quotes');
  const scratch = Object.entries(SCRATCH);
  for (const [column, type] of scratch)
    await sql.run(`ALTER TABLE ${q(quotes)} ADD COLUMN ${q(column)} ${type}`);
  try {
    const read = await readCsvInto(
      sql,
      {
        file,
        columns: header.names.length,
        headerLine: header.line,
        ...(options.scan === undefined ? {} : { scan: options.scan }),
      },
      {
        target: quotes,
        fields,
        checks,
        params,
        rowsPerRecord: 2,
        outputs: {
          underlying: 'r.underlying',
          session_date: 'r.session_date',
          bid: both('r.bid_1545', 'r.bid_eod'),
          ask: both('r.ask_1545', 'r.ask_eod'),
          bid_size: both('r.bid_size_1545', 'r.bid_size_eod'),
          ask_size: both('r.ask_size_1545', 'r.ask_size_eod'),
          last: both('NULL', 'CASE WHEN r.volume > 0 THEN r.close END'),
          volume: 'r.volume',
          underlying_price: both(mid('1545'), mid('eod')),
          iv: greek('implied_volatility_1545'),
          delta: greek('delta_1545'),
          gamma: greek('gamma_1545'),
          theta: greek('theta_1545'),
          vega: greek('vega_1545'),
          _root: 'r.root',
          _expiration: 'r.expiration',
          _side: 'r.side',
          _strike: 'r.strike',
          _oi: both('r.oi', 'NULL'),
        },
      },
    );
    await stampSnapshots(sql, quotes);
    await writeOccSymbols(sql, quotes);
    await remapColumn(sql, quotes, 'underlying', (u) => underlyingOfRoot(u.replace(/^\^/, '')));
    await insertOpenInterest(sql, stagingTable(options, 'open_interest'), quotes, '_oi', 'previous');
    return { rows: read.records + read.malformed.length, rejects: read.malformed };
  } finally {
    for (const [column] of scratch)
      await sql.run(`ALTER TABLE ${q(quotes)} DROP COLUMN IF EXISTS ${q(column)}`);
  }
}

/**
 * Sets quote and volume times: rows come in pairs (15:45, end of day) in insertion order, and an index
 * option's end of day is the 16:15 ET close. Runs before the underlying loses its `^`. The 15:45 instant
 * is the close less 900 epoch seconds: TIMESTAMPTZ − INTERVAL would go through the ICU calendar per row.
 */
async function stampSnapshots(sql: SqlSession, quotes: string): Promise<void> {
  const roots = await sql.all<{ root: string }>(
    `SELECT DISTINCT _root AS root FROM ${q(quotes)} WHERE _root IS NOT NULL`,
  );
  const indexRoots = tempTableName('cboe_index_roots');
  await sql.run(`CREATE TEMP TABLE ${q(indexRoots)} (root VARCHAR)`);
  try {
    await sql.append(indexRoots, [roots.map((r) => r.root).filter(isIndexRoot)]);
    const isIndex = `(starts_with(t.underlying, '^') OR t._root IN (SELECT root FROM ${q(indexRoots)}))`;
    const close = `CASE WHEN ${isIndex} THEN s.index_close_at ELSE s.close_at END`;
    await sql.run(
      `UPDATE ${q(quotes)} t
       SET quote_time = CASE WHEN t.rowid % 2 = 0 THEN to_timestamp(epoch(s.close_at) - 900) ELSE ${close} END,
           volume_time = ${close}
       FROM ${q(SESSIONS_TABLE)} s WHERE s.session_date = t.session_date`,
    );
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${q(indexRoots)}`);
  }
}

/** Cboe DataShop Option EOD Summary files. */
export const cboeEodFormat: IngestFormat = {
  name: 'cboe-eod',
  readsCsv: true,
  description: 'Cboe DataShop Option EOD Summary CSV (two snapshots per row: 15:45 ET and the close)',
  stage,
};
