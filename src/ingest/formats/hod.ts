/**
 * HistoricalOptionData.com end-of-day files, "L2" (`optionroot`, `quotedate`, …) and "L3" (`OptionSymbol`,
 * `DataDate`, `T1OpenInterest`, …), told apart by the header.
 *
 * Timing conventions (spec/semantics.md §3), for a row dated D:
 * - quote time q = 16:00 ET of D (an end-of-day row, also on early-close days); volume is the full
 *   session's, stamped v = q.
 * - `openinterest` (L2) / `OpenInterest` (L3) was settled from the previous session and is published at
 *   09:30 ET of D.
 * - `T1OpenInterest` (L3) was settled from D itself and is published at 09:30 ET of the next session.
 *
 * Normalisation: the OCC symbol (`optionroot` / `OptionSymbol`) names the contract; the `expiration`, `type`
 * and `strike` columns must agree with it, except that a Saturday expiration (how monthlies were printed
 * before 2015) agrees with the Friday — or Thursday, when that Friday was a holiday — that the symbol
 * carries. The underlying is `underlyingOfRoot` of the underlying column (SPXW → SPX). Bid/ask 0/0 is kept
 * ("no market"); `last` 0 with volume 0 means no trade and is stored as NULL. Vendor IV and Greeks go to
 * the vendor columns; a value the store's DECIMAL(10,6) cannot hold (|x| ≥ 10000, NaN, ±inf) is stored as
 * NULL. L3 `IVMean` is the IV; `IVBid`, `IVAsk`, `Flags` and `AKA` are not kept. L2 files print theta per
 * year and vega per 1.00 of volatility (an ATM SPXW call 22 days out: theta −501, vega 251); they are
 * divided by 365 and 100 into the service's units (per day, per volatility point), which L3 already uses.
 */
import { IngestError } from '../../errors.js';
import { underlyingOfRoot } from '../../market-time/index.js';
import { quoteIdentifier as q, quoteLiteral, type SqlSession, type SqlValue } from '../../store/sql.js';
import { insertOpenInterest, SESSIONS_TABLE } from '../calendar-table.js';
import {
  type CsvField,
  columnIndex,
  decimalSql,
  greekSql,
  integerSql,
  occPartsSql,
  rawColumn,
  readCsvHeader,
  readCsvInto,
  remapSql,
} from '../csv-source.js';
import { type IngestFormat, type StageOptions, type StageResult, stagingTable } from './index.js';

type Layout = {
  readonly name: 'L2' | 'L3';
  /** Source column (lower case) of each value; `oiNext` only in L3. */
  readonly columns: Readonly<Record<string, string>>;
};

const L2: Layout = {
  name: 'L2',
  columns: {
    underlying: 'underlying',
    underlyingPrice: 'underlying_last',
    symbol: 'optionroot',
    type: 'type',
    expiration: 'expiration',
    date: 'quotedate',
    strike: 'strike',
    last: 'last',
    bid: 'bid',
    ask: 'ask',
    volume: 'volume',
    oi: 'openinterest',
    iv: 'impliedvol',
    delta: 'delta',
    gamma: 'gamma',
    theta: 'theta',
    vega: 'vega',
  },
};

const L3: Layout = {
  name: 'L3',
  columns: {
    underlying: 'underlyingsymbol',
    underlyingPrice: 'underlyingprice',
    symbol: 'optionsymbol',
    type: 'type',
    expiration: 'expiration',
    date: 'datadate',
    strike: 'strike',
    last: 'last',
    bid: 'bid',
    ask: 'ask',
    volume: 'volume',
    oi: 'openinterest',
    oiNext: 't1openinterest',
    iv: 'ivmean',
    delta: 'delta',
    gamma: 'gamma',
    theta: 'theta',
    vega: 'vega',
  },
};

const DATE_FORMAT = quoteLiteral('%m/%d/%Y');

function layoutOf(names: ReadonlySet<string>): Layout | undefined {
  if (names.has('optionroot') && names.has('quotedate')) return L2;
  if (names.has('optionsymbol') && names.has('datadate')) return L3;
  return undefined;
}

