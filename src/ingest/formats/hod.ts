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
 * NULL. L3 `IVMean` is the IV; `IVBid`, `IVAsk`, `Flags` and `AKA` are not kept.
 *
 * Greek units differ between files of one layout, so they are established per file (`../greek-units.ts`):
 * detected against Black–Scholes on the file's near-money rows unless `--greeks-units` states them, and the
 * file is refused when a Greek's units cannot be established. The SPXW L2 sample prints gamma per $1,
 * theta per year and vega per 1.00 of volatility (an ATM call 29 days out: theta −139.5, vega 299.6); the
 * A L3 sample prints the store's units (gamma per $1, theta per day, vega per volatility point); other
 * vintages print gamma and theta ×100.
 */
import { IngestError } from '../../errors.js';
import { indexRoots, underlyingOfRoot } from '../../market-time/index.js';
import { quoteIdentifier as q, quoteLiteral, type SqlSession, type SqlValue } from '../../store/sql.js';
import { insertOpenInterest, SESSIONS_TABLE } from '../calendar-table.js';
import {
  type CsvField,
  type CsvSource,
  columnIndex,
  csvRecordsSql,
  decimalSql,
  greekSql,
  integerSql,
  occPartsSql,
  rawColumn,
  readCsvHeader,
  readCsvInto,
  readCsvTyped,
} from '../csv-source.js';
import {
  describeGreekUnits,
  dividedSql,
  establishGreekUnits,
  GREEKS,
  type GreekDivisors,
  parseGreeksUnits,
} from '../greek-units.js';
import { anyRowRefused } from '../validate.js';
import { type IngestFormat, type StageOptions, type StageResult, stagingTable } from './types.js';

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

/** The largest whole number a DOUBLE holds exactly: counts read as DOUBLE are exact below it. */
const EXACT_DOUBLE_INTEGER = 2 ** 53;

/**
 * The last steps of both reads of a file's quotes: one pass stamps the end-of-day instants and maps the
 * underlying (rows off the calendar are refused later), then the open interest the rows print is derived:
 * settled from the session before D, and in L3 also from D (`T1OpenInterest`).
 */
async function stampAndDeriveOpenInterest(
  sql: SqlSession,
  quotes: string,
  options: StageOptions,
  hasNext: boolean,
): Promise<void> {
  await sql.run(
    `UPDATE ${q(quotes)} t SET quote_time = s.eod_at, volume_time = s.eod_at,
       underlying = ${underlyingOfRootSql(`t.${q('underlying')}`)}
       FROM ${q(SESSIONS_TABLE)} s WHERE s.session_date = t.session_date`,
  );
  await deriveOpenInterest(sql, quotes, options, hasNext);
}

/** The open interest the quote rows print (scratch columns `_oi`, `_oi_next`), into the OI table. */
async function deriveOpenInterest(
  sql: SqlSession,
  quotes: string,
  options: StageOptions,
  hasNext: boolean,
): Promise<void> {
  const openInterest = stagingTable(options, 'open_interest');
  await insertOpenInterest(sql, openInterest, quotes, '_oi', 'previous');
  if (hasNext) await insertOpenInterest(sql, openInterest, quotes, '_oi_next', 'same');
}

/** SQL mapping an underlying column holding option roots to the underlyings (`underlyingOfRoot`). */
export function underlyingOfRootSql(column: string): string {
  const cases = indexRoots()
    .filter((root) => underlyingOfRoot(root) !== root)
    .map((root) => `WHEN ${quoteLiteral(root)} THEN ${quoteLiteral(underlyingOfRoot(root))}`);
  return cases.length === 0 ? column : `CASE ${column} ${cases.join(' ')} ELSE ${column} END`;
}

