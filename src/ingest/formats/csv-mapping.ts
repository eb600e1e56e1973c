/**
 * `csv`: any other option-chain CSV, described by a mapping (JSON, `--mapping <file>` or inline). Each
 * canonical field names a column (`"bid": "Bid"`) or a column with a factor (`"strike": {"column": "K",
 * "scale": 0.001}`); the contract is an OCC symbol column or key columns (root/underlying, expiration,
 * side with a value map, strike). Nothing in a mapping is SQL: column names become positions, formats and
 * values are bound as parameters.
 *
 * Timing conventions, stated by the mapping:
 * - `quoteTime`: a wall time (`"16:00"`, in `timeZone` on the session date), `"close"` (the session's
 *   close: 16:00 ET, 13:00 on early-close days) or `{"column", "format"}` (a strptime format; without `%z`
 *   the time is wall time in `timeZone`; `"unix"` for epoch seconds). Default `"16:00"`.
 * - `sessionDate`: a date column (`dateFormat`); without one, the ET date of the quote time.
 * - `volumeTime`: `"quote"` (volume as of the quote time, the default) or `"close"` (a full-session
 *   figure, known at the session's close).
 * - `openInterest`: a column, or `{"column", "settled": "previous" | "same"}`: `previous` (default) = the
 *   figure on the row dated D was settled from the session before D and published 09:30 ET of D; `same` =
 *   settled from D, published 09:30 ET of the next session.
 * Prices (`bid`, `ask`, `last`, `underlyingPrice`, `strike`) are divided by `priceScale` (a file in
 * 1/10000 dollars has 10000) unless the field gives its own `scale` (a factor). `lastZeroIsNoTrade` stores
 * a `last` of 0 on a row without volume as NULL. IV and Greeks beyond the store's DECIMAL(10,6)
 * (|x| ≥ 10000) are stored as NULL. A Saturday expiration becomes the session before it.
 */
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { IngestError, UsageError } from '../../errors.js';
import { MARKET_ZONE, underlyingOfRoot } from '../../market-time/index.js';
import { quoteIdentifier as q, type SqlSession, type SqlValue } from '../../store/sql.js';
import { insertOpenInterest, SESSIONS_TABLE } from '../calendar-table.js';
import {
  type CsvCheck,
  type CsvField,
  type CsvHeader,
  columnIndex,
  decimalSql,
  greekSql,
  integerSql,
  occKeyChecks,
  rawColumn,
  readCsvHeader,
  readCsvInto,
  remapColumn,
  writeOccSymbols,
} from '../csv-source.js';
import { type IngestFormat, type StageOptions, type StageResult, stagingTable } from './types.js';

const Column = z.union([
  z.string().min(1),
  z.strictObject({ column: z.string().min(1), scale: z.number().positive().optional() }),
]);

const WALL_TIME = /^([01]?\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;

/** The JSON shape of a `csv` mapping. */
export const OptionMappingSchema = z
  .strictObject({
    header: z.boolean().default(true),
    /** Column names of a headerless file, in order. */
    columns: z.array(z.string().min(1)).optional(),
    delimiter: z.string().length(1).default(','),
    dateFormat: z.string().min(1).default('%Y-%m-%d'),
    timeZone: z.string().min(1).default(MARKET_ZONE),
    priceScale: z.number().positive().default(1),
    quoteTime: z
      .union([
        z.string().regex(WALL_TIME, 'a wall time like 16:00'),
        z.literal('close'),
        z.strictObject({ column: z.string().min(1), format: z.string().min(1) }),
      ])
      .default('16:00'),
    volumeTime: z.enum(['quote', 'close']).default('quote'),
    sessionDate: Column.optional(),
    optionSymbol: Column.optional(),
    underlying: Column.optional(),
    root: Column.optional(),
    expiration: Column.optional(),
    side: z
      .union([
        Column,
        z.strictObject({ column: z.string().min(1), values: z.record(z.string(), z.enum(['call', 'put'])) }),
      ])
      .optional(),
    strike: Column.optional(),
    bid: Column.optional(),
    ask: Column.optional(),
    bidSize: Column.optional(),
    askSize: Column.optional(),
    last: Column.optional(),
    volume: Column.optional(),
    underlyingPrice: Column.optional(),
    iv: Column.optional(),
    delta: Column.optional(),
    gamma: Column.optional(),
    theta: Column.optional(),
    vega: Column.optional(),
    openInterest: z
      .union([
        Column,
        z.strictObject({
          column: z.string().min(1),
          settled: z.enum(['previous', 'same']).default('previous'),
        }),
      ])
      .optional(),
    lastZeroIsNoTrade: z.boolean().default(false),
  })
  .superRefine((m, context) => {
    const keys = m.expiration !== undefined && m.side !== undefined && m.strike !== undefined;
    if (m.optionSymbol === undefined && !(keys && (m.root !== undefined || m.underlying !== undefined))) {
      context.addIssue({
        code: 'custom',
        path: ['optionSymbol'],
        message: 'give optionSymbol, or root (or underlying), expiration, side and strike',
      });
    }
    if (m.sessionDate === undefined && typeof m.quoteTime !== 'object') {
      context.addIssue({
        code: 'custom',
        path: ['sessionDate'],
        message: 'needed unless quoteTime is a column',
      });
    }
    if (!m.header && m.columns === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['columns'],
        message: 'a headerless file needs its column names',
      });
    }
  });

