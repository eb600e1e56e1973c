/**
 * `candles`: stock bars from a CSV file described by a mapping (which columns hold t/o/h/l/c/v and the
 * symbol, how time is written, the price scale, the resolution), with presets for QuantConnect Lean's
 * daily and minute files. Rows are read by DuckDB and normalised in one set-based pass.
 */
import { promises as fs } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import { IngestError, StoreError } from '../../errors.js';
import { quoteIdentifier, type SqlSession } from '../../store/sql.js';
import {
  type CsvField,
  type CsvHeader,
  type CsvRead,
  rawColumn,
  readCsvHeader,
  readCsvInto,
  tempTableName,
} from '../csv-source.js';
import { ET_ZONE_SQL, validateBars } from '../validate-bars.js';
import { type IngestFormat, type StageOptions, type StageResult, stagingTable } from './types.js';

/** Options of the bar formats beyond the shared ones: the symbol and resolution a file does not carry. */
export type BarStageOptions = StageOptions & {
  /** The symbol of every bar (wins over the mapping's fixed symbol and file-name pattern). */
  readonly symbol?: string;
  /** The resolution of every bar, as the candles endpoint spells it (`D`, `daily`, `1`, `minutely`). */
  readonly resolution?: string;
};

const ColumnRef = z.union([z.string().min(1), z.number().int().min(0)]);

/** The `time` readings a mapping names by keyword (any other `time` is a strptime format). */
export const TIME_KEYWORDS = [
  'epoch-seconds',
  'epoch-ms',
  'iso',
  'ms-since-midnight',
  'spreadsheet',
] as const;

/**
 * A `candles` mapping. `columns` name header fields or give 0-based positions. `time` is one of
 * `epoch-seconds`, `epoch-ms`, `iso` (with an offset, or a bare `YYYY-MM-DD`), `ms-since-midnight` (ET wall
 * time; the date comes from `dateFromFileName`), `spreadsheet` (days since 1899-12-30, ET wall time), or a
 * strptime format read as ET wall time (`%Y%m%d %H:%M`, `%Y-%m-%d`). File-name patterns are
 * case-insensitive regular expressions whose first group is taken.
 */
export const CandlesMappingSchema = z
  .strictObject({
    preset: z.string().optional(),
    header: z.boolean().default(true),
    delimiter: z.string().length(1).default(','),
    columns: z.strictObject({
      t: ColumnRef,
      o: ColumnRef,
      h: ColumnRef,
      l: ColumnRef,
      c: ColumnRef,
      v: ColumnRef,
      symbol: ColumnRef.optional(),
    }),
    symbol: z.string().min(1).optional(),
    symbolFromFileName: z.string().min(1).optional(),
    time: z
      .string()
      .refine((time) => (TIME_KEYWORDS as readonly string[]).includes(time) || time.includes('%'), {
        message: `expected ${TIME_KEYWORDS.join(', ')} or a strptime format`,
      }),
    dateFromFileName: z.string().min(1).optional(),
    priceScale: z.number().positive().default(1),
    resolution: z.enum(['D', '1']),
    regularHoursOnly: z.boolean().default(false),
  })
  .superRefine((mapping, context) => {
    for (const key of ['symbolFromFileName', 'dateFromFileName'] as const) {
      const pattern = mapping[key];
      if (pattern !== undefined && !isRegExp(pattern)) {
        context.addIssue({ code: 'custom', path: [key], message: `not a regular expression: ${pattern}` });
      }
    }
    if (mapping.time === 'ms-since-midnight' && mapping.dateFromFileName === undefined) {
      context.addIssue({ code: 'custom', path: ['dateFromFileName'], message: 'ms-since-midnight needs it' });
    }
  });

/** A validated `candles` mapping. */
export type CandlesMapping = z.output<typeof CandlesMappingSchema>;

/**
 * The built-in mappings: Lean daily (`lean_daily_spy_…csv`, `spy.csv`) and minute
 * (`20131004_spy_minute_trade.csv`) files. Lean minute files hold 04:00–20:00 ET; every bar is kept, and
 * the candles endpoint's `extended` parameter decides whether pre- and post-market bars are answered.
 */