/** The types the clean read gives each value (see `readCsvTyped`: none accepts what the careful read refuses). */
const CLEAN_TYPES: Readonly<Record<string, string>> = {
  date: 'DATE',
  expiration: 'DATE',
  strike: 'DECIMAL(12,3)',
  underlyingPrice: 'DECIMAL(14,4)',
  last: 'DECIMAL(12,2)',
  bid: 'DECIMAL(12,2)',
  ask: 'DECIMAL(12,2)',
  // DuckDB reads `1.5` as the BIGINT 2, so counts are read as DOUBLE and must be whole.
  volume: 'DOUBLE',
  oi: 'DOUBLE',
  oiNext: 'DOUBLE',
  iv: 'DOUBLE',
  delta: 'DOUBLE',
  gamma: 'DOUBLE',
  theta: 'DOUBLE',
  vega: 'DOUBLE',
};

/** Scratch columns of the clean read: the values that must agree with the OCC symbol, judged per contract. */
const AGREEMENT_COLUMNS = { _expiration: 'DATE', _type: 'VARCHAR', _strike: 'DECIMAL(12,3)' } as const;

/**
 * Stages a file that needs none of the careful read's repairs or reasons, in one typed read: no value
 * missing, malformed or of the wrong type, no text to trim or upper-case, `type` exactly call or put, the
 * columns agreeing with each OCC symbol, and no row that validation refuses. It only stands when nothing
 * is refused, so on several threads it need not keep the file's order: it stamps each row's instants and
 * underlying as it reads and leaves `_line` NULL. Whatever falls short (checked per contract and per
 * distinct value, not per row) leaves the tables empty and returns undefined, and the careful read stages
 * the file instead, in order, with the line and reason of every problem; both give the same rows for a
 * clean file (but for `_line`).
 */
async function stageClean(
  sql: SqlSession,
  source: CsvSource,
  layout: Layout,
  positions: Readonly<Record<string, number>>,
  divisors: GreekDivisors,
  options: StageOptions,
): Promise<StageResult | undefined> {
  const c = (key: string): string => rawColumn(positions[key]!);
  const types: Record<string, string> = {};
  for (const [key, type] of Object.entries(CLEAN_TYPES)) {
    if (positions[key] !== undefined) types[`c${positions[key] + 1}`] = type;
  }
  const hasNext = layout.columns['oiNext'] !== undefined;
  const count = (key: string): string =>
    `CAST(CASE WHEN ${c(key)} = trunc(${c(key)}) AND abs(${c(key)}) < ${EXACT_DOUBLE_INTEGER} THEN ${c(key)} END AS BIGINT)`;
  const notWhole = (key: string): string =>
    `${c(key)} <> trunc(${c(key)}) OR abs(${c(key)}) >= ${EXACT_DOUBLE_INTEGER}`;
  const required = ['underlying', 'symbol', 'date', 'expiration', 'type', 'strike'].map(
    (key) => `${c(key)} IS NULL`,
  );
  const counts = hasNext ? ['volume', 'oi', 'oiNext'] : ['volume', 'oi'];
  const quotes = stagingTable(options, 'option_quotes');
  const scratch: Record<string, string> = {
    _oi: 'BIGINT',
    ...(hasNext ? { _oi_next: 'BIGINT' } : {}),
    ...AGREEMENT_COLUMNS,
  };
  await sql.run(
    Object.entries(scratch)
      .map(([column, type]) => `ALTER TABLE ${q(quotes)} ADD COLUMN ${q(column)} ${type}`)
      .join('; '),
  );
  // On one thread DuckDB inserts in the file's order anyway, so the rows keep their lines for free; on
  // more, the read inserts unordered (a quarter faster on a large file), stamping as it reads, and leaves
  // line numbers to the careful read, which names every line anything is refused on.
  const parallel = Number(await sql.value("SELECT current_setting('threads')")) > 1;
  const stamped = parallel
    ? {
        underlying: underlyingOfRootSql(c('underlying')),
        quote_time: 's.eod_at',
        volume_time: 's.eod_at',
      }
    : { underlying: c('underlying') };
  let staged = false;
  try {
    const records = await readCsvTyped(sql, source, {
      target: quotes,
      types,
      dateFormat: '%m/%d/%Y',
      ...(parallel
        ? {
            unordered: true,
            // A row dated on a day that is not a session gets no instants, and validation refuses it.
            joins: `LEFT JOIN ${q(SESSIONS_TABLE)} s ON s.session_date = ${c('date')}`,
          }
        : {}),
      outputs: {
        ...stamped,
        option_symbol: c('symbol'),
        session_date: c('date'),
        bid: c('bid'),
        ask: c('ask'),
        last: `CASE WHEN ${c('last')} = 0 AND coalesce(${count('volume')}, 0) = 0 THEN NULL ELSE ${c('last')} END`,
        volume: count('volume'),
        underlying_price: c('underlyingPrice'),
        ...vendorColumns(divisors, c),
        _oi: count('oi'),
        ...(hasNext ? { _oi_next: count('oiNext') } : {}),
        _expiration: c('expiration'),
        _type: c('type'),
        _strike: c('strike'),
        // Only marks the row for the careful read, which gives the reason; it never reaches validation.
        _reject: `CASE WHEN ${[...required, ...counts.map(notWhole)].join(' OR ')} THEN 'needs the careful read' END`,
      },
    });
    if (records === undefined || !(await isClean(sql, quotes))) return undefined;
    if (parallel) await deriveOpenInterest(sql, quotes, options, hasNext);
    else await stampAndDeriveOpenInterest(sql, quotes, options, hasNext);
    if (await anyRowRefused(sql, options.tables, options)) return undefined;
    staged = true;
    return { rows: records, rejects: [], validated: true, ...uniqueOpenInterest(hasNext) };
  } finally {
    if (!staged) {
      await sql.run(`DELETE FROM ${q(quotes)}; DELETE FROM ${q(stagingTable(options, 'open_interest'))}`);
    }
    await sql.run(
      Object.keys(scratch)
        .map((column) => `ALTER TABLE ${q(quotes)} DROP COLUMN ${q(column)}`)
        .join('; '),
    );
  }
}

