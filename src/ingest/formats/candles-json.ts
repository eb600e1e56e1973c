/**
 * Candles from a saved response body of `/v1/stocks/candles/{resolution}/{symbol}/`. The body carries
 * neither symbol nor resolution: they come from options or from the file name. A daily body must have
 * been requested unadjusted (`adjustsplits=false&adjustdividends=false`): the store keeps raw prices and
 * the body cannot tell. `_line` is the 1-based index into the body's arrays.
 */
import { z } from 'zod';
import { quoteIdentifier, type SqlSession } from '../../store/sql.js';
import { tempTableName } from '../csv-source.js';
import { type BarReading, createTypedBars, fileProblem, finishBars, storedResolution } from './candles.js';
import type { StageOptions, StageResult } from './types.js';

/** What `stageCandlesBody` needs besides the body: where it came from, and the symbol and resolution. */
export type CandlesBodyOptions = StageOptions & {
  /** The file the body was read from (named in rejects; symbol and resolution may come from it). */
  readonly file: string;
  readonly symbol?: string;
  /** As the endpoint spells it: `D`, `daily`, `1D`, `1`, `minutely` (other resolutions are not stored). */
  readonly resolution?: string;
};

const Cell = z.union([z.number(), z.string(), z.null()]);

const CandlesBody = z.looseObject({
  s: z.string(),
  t: z.array(Cell).optional(),
  o: z.array(Cell).optional(),
  h: z.array(Cell).optional(),
  l: z.array(Cell).optional(),
  c: z.array(Cell).optional(),
  v: z.array(Cell).optional(),
});

/** Whether a parsed JSON body looks like a candles body (`t,o,h,l,c` arrays), for the `marketdata-json` router. */
export function isCandlesBody(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const record = body as Record<string, unknown>;
  return ['t', 'o', 'h', 'l', 'c'].every((key) => Array.isArray(record[key]));
}

/**
 * The resolution and symbol a file name or URL-like path states: `…/candles/D/AAPL/…`,
 * `stocks_candles_D_AAPL.json`, `candles-1-SPY-2024-01-02.json`.
 */
export function candlesTargetFromFileName(file: string): { resolution: string; symbol: string } | undefined {
  const match = /candles[/\\_-]([a-z0-9]+)[/\\_-]([a-z0-9.]+?)(?=[/\\_-]|\.json$|$)/i.exec(file);
  return match === null ? undefined : { resolution: match[1]!, symbol: match[2]!.toUpperCase() };
}

/**
 * Stages the candles of one response body (already parsed from JSON) into the `stock_bars` staging table.
 * `no_data` bodies stage nothing; an error body, arrays of different lengths or a missing symbol or
 * resolution are a problem of the whole body.
 */
export async function stageCandlesBody(
  sql: SqlSession,
  body: unknown,
  options: CandlesBodyOptions,
): Promise<StageResult> {
  const { file } = options;
  const parsed = CandlesBody.safeParse(body);
  if (!parsed.success)
    return fileProblem(file, `not a candles body: ${z.prettifyError(parsed.error)}`, options);
  const candles = parsed.data;
  if (candles.s === 'no_data') return { rows: 0, rejects: [] };
  if (candles.s !== 'ok') {
    const errmsg = typeof candles['errmsg'] === 'string' ? `: ${candles['errmsg']}` : '';
    return fileProblem(file, `body status "${candles.s}"${errmsg}`, options);
  }
  const arrays = { t: candles.t, o: candles.o, h: candles.h, l: candles.l, c: candles.c, v: candles.v };
  const missing = Object.entries(arrays).filter(([, values]) => values === undefined);
  if (missing.length > 0) {
    return fileProblem(file, `candles body without ${missing.map(([key]) => key).join(', ')}`, options);
  }
  const length = arrays.t!.length;
  const uneven = Object.entries(arrays).filter(([, values]) => values!.length !== length);
  if (uneven.length > 0) {
    return fileProblem(
      file,
      `arrays of different lengths: t has ${length}, ${uneven.map(([key, values]) => `${key} ${values!.length}`).join(', ')}`,
      options,
    );
  }

  const target = candlesTargetFromFileName(file);
  const symbol = options.symbol ?? target?.symbol;
  const resolutionText = options.resolution ?? target?.resolution;
  if (symbol === undefined || resolutionText === undefined) {
    return fileProblem(file, 'no symbol or resolution: give them as options or in the file name', options);
  }
  const resolution = storedResolution(resolutionText);
  if (resolution === undefined) {
    return fileProblem(file, `resolution ${resolutionText} is not stored (only D and 1)`, options);
  }
  const time = timeKind(arrays.t!);
  if (time === undefined) {
    return fileProblem(file, 't mixes numbers and strings', options);
  }

  const raw = tempTableName('candles_body');
  const typed = tempTableName('candles_body_typed');
  const text = (values: readonly (number | string | null)[]) =>
    values.map((value) => (value === null ? null : String(value)));
  await sql.run(
    `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(raw)} (_line BIGINT, symbol VARCHAR, t VARCHAR, o VARCHAR, h VARCHAR, l VARCHAR, c VARCHAR, v VARCHAR, _reject VARCHAR)`,
  );
  let rows: number;
  const reading: BarReading = { time, priceScale: 1, resolution, regularHoursOnly: false };
  try {
    await sql.append(raw, [
      Array.from({ length }, (_, i) => i + 1),
      Array.from({ length }, () => symbol),
      text(arrays.t!),
      text(arrays.o!),
      text(arrays.h!),
      text(arrays.l!),
      text(arrays.c!),
      text(arrays.v!),
    ]);
    rows = await createTypedBars(sql, typed, `SELECT * FROM ${quoteIdentifier(raw)}`, {}, reading);
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(raw)}`);
  }
  return finishBars(sql, typed, rows, reading, options);
}

/** Unix seconds (`dateformat=unix`), spreadsheet serials, or ISO text (`dateformat=timestamp`). */
function timeKind(values: readonly (number | string | null)[]): string | undefined {
  const present = values.filter((value) => value !== null);
  if (present.every((value) => typeof value === 'string')) return 'iso';
  if (!present.every((value) => typeof value === 'number')) return undefined;
  return present.every((value) => value < 1e6) && present.length > 0 ? 'spreadsheet' : 'epoch-seconds';
}