export const CANDLE_PRESETS = {
  lean: {
    header: false,
    columns: { t: 0, o: 1, h: 2, l: 3, c: 4, v: 5 },
    symbolFromFileName: '^(?:lean_daily_)?([a-z0-9.]+?)(?:_|\\.csv$)',
    time: '%Y%m%d %H:%M',
    priceScale: 10_000,
    resolution: 'D',
  },
  'lean-minute': {
    header: false,
    columns: { t: 0, o: 1, h: 2, l: 3, c: 4, v: 5 },
    symbolFromFileName: '^\\d{8}_([a-z0-9.]+)_minute',
    dateFromFileName: '^(\\d{8})_',
    time: 'ms-since-midnight',
    priceScale: 10_000,
    resolution: '1',
  },
} as const satisfies Record<string, z.input<typeof CandlesMappingSchema>>;

/** A preset name of `CANDLE_PRESETS`. */
export type CandlePreset = keyof typeof CANDLE_PRESETS;

function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern, 'i');
    return true;
  } catch {
    return false;
  }
}

/**
 * Validates a mapping object; a `preset` key starts from that preset and the other keys override it.
 * Throws an `IngestError` naming `source` and the offending keys.
 */
export function parseCandlesMapping(value: unknown, source = 'mapping'): CandlesMapping {
  let input = value;
  if (typeof value === 'object' && value !== null && 'preset' in value) {
    const preset = (value as { preset: unknown }).preset;
    if (typeof preset !== 'string' || !Object.hasOwn(CANDLE_PRESETS, preset)) {
      throw new IngestError(source, undefined, `unknown preset ${JSON.stringify(preset)} (${presetNames()})`);
    }
    input = { ...CANDLE_PRESETS[preset as CandlePreset], ...value };
  }
  const parsed = CandlesMappingSchema.safeParse(input);
  if (!parsed.success) {
    throw new IngestError(source, undefined, `invalid candles mapping: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

function presetNames(): string {
  return Object.keys(CANDLE_PRESETS).join(', ');
}

/**
 * The mapping for `file` from the `mapping` option: a preset name, inline JSON, or a JSON file path. With
 * no option, Lean file names pick their preset; anything else needs a mapping.
 */
export async function loadCandlesMapping(mapping: string | undefined, file: string): Promise<CandlesMapping> {
  if (mapping === undefined) {
    const name = basename(file);
    if (/^\d{8}_[a-z0-9.]+_minute_trade\.csv$/i.test(name))
      return parseCandlesMapping({ preset: 'lean-minute' });
    if (/^lean_daily_/i.test(name)) return parseCandlesMapping({ preset: 'lean' });
    throw new IngestError(
      file,
      undefined,
      `candles needs a mapping: a preset (${presetNames()}) or a JSON file`,
    );
  }
  if (Object.hasOwn(CANDLE_PRESETS, mapping)) return parseCandlesMapping({ preset: mapping });
  let text = mapping;
  let source = 'mapping';
  if (!mapping.trimStart().startsWith('{')) {
    source = mapping;
    try {
      text = await fs.readFile(mapping, 'utf8');
    } catch (cause) {
      throw new IngestError(mapping, undefined, `cannot read the mapping: ${(cause as Error).message}`, {
        cause,
      });
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new IngestError(source, undefined, `mapping is not JSON: ${(cause as Error).message}`, { cause });
  }
  return parseCandlesMapping(json, source);
}

/** The first group of a case-insensitive `pattern` matched against a file's base name, or undefined. */
export function matchFileName(file: string, pattern: string): string | undefined {
  return new RegExp(pattern, 'i').exec(basename(file))?.[1];
}

/** How the text fields of a raw bar table are turned into canonical bars. */
export type BarReading = {
  readonly time: string;
  /** `YYYY-MM-DD`, the date of `ms-since-midnight` times. */
  readonly date?: string;
  readonly priceScale: number;
  readonly resolution: 'D' | '1';
  readonly regularHoursOnly: boolean;
};

/** `D` or `1` for the candle resolutions the store keeps; undefined for the others (5, H, W, …). */
export function storedResolution(resolution: string): 'D' | '1' | undefined {
  const text = resolution.trim().toLowerCase();
  if (text === 'd' || text === '1d' || text === 'daily') return 'D';
  if (text === '1' || text === 'minutely') return '1';
  return undefined;
}

/** SQL that reads the instant of text column `x` written as `time` (a TIMESTAMPTZ, NULL when unreadable). */
function instantSql(time: string): string {
  const x = 'trim(t)';
  const number = `TRY_CAST(${x} AS DOUBLE)`;
  switch (time) {
    case 'epoch-seconds':
      return `to_timestamp(CASE WHEN abs(${number}) < 1e11 THEN ${number} END)`;
    case 'epoch-ms':
      return `to_timestamp(CASE WHEN abs(${number}) < 1e14 THEN ${number} / 1000 END)`;
    case 'spreadsheet':
      return `timezone(${ET_ZONE_SQL}, TIMESTAMP '1899-12-30 00:00:00' + to_microseconds(CASE WHEN ${number} > 0 AND ${number} < 1e6 THEN CAST(round(${number} * 86400) * 1000000 AS BIGINT) END))`;
    case 'ms-since-midnight': {
      const ms = `TRY_CAST(${x} AS BIGINT)`;
      return `timezone(${ET_ZONE_SQL}, CAST(CAST($date AS DATE) AS TIMESTAMP) + to_milliseconds(CASE WHEN ${ms} BETWEEN 0 AND 86399999 THEN ${ms} END))`;
    }
    case 'iso':
      return `CASE
        WHEN regexp_full_match(${x}, '\\d{4}-\\d{2}-\\d{2}') THEN timezone(${ET_ZONE_SQL}, CAST(TRY_CAST(${x} AS DATE) AS TIMESTAMP))
        WHEN regexp_matches(${x}, '\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?\\s*(Z|[+-]\\d{2}(:?\\d{2})?)$') THEN TRY_CAST(${x} AS TIMESTAMPTZ)
      END`;
    default:
      return /%z/i.test(time)
        ? `try_strptime(${x}, $format)`
        : `timezone(${ET_ZONE_SQL}, try_strptime(${x}, $format))`;
  }
}

/**
 * Creates temp table `typed` (bar columns, `_line`, `_reject`) from `sourceSql`, a query with columns
 * `_line, symbol, t, o, h, l, c, v, _reject` (text, `_reject` a problem already found or NULL). Unreadable
 * fields become a reject naming the field and its text. Returns the number of rows.
 */
export async function createTypedBars(
  sql: SqlSession,
  typed: string,
  sourceSql: string,
  params: Record<string, string | number | boolean | null>,
  reading: BarReading,
): Promise<number> {
  const price = (name: string) => `TRY_CAST(TRY_CAST(trim(${name}) AS DOUBLE) / $scale AS DECIMAL(14,4))`;
  const volume = `TRY_CAST(trim(v) AS DOUBLE)`;
  const problem = (field: string, name: string, expect: string) =>
    `WHEN ${name} IS NULL THEN CASE WHEN ${name}_text IS NULL OR trim(${name}_text) = '' THEN 'missing value: ${field}'
       ELSE 'wrong type: ${field} "' || ${name}_text || '" is not ' || ${expect} END`;
  const isKeyword = (TIME_KEYWORDS as readonly string[]).includes(reading.time);
  const expectTime = isKeyword ? `'a time (${reading.time})'` : `'a time like ' || $format`;
  const allParams: Record<string, string | number | boolean | null> = {
    ...params,
    scale: reading.priceScale,
    resolution: reading.resolution,
  };
  if (reading.time === 'ms-since-midnight') allParams['date'] = reading.date ?? null;
  else if (!isKeyword) allParams['format'] = reading.time;
  await sql.run(
    `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(typed)} AS
     SELECT symbol, CAST($resolution AS VARCHAR) AS resolution, session_date,
            CASE WHEN $resolution = 'D' THEN timezone(${ET_ZONE_SQL}, CAST(session_date AS TIMESTAMP)) ELSE ts END AS t,
            o, h, l, c, v, _line,
            CASE WHEN source_reject IS NOT NULL THEN source_reject
              WHEN symbol IS NULL OR symbol = '' THEN 'missing value: symbol'
              ${problem('time', 'ts', expectTime)}
              ${problem('open', 'o', "'a price'")}
              ${problem('high', 'h', "'a price'")}
              ${problem('low', 'l', "'a price'")}
              ${problem('close', 'c', "'a price'")}
              ${problem('volume', 'v', "'a whole number'")}
            END AS _reject
     FROM (
       SELECT *, CAST(timezone(${ET_ZONE_SQL}, ts) AS DATE) AS session_date
       FROM (
         SELECT CAST(_line AS BIGINT) AS _line, upper(trim(symbol)) AS symbol,
                ${instantSql(reading.time)} AS ts, t AS ts_text,
                ${price('o')} AS o, o AS o_text, ${price('h')} AS h, h AS h_text,
                ${price('l')} AS l, l AS l_text, ${price('c')} AS c, c AS c_text,
                CASE WHEN ${volume} = floor(${volume}) AND abs(${volume}) < 9e18 THEN CAST(${volume} AS BIGINT) END AS v,
                v AS v_text, _reject AS source_reject
         FROM (${sourceSql})
       )
     )`,
    allParams,
  );
  return sql.value<number>(`SELECT count(*) FROM ${quoteIdentifier(typed)}`);
}

/**
 * Stages typed bars (see `createTypedBars`) into the `stock_bars` staging table, checking the bar rules,
 * and drops the temp table. Returns the rows read.
 */
export async function finishBars(
  sql: SqlSession,
  typed: string,
  rows: number,
  reading: BarReading,
  options: StageOptions,
): Promise<StageResult> {
  try {
    await validateBars(sql, typed, stagingTable(options, 'stock_bars'), {
      regularHoursOnly: reading.regularHoursOnly,
    });
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(typed)}`);
  }
  return { rows, rejects: [] };
}