/**
 * Whether the clean read's rows need nothing of the careful read: no row marked, every underlying and
 * symbol already trimmed and upper-case, and per contract the columns the careful read checks against the
 * OCC symbol the same on every row and in agreement with it (a Saturday expiration may stand for the
 * Friday or Thursday before). Judged on aggregates, so that DuckDB cannot push the per-contract tests
 * down to every row.
 */
async function isClean(sql: SqlSession, quotes: string): Promise<boolean> {
  const occ = occPartsSql('option_symbol');
  const agrees = `option_symbol = upper(trim(option_symbol)) AND type IN ('call', 'put')
    AND expiration = max_expiration AND type = max_type AND strike = max_strike
    AND NOT coalesce(expiration <> ${occ.expiration}
      AND NOT (isodow(expiration) = 6 AND ${occ.expiration} BETWEEN expiration - 2 AND expiration - 1), false)
    AND NOT coalesce(type <> ${occ.side}, false)
    AND NOT coalesce(CAST(round(strike * 1000) AS BIGINT) <> ${occ.strike}, false)`;
  // The three tests are rows of a union: scalar subqueries cost more to plan.
  return sql.value<boolean>(
    `SELECT coalesce(bool_and(ok), true) FROM (
       SELECT count(*) = 0 AS ok FROM (SELECT 1 FROM ${q(quotes)} WHERE _reject IS NOT NULL LIMIT 1)
       UNION ALL SELECT bool_and(underlying = upper(trim(underlying)))
         FROM (SELECT DISTINCT underlying FROM ${q(quotes)})
       UNION ALL SELECT bool_and(coalesce(${agrees}, false)) FROM (
         SELECT option_symbol, min(_expiration) AS expiration, max(_expiration) AS max_expiration,
                min(_type) AS type, max(_type) AS max_type, min(_strike) AS strike, max(_strike) AS max_strike
         FROM ${q(quotes)} GROUP BY option_symbol))`,
  );
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
  const positions: Record<string, number> = {};
  for (const [key, column] of Object.entries(layout.columns)) {
    const position = index.get(column);
    if (position === undefined) {
      throw new IngestError(file, header.line, `missing column "${column}" in ${layout.name} header`);
    }
    raw[key] = rawColumn(position);
    label[key] = header.names[position]!;
    positions[key] = position;
  }
  const source: CsvSource = {
    file,
    columns: header.names.length,
    headerLine: header.line,
    ...(options.scan === undefined ? {} : { scan: options.scan }),
  };
  const divisors = await greekDivisors(sql, file, source, positions, options);
  const greeksUnits = describeGreekUnits(divisors, parseGreeksUnits(options.greeksUnits));
  const quick = await stageClean(sql, source, layout, positions, divisors, options);
  if (quick !== undefined) return { ...quick, greeksUnits };
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
  // so they avoid regular expressions (validation judges the symbol itself once per contract). Positions
  // count from the end, so they are read from the symbol as stored: trimmed and upper-case.
  const occ = occPartsSql(`upper(trim(${raw['symbol']!}))`);
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
        ...vendorColumns(divisors, (key) => `r.${key}`),
        _oi: 'r.oi',
        ...(hasNext ? { _oi_next: 'r.oi_next' } : {}),
      },
    });
    await stampAndDeriveOpenInterest(sql, quotes, options, hasNext);
    return {
      rows: read.records + read.malformed.length,
      rejects: read.malformed,
      greeksUnits,
      ...uniqueOpenInterest(hasNext),
    };
  } finally {
    for (const column of scratch)
      await sql.run(`ALTER TABLE ${q(quotes)} DROP COLUMN IF EXISTS ${q(column)}`);
  }
}