/** A validated `csv` mapping. */
export type OptionMapping = z.output<typeof OptionMappingSchema>;

/** Validates a mapping object; throws a `UsageError` naming `source` and the offending keys. */
export function parseOptionMapping(value: unknown, source = 'mapping'): OptionMapping {
  const parsed = OptionMappingSchema.safeParse(value);
  if (!parsed.success)
    throw new UsageError(`invalid csv mapping ${source}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The mapping of the `mapping` option: inline JSON (starting with `{`) or the path of a JSON file. */
export async function loadOptionMapping(mapping: string | undefined): Promise<OptionMapping> {
  if (mapping === undefined) throw new UsageError('format csv needs --mapping <file.json>');
  const inline = mapping.trimStart().startsWith('{');
  let text = mapping;
  if (!inline) {
    try {
      text = await fs.readFile(mapping, 'utf8');
    } catch (cause) {
      throw new UsageError(`cannot read mapping ${mapping}: ${(cause as Error).message}`, { cause });
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new UsageError(
      `mapping ${inline ? '(inline)' : mapping} is not JSON: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
  return parseOptionMapping(value, inline ? '(inline)' : mapping);
}

type ColumnSpec = z.output<typeof Column>;

const columnName = (spec: ColumnSpec): string => (typeof spec === 'string' ? spec : spec.column);
const scaleOf = (spec: ColumnSpec): number | undefined => (typeof spec === 'string' ? undefined : spec.scale);

/** Scratch columns added to the file's quotes table while it is staged. */
const SCRATCH = {
  _root: 'VARCHAR',
  _expiration: 'DATE',
  _side: 'VARCHAR',
  _strike: 'DECIMAL(12,3)',
  _oi: 'BIGINT',
};

async function stage(sql: SqlSession, file: string, options: StageOptions): Promise<StageResult> {
  const mapping = await loadOptionMapping(options.mapping);
  let header: CsvHeader;
  if (mapping.header) header = await readCsvHeader(file, mapping.delimiter);
  else header = { names: mapping.columns ?? [], line: 0 };
  const index = columnIndex(file, header);
  const params: SqlValue[] = [];
  const bind = (value: SqlValue): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const rawOf = (spec: ColumnSpec): string => {
    const position = index.get(columnName(spec));
    if (position === undefined) {
      throw new IngestError(file, header.line || undefined, `no column "${columnName(spec)}" in the file`);
    }
    return rawColumn(position);
  };
  const fields: CsvField[] = [];
  const add = (
    name: string,
    spec: ColumnSpec | undefined,
    sqlOf: (raw: string) => string,
    extra: Partial<CsvField> = {},
  ): void => {
    if (spec === undefined) return;
    const raw = rawOf(spec);
    fields.push({ name, sql: sqlOf(raw), raw, label: columnName(spec), ...extra });
  };
  const number = 'a number';
  const count = 'a whole number';
  const dateExpect = `a date in the format ${mapping.dateFormat}`;
  let dateFormat: string | undefined;
  const dateSql = (raw: string): string => {
    dateFormat ??= bind(mapping.dateFormat);
    return `CAST(try_strptime(${raw}, ${dateFormat}) AS DATE)`;
  };
  const scaled = (spec: ColumnSpec, price: boolean): string | undefined => {
    const factor = scaleOf(spec) ?? (price && mapping.priceScale !== 1 ? 1 / mapping.priceScale : undefined);
    return factor === undefined ? undefined : bind(factor);
  };
  const price = (
    name: string,
    spec: ColumnSpec | undefined,
    type = 'DECIMAL(12,2)',
    required = false,
  ): void => {
    if (spec === undefined) return;
    add(name, spec, (r) => decimalSql(r, type, scaled(spec, true)), { expect: number, required });
  };
  const whole = (name: string, spec: ColumnSpec | undefined, type = 'BIGINT'): void => {
    if (spec === undefined) return;
    const factor = scaled(spec, false);
    add(
      name,
      spec,
      (r) =>
        factor === undefined
          ? integerSql(r, type)
          : integerSql(`(TRY_CAST(${r} AS DOUBLE) * ${factor})`, type),
      {
        expect: count,
      },
    );
  };
  const greek = (name: string, spec: ColumnSpec | undefined): void => {
    if (spec === undefined) return;
    const factor = scaled(spec, false);
    add(name, spec, (r) => `TRY_CAST(${r} AS DOUBLE)${factor === undefined ? '' : ` * ${factor}`}`, {
      expect: number,
    });
  };

  if (mapping.optionSymbol !== undefined) {
    add('symbol', mapping.optionSymbol, (r) => `upper(trim(${r}))`, { required: true });
  } else {
    add('root', mapping.root ?? mapping.underlying, (r) => `upper(trim(${r}))`, { required: true });
    add('expiration', mapping.expiration, dateSql, { expect: dateExpect, required: true });
    price('strike', mapping.strike, 'DECIMAL(12,3)', true);
    const side = mapping.side!;
    if (typeof side === 'object' && 'values' in side) {
      const cases = Object.entries(side.values).map(
        ([text, value]) => `WHEN ${bind(text)} THEN '${value === 'call' ? 'call' : 'put'}'`,
      );
      add('side', side.column, (r) => `CASE trim(${r}) ${cases.join(' ')} END`, {
        expect: `one of ${Object.keys(side.values).join(', ')}`,
        required: true,
      });
    } else {
      add(
        'side',
        side,
        (r) =>
          `CASE lower(trim(${r})) WHEN 'c' THEN 'call' WHEN 'call' THEN 'call' WHEN 'p' THEN 'put' WHEN 'put' THEN 'put' END`,
        {
          expect: 'call or put',
          required: true,
        },
      );
    }
  }
  if (mapping.underlying !== undefined)
    add('underlying', mapping.underlying, (r) => `upper(trim(${r}))`, { required: true });
  // Bound on first use: DuckDB refuses a statement with a parameter it does not use (`quoteTime: "close"`
  // and a zoned or unix quote-time column need no zone).
  let zone: string | undefined;
  const timeZone = (): string => {
    zone ??= bind(mapping.timeZone);
    return zone;
  };
  const quoteTime = mapping.quoteTime;
  if (typeof quoteTime === 'object') {
    const sqlOf =
      quoteTime.format === 'unix'
        ? (r: string) => `to_timestamp(TRY_CAST(${r} AS DOUBLE))`
        : /%[zZ]/.test(quoteTime.format)
          ? (r: string) => `CAST(try_strptime(${r}, ${bind(quoteTime.format)}) AS TIMESTAMPTZ)`
          : (r: string) => `timezone(${timeZone()}, try_strptime(${r}, ${bind(quoteTime.format)}))`;
    add('quote_time', quoteTime.column, sqlOf, {
      expect: `a time in the format ${quoteTime.format}`,
      required: true,
    });
  }
  if (mapping.sessionDate !== undefined) {
    add('session_date', mapping.sessionDate, dateSql, { expect: dateExpect, required: true });
  }
  price('bid', mapping.bid);
  price('ask', mapping.ask);
  price('last', mapping.last);
  price('underlying_price', mapping.underlyingPrice, 'DECIMAL(14,4)');
  whole('bid_size', mapping.bidSize, 'INTEGER');
  whole('ask_size', mapping.askSize, 'INTEGER');
  whole('volume', mapping.volume);
  for (const name of ['iv', 'delta', 'gamma', 'theta', 'vega'] as const) greek(name, mapping[name]);
  const oi = mapping.openInterest;
  const oiSpec = oi === undefined ? undefined : typeof oi === 'object' && 'settled' in oi ? oi.column : oi;
  whole('oi', oiSpec);

  const has = (name: string): boolean => fields.some((f) => f.name === name);
  const checks: CsvCheck[] = has('expiration')
    ? occKeyChecks((t) => bind(t), rawOf(mapping.expiration!), rawOf(mapping.strike!))
    : [];
  const sessionSql = has('session_date')
    ? 'r.session_date'
    : `CAST(timezone(${bind(MARKET_ZONE)}, r.quote_time) AS DATE)`;
  const quoteSql =
    typeof quoteTime === 'object'
      ? 'r.quote_time'
      : quoteTime === 'close'
        ? 'NULL'
        : `timezone(${timeZone()}, ${sessionSql} + CAST(${bind(quoteTime)} AS TIME))`;
  const column = (name: string): string => (has(name) ? `r.${q(name)}` : 'NULL');
  const last =
    mapping.lastZeroIsNoTrade && has('last')
      ? `CASE WHEN r.last = 0 AND coalesce(${column('volume')}, 0) = 0 THEN NULL ELSE r.last END`
      : column('last');
  const underlyingSql = has('underlying')
    ? 'r.underlying'
    : has('root')
      ? 'r.root'
      : `CASE WHEN length(r.symbol) > 15 THEN left(r.symbol, length(r.symbol) - 15) END`;

  const quotes = stagingTable(options, 'option_quotes');
  const scratch = Object.entries(SCRATCH);
  for (const [name, type] of scratch) await sql.run(`ALTER TABLE ${q(quotes)} ADD COLUMN ${q(name)} ${type}`);
  try {
    const read = await readCsvInto(
      sql,
      {
        file,
        columns: header.names.length,
        headerLine: header.line,
        delimiter: mapping.delimiter,
        ...(options.scan === undefined ? {} : { scan: options.scan }),
      },
      {
        target: quotes,
        fields,
        checks,
        params,
        outputs: {
          underlying: underlyingSql,
          option_symbol: has('symbol') ? 'r.symbol' : 'NULL',
          session_date: sessionSql,
          quote_time: quoteSql,
          bid: column('bid'),
          ask: column('ask'),
          bid_size: column('bid_size'),
          ask_size: column('ask_size'),
          last,
          volume: column('volume'),
          volume_time: mapping.volumeTime === 'quote' ? quoteSql : 'NULL',
          underlying_price: column('underlying_price'),
          iv: has('iv') ? greekSql('r.iv') : 'NULL',
          delta: has('delta') ? greekSql('r.delta') : 'NULL',
          gamma: has('gamma') ? greekSql('r.gamma') : 'NULL',
          theta: has('theta') ? greekSql('r.theta') : 'NULL',
          vega: has('vega') ? greekSql('r.vega') : 'NULL',
          _root: has('root') ? 'r.root' : 'NULL',
          _expiration: column('expiration'),
          _side: column('side'),
          _strike: column('strike'),
          _oi: column('oi'),
        },
      },
    );
    const close = (target: string): string =>
      `UPDATE ${q(quotes)} t SET ${target} = s.close_at FROM ${q(SESSIONS_TABLE)} s WHERE s.session_date = t.session_date`;
    if (quoteTime === 'close') await sql.run(close('quote_time'));
    if (mapping.volumeTime === 'close') await sql.run(close('volume_time'));
    else if (quoteTime === 'close') await sql.run(`UPDATE ${q(quotes)} SET volume_time = quote_time`);
    if (!has('symbol')) await writeOccSymbols(sql, quotes);
    await remapColumn(sql, quotes, 'underlying', underlyingOfRoot);
    if (oi !== undefined) {
      const settled = typeof oi === 'object' && 'settled' in oi ? oi.settled : 'previous';
      await insertOpenInterest(sql, stagingTable(options, 'open_interest'), quotes, '_oi', settled);
    }
    return { rows: read.records + read.malformed.length, rejects: read.malformed };
  } finally {
    for (const [name] of scratch) await sql.run(`ALTER TABLE ${q(quotes)} DROP COLUMN IF EXISTS ${q(name)}`);
  }
}

/** Option-chain CSV files described by a mapping. */
export const csvMappingFormat: IngestFormat = {
  name: 'csv',
  readsCsv: true,
  description: 'Any option-chain CSV, described by a JSON mapping (--mapping <file>)',
  stage,
};