/** A problem with a whole file: a reject when skipping invalid input, otherwise an `IngestError`. */
export function fileProblem(file: string, reason: string, options: StageOptions, line?: number): StageResult {
  if (options.skipInvalid) return { rows: 0, rejects: [{ file, line, reason }] };
  throw new IngestError(file, line, reason);
}

/** A short reason for a failed read (the first line of the message, without the SQL wrapper). */
export function readErrorReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^SQL failed: /, '').split('\n')[0]!;
}

function resolveColumn(
  ref: string | number,
  names: readonly string[] | undefined,
  count: number,
): number | string {
  if (typeof ref === 'number') {
    return ref < count ? ref : `column ${ref} is past the last column (${count - 1})`;
  }
  if (names === undefined) return `column "${ref}" named but the mapping says the file has no header`;
  const exact = names.indexOf(ref);
  if (exact >= 0) return exact;
  const loose = names.findIndex((name) => name.toLowerCase() === ref.trim().toLowerCase());
  return loose >= 0 ? loose : `no column "${ref}" (columns: ${names.join(', ')})`;
}

const BAR_FIELDS = ['t', 'o', 'h', 'l', 'c', 'v'] as const;

/** Stages the bars of one CSV `file` read with `mapping` into the `stock_bars` staging table. */
export async function stageCandles(
  sql: SqlSession,
  file: string,
  mapping: CandlesMapping,
  options: BarStageOptions = {},
): Promise<StageResult> {
  let resolution = mapping.resolution;
  if (options.resolution !== undefined) {
    const stored = storedResolution(options.resolution);
    if (stored === undefined) {
      return fileProblem(file, `resolution ${options.resolution} is not stored (only D and 1)`, options);
    }
    resolution = stored;
  }
  let date: string | undefined;
  if (mapping.time === 'ms-since-midnight') {
    const digits = matchFileName(file, mapping.dateFromFileName!)?.replaceAll('-', '');
    if (digits === undefined || !/^\d{8}$/.test(digits)) {
      return fileProblem(file, `no date in the file name (pattern ${mapping.dateFromFileName})`, options);
    }
    date = `${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.slice(6, 8)}`;
  }
  const fixedSymbol =
    options.symbol ??
    mapping.symbol ??
    (mapping.symbolFromFileName === undefined ? undefined : matchFileName(file, mapping.symbolFromFileName));
  if (mapping.columns.symbol === undefined && fixedSymbol === undefined) {
    return fileProblem(
      file,
      'no symbol: give a symbol option, a symbol column or a file-name pattern',
      options,
    );
  }

  let header: CsvHeader;
  try {
    header = await readCsvHeader(file, mapping.delimiter);
  } catch (error) {
    return fileProblem(
      file,
      error instanceof IngestError ? error.reason : `cannot read: ${readErrorReason(error)}`,
      options,
    );
  }
  const names = mapping.header ? header.names : undefined;
  const fields: CsvField[] = [];
  for (const field of [...BAR_FIELDS, 'symbol'] as const) {
    const ref = mapping.columns[field];
    if (ref === undefined) continue;
    const index = resolveColumn(ref, names, header.names.length);
    if (typeof index === 'string')
      return fileProblem(file, index, options, mapping.header ? header.line : undefined);
    fields.push({ name: field, sql: rawColumn(index) });
  }
  if (mapping.columns.symbol === undefined) fields.push({ name: 'symbol', sql: 'CAST($1 AS VARCHAR)' });

  const reading: BarReading = {
    time: mapping.time,
    ...(date === undefined ? {} : { date }),
    priceScale: mapping.priceScale,
    resolution,
    regularHoursOnly: mapping.regularHoursOnly,
  };
  const raw = tempTableName('candles_raw');
  const typed = tempTableName('candles');
  let read: CsvRead;
  let rows: number;
  try {
    await sql.run(
      `CREATE TEMP TABLE ${quoteIdentifier(raw)} (symbol VARCHAR, t VARCHAR, o VARCHAR, h VARCHAR, l VARCHAR, c VARCHAR, v VARCHAR, _line BIGINT, _reject VARCHAR)`,
    );
    read = await readCsvInto(
      sql,
      {
        file,
        columns: header.names.length,
        headerLine: mapping.header ? header.line : 0,
        delimiter: mapping.delimiter,
        ...(options.scan === undefined ? {} : { scan: options.scan }),
      },
      {
        target: raw,
        fields,
        outputs: Object.fromEntries(fields.map((field) => [field.name, `r.${quoteIdentifier(field.name)}`])),
        params: mapping.columns.symbol === undefined ? [fixedSymbol ?? null] : [],
      },
    );
    rows = await createTypedBars(
      sql,
      typed,
      `SELECT _line, symbol, t, o, h, l, c, v, _reject FROM ${quoteIdentifier(raw)}`,
      {},
      reading,
    );
  } catch (error) {
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(typed)}`);
    if (!(error instanceof StoreError)) throw error;
    return fileProblem(file, readErrorReason(error), options);
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(raw)}`);
  }
  const result = await finishBars(sql, typed, rows, reading, options);
  return { rows: result.rows + read.malformed.length, rejects: [...read.malformed, ...result.rejects] };
}

/** The `candles` format: `--mapping` is a preset (`lean`, `lean-minute`), inline JSON or a JSON file. */
export const candlesFormat: IngestFormat = {
  name: 'candles',
  readsCsv: true,
  description: 'stock bars from CSV with a column mapping; presets lean (daily) and lean-minute',
  async stage(sql, file, options: BarStageOptions) {
    let mapping: CandlesMapping;
    try {
      mapping = await loadCandlesMapping(options.mapping, file);
    } catch (error) {
      if (error instanceof IngestError && options.skipInvalid) {
        return { rows: 0, rejects: [{ file: error.file, line: error.line, reason: error.reason }] };
      }
      throw error;
    }
    return stageCandles(sql, file, mapping, options);
  },
};