/** The vendor IV and Greek outputs: each value (SQL from `value`) divided into the store's units. */
function vendorColumns(divisors: GreekDivisors, value: (key: string) => string): Record<string, string> {
  return Object.fromEntries(
    GREEKS.map((greek) => {
      const divisor = divisors[greek];
      return [greek, divisor === null ? 'NULL' : greekSql(dividedSql(value(greek), divisor))];
    }),
  );
}

/**
 * The divisors of the file's IV and Greeks into the store's units (`establishGreekUnits`), from the file's
 * text: the near-money rows are judged from their raw columns, before anything is staged.
 */
async function greekDivisors(
  sql: SqlSession,
  file: string,
  source: CsvSource,
  positions: Readonly<Record<string, number>>,
  options: StageOptions,
): Promise<GreekDivisors> {
  const c = (key: string): string => rawColumn(positions[key]!);
  const number = (key: string): string => `TRY_CAST(${c(key)} AS DOUBLE)`;
  const date = (key: string): string => `CAST(try_strptime(trim(${c(key)}), ${DATE_FORMAT}) AS DATE)`;
  const { divisors } = await establishGreekUnits(
    sql,
    file,
    parseGreeksUnits(options.greeksUnits),
    (limit) => csvRecordsSql(source, limit),
    {
      side: `CASE lower(trim(${c('type')})) WHEN 'call' THEN 'call' WHEN 'put' THEN 'put' END`,
      spot: number('underlyingPrice'),
      strike: number('strike'),
      days: `date_diff('day', ${date('date')}, ${date('expiration')})`,
      price: `CASE WHEN ${number('bid')} > 0 AND ${number('ask')} >= ${number('bid')} THEN (${number('bid')} + ${number('ask')}) / 2 END`,
      iv: number('iv'),
      delta: number('delta'),
      gamma: number('gamma'),
      theta: number('theta'),
      vega: number('vega'),
    },
  );
  return divisors;
}

/**
 * L2 files print one OI figure per quote row, settled the session before the row's: with one end-of-day
 * quote per contract and session (duplicates are refused), one figure per contract and settled session.
 * L3 rows print two, and the next row repeats one of them.
 */
function uniqueOpenInterest(hasNext: boolean): Pick<StageResult, 'uniqueKeys'> {
  return hasNext ? {} : { uniqueKeys: ['open_interest'] };
}

/** HistoricalOptionData L2/L3 end-of-day option files. */
export const hodFormat: IngestFormat = {
  name: 'hod',
  readsCsv: true,
  description:
    'HistoricalOptionData.com L2/L3 end-of-day option CSV (q = 16:00 ET; OI settled the session before)',
  stage,
};