async function stage(sql: SqlSession, file: string, options: StageOptions): Promise<StageResult> {
  const header = await readCsvHeader(file);
  const lower = { names: header.names.map((n) => n.toLowerCase()), line: header.line };
  const index = columnIndex(file, lower);
  const layout = layoutOf(new Set(lower.names));
  if (layout === undefined) {
    throw new IngestError(
      file,
      header.line,
      'not a HistoricalOptionData header (no optionroot/OptionSymbol)',
    );
  }
  const raw: Record<string, string> = {};
  const label: Record<string, string> = {};
  for (const [key, column] of Object.entries(layout.columns)) {
    const position = index.get(column);
    if (position === undefined) {
      throw new IngestError(file, header.line, `missing column "${column}" in ${layout.name} header`);
    }
    raw[key] = rawColumn(position);
    label[key] = header.names[position]!;
  }
  const field = (
    name: string,
    key: string,
    sqlOf: (raw: string) => string,
    expect?: string,
    extra: Partial<CsvField> = {},
  ): CsvField => ({
    name,
    sql: sqlOf(raw[key]!),
    raw: raw[key]!,
    label: label[key]!,
    ...(expect === undefined ? {} : { expect }),
    ...extra,
  });
  const number = 'a number';
  const count = 'a whole number';
  const date = 'a date like 01/31/2018';
  const greek = (name: string): CsvField => field(name, name, (r) => `TRY_CAST(${r} AS DOUBLE)`, number);
  const fields: CsvField[] = [
    field('underlying', 'underlying', (r) => `upper(trim(${r}))`, undefined, { required: true }),
    field('symbol', 'symbol', (r) => `upper(trim(${r}))`, undefined, { required: true }),
    field('session_date', 'date', (r) => `CAST(try_strptime(${r}, ${DATE_FORMAT}) AS DATE)`, date, {
      required: true,
    }),
    field('expiration', 'expiration', (r) => `CAST(try_strptime(${r}, ${DATE_FORMAT}) AS DATE)`, date, {
      required: true,
    }),
    field(
      'side',
      'type',
      (r) => `CASE lower(trim(${r})) WHEN 'call' THEN 'call' WHEN 'put' THEN 'put' END`,
      'call or put',
      {
        required: true,
      },
    ),
    field('strike', 'strike', (r) => decimalSql(r, 'DECIMAL(12,3)'), number, { required: true }),
    field('underlying_price', 'underlyingPrice', (r) => decimalSql(r, 'DECIMAL(14,4)'), number),
    field('last', 'last', (r) => decimalSql(r), number),
    field('bid', 'bid', (r) => decimalSql(r), number),
    field('ask', 'ask', (r) => decimalSql(r), number),
    field('volume', 'volume', (r) => integerSql(r), count),
    field('oi', 'oi', (r) => integerSql(r), count),
    ...(layout.columns['oiNext'] === undefined
      ? []
      : [field('oi_next', 'oiNext', (r) => integerSql(r), count)]),
    greek('iv'),
    greek('delta'),
    greek('gamma'),
    greek('theta'),
    greek('vega'),
  ];
  const params: SqlValue[] = [];
  const bind = (value: string): string => {
    params.push(value);
    return `$${params.length}`;
  };
  // The symbol's own expiration, side and strike, read by position: the agreement checks run on every row,
  // so they avoid regular expressions (validation judges the symbol itself once per contract).
  const occ = occPartsSql(raw['symbol']!);
  fields.push(
    { name: 'symbol_expiration', sql: occ.expiration },
    { name: 'symbol_side', sql: occ.side },
    { name: 'symbol_strike', sql: occ.strike },
  );
  const checks = [
    {
      sql: `expiration <> symbol_expiration
            AND NOT (isodow(expiration) = 6 AND symbol_expiration BETWEEN expiration - 2 AND expiration - 1)`,
      reason: `${bind(`${label['expiration']} `)} || ${raw['expiration']} || ' disagrees with OCC symbol ' || symbol`,
    },
    {
      sql: 'side <> symbol_side',
      reason: `${bind(`${label['type']} `)} || side || ' disagrees with OCC symbol ' || symbol`,
    },
    {
      sql: 'CAST(round(strike * 1000) AS BIGINT) <> symbol_strike',
      reason: `${bind(`${label['strike']} `)} || ${raw['strike']} || ' disagrees with OCC symbol ' || symbol`,
    },
  ];
  const source = { file, columns: header.names.length, headerLine: header.line };
  const quotes = stagingTable(options, 'option_quotes');
  const hasNext = layout.columns['oiNext'] !== undefined;
  // Open interest rides along in scratch columns: one INSERT cannot fill two tables, and a second read
  // of the file costs more than copying two columns.
  const scratch = hasNext ? ['_oi', '_oi_next'] : ['_oi'];
  for (const column of scratch) await sql.run(`ALTER TABLE ${q(quotes)} ADD COLUMN ${q(column)} BIGINT`);
  try {
    const read = await readCsvInto(sql, source, {
      target: quotes,
      fields,
      checks,
      params,
      outputs: {
        underlying: 'r.underlying',
        option_symbol: 'r.symbol',
        session_date: 'r.session_date',
        bid: 'r.bid',
        ask: 'r.ask',
        last: 'CASE WHEN r.last = 0 AND coalesce(r.volume, 0) = 0 THEN NULL ELSE r.last END',
        volume: 'r.volume',
        underlying_price: 'r.underlying_price',
        iv: greekSql('r.iv'),
        delta: greekSql('r.delta'),
        gamma: greekSql('r.gamma'),
        // L2 prints theta per year and vega per 1.00 of volatility; the service (and L3) per day and per point.
        theta: greekSql(hasNext ? 'r.theta' : 'r.theta / 365'),
        vega: greekSql(hasNext ? 'r.vega' : 'r.vega / 100'),
        _oi: 'r.oi',
        ...(hasNext ? { _oi_next: 'r.oi_next' } : {}),
      },
    });
    // One pass stamps the end-of-day instants and maps the underlying (rows off the calendar are refused).
    const underlying = await remapSql(sql, quotes, 'underlying', underlyingOfRoot);
    await sql.run(
      `UPDATE ${q(quotes)} t SET quote_time = s.eod_at, volume_time = s.eod_at, underlying = ${underlying.sql}
       FROM ${q(SESSIONS_TABLE)} s WHERE s.session_date = t.session_date`,
      underlying.params,
    );
    const openInterest = stagingTable(options, 'open_interest');
    await insertOpenInterest(sql, openInterest, quotes, '_oi', 'previous');
    if (hasNext) await insertOpenInterest(sql, openInterest, quotes, '_oi_next', 'same');
    return { rows: read.records + read.malformed.length, rejects: read.malformed };
  } finally {
    for (const column of scratch)
      await sql.run(`ALTER TABLE ${q(quotes)} DROP COLUMN IF EXISTS ${q(column)}`);
  }
}

/** HistoricalOptionData L2/L3 end-of-day option files. */
export const hodFormat: IngestFormat = {
  name: 'hod',
  description:
    'HistoricalOptionData.com L2/L3 end-of-day option CSV (q = 16:00 ET; OI settled the session before)',
  stage,
};
