/**
 * Universal parameters and output formats (api-reference §7): `format` (json|csv, `headers`),
 * `dateformat`, `columns`, `human`, `limit`/`offset`. Endpoints return typed columns; everything about
 * how they are printed happens here, once.
 */
import { z } from 'zod';
import { csvField } from '../csv.js';
import type { ErrorBody } from '../errors.js';
import { MarketDataError } from '../errors.js';
import { type DateFormat, etMidnightSeconds, formatInstant } from '../market-time/index.js';
import type { Answer, Field, FieldKind, NoData, Scalar } from '../query/types.js';
import { STATUS } from './errors.js';

export const DEFAULT_LIMIT = 10_000;
export const MAX_LIMIT = 50_000;

/** The universal parameters after parsing. */
export type OutputOptions = {
  readonly format: 'json' | 'csv';
  readonly headers: boolean;
  readonly dateformat: DateFormat | undefined;
  readonly columns: readonly string[] | undefined;
  readonly human: boolean;
  readonly limit: number;
  readonly offset: number;
};

/** One of a few words in any case; `expected` says which in the service's words. */
const word = <const T extends readonly [string, ...string[]]>(words: T, expected: string) =>
  z
    .string()
    .transform((s) => s.toLowerCase())
    .pipe(z.enum(words, { error: expected }));

const bool = word(['true', 'false', '1', '0'], 'expected true or false').transform(
  (s) => s === 'true' || s === '1',
);

const count = (name: string, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n <= max, `${name} must be at most ${max}`);

const schema = z.object({
  format: word(['json', 'csv'], 'expected json or csv').optional(),
  headers: bool.optional(),
  dateformat: word(
    ['unix', 'timestamp', 'spreadsheet'],
    'expected unix, timestamp or spreadsheet',
  ).optional(),
  columns: z.string().optional(),
  human: bool.optional(),
  limit: count('limit', MAX_LIMIT).optional(),
  offset: count('offset', Number.MAX_SAFE_INTEGER).optional(),
});

/** Query keys the pipeline consumes (the output options, then mode and auth); endpoints never see them. */
export const UNIVERSAL_KEYS: readonly string[] = [
  ...Object.keys(schema.shape),
  'mode',
  'maxage',
  'maxAge',
  'feed',
  'token',
];

/** Parses the universal parameters; a bad value is a 400 naming the parameter. */
export function parseOutputOptions(query: Readonly<Record<string, string>>): OutputOptions {
  const parsed = schema.safeParse({
    format: query['format'],
    headers: query['headers'],
    dateformat: query['dateformat'],
    columns: query['columns'],
    human: query['human'],
    limit: query['limit'],
    offset: query['offset'],
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    const value = query[name] ?? '';
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    throw new MarketDataError(400, `Invalid parameter '${name}': ${shown} (${issue.message}).`);
  }
  const p = parsed.data;
  // A column named twice is answered once, in its first place: the service describes no refusal for it,
  // and the SDKs' column repair prepends `s` and the row key whether or not the caller named them.
  const columns =
    p.columns === undefined
      ? undefined
      : [
          ...new Set(
            p.columns
              .split(',')
              .map((c) => c.trim())
              .filter((c) => c !== ''),
          ),
        ];
  return {
    format: p.format ?? 'json',
    headers: p.headers ?? true,
    dateformat: p.dateformat,
    columns: columns === undefined || columns.length === 0 ? undefined : columns,
    human: p.human ?? false,
    limit: p.limit ?? DEFAULT_LIMIT,
    offset: p.offset ?? 0,
  };
}

/** A rendered body with its content type. */
export type Rendered = { readonly contentType: string; readonly body: string };

/** The rows and keys an answer keeps after pagination and `columns` (for billing). */
export type Kept = { readonly rows: number; readonly keys: readonly string[] };

const JSON_TYPE = 'application/json';
const CSV_TYPE = 'text/csv';
const EOL = '\r\n';

/** Applies `limit`/`offset` and `columns`; returns what stays, for billing and rendering. */
export function keep(answer: Answer, options: OutputOptions): { fields: Field[]; kept: Kept } {
  const total = answer.fields[0]?.values.length ?? 0;
  const start = Math.min(options.offset, total);
  const end = Math.min(total, start + options.limit);
  // The rows of a page of whole columns, one array for them all.
  let range: Int32Array | undefined;
  const rangeOf = () => {
    if (range === undefined) {
      range = new Int32Array(end - start);
      for (let i = 0; i < range.length; i++) range[i] = start + i;
    }
    return range;
  };
  const paged =
    start === 0 && end === total
      ? [...answer.fields]
      : answer.fields.map((f) => page(f, start, end, rangeOf));
  // A field named by its key and by its human name is still one column.
  const fields =
    options.columns === undefined
      ? paged
      : [...new Set(options.columns.flatMap((key) => paged.filter((f) => f.key === key || f.human === key)))];
  return { fields, kept: { rows: end - start, keys: fields.map((f) => f.key) } };
}

function page(field: Field, start: number, end: number, range: () => Int32Array): Field {
  if (field.json === undefined) return { ...field, values: field.values.slice(start, end) };
  const { column, rows } = field.json;
  const kept = rows === null ? range() : rows.subarray(start, end);
  return new PagedField(field, start, end, { column, rows: kept });
}

/**
 * A page of a field printed from its JSON column: its values are sliced only when read (the JSON body
 * copies the column's bytes; a number column made from a store's columns has no values array until one
 * is read, and a 13,000-row chain's page made all twenty of them to slice them).
 */
class PagedField implements Field {
  readonly key: string;
  readonly human: string;
  readonly kind: FieldKind;
  private sliced: readonly unknown[] | undefined;

  constructor(
    private readonly whole: Field,
    private readonly start: number,
    private readonly end: number,
    readonly json: NonNullable<Field['json']>,
  ) {
    this.key = whole.key;
    this.human = whole.human;
    this.kind = whole.kind;
  }

  get values(): readonly unknown[] {
    this.sliced ??= this.whole.values.slice(this.start, this.end);
    return this.sliced;
  }
}

/** Renders a successful answer in the requested format, in one piece (see `answerPieces`). */
export function renderAnswer(answer: Answer, fields: readonly Field[], options: OutputOptions): Rendered {
  const pieces: (string | Buffer)[] = [];
  for (const piece of answerPieces(answer, fields, options)) pieces.push(piece);
  return { contentType: contentTypeOf(options), body: joinPieces(pieces) };
}

/** The content type of a successful answer. */
export function contentTypeOf(options: Pick<OutputOptions, 'format'>): string {
  return options.format === 'csv' ? CSV_TYPE : JSON_TYPE;
}

/** Pieces of text (or UTF-8 bytes) as one string. */
export function joinPieces(pieces: readonly (string | Buffer)[]): string {
  if (pieces.every((p) => typeof p === 'string')) return (pieces as string[]).join('');
  return Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString('utf8');
}

/** Rows of CSV per piece: small enough that printing one holds the event loop well under a millisecond. */
const CSV_ROWS_PER_PIECE = 512;

/**
 * A successful answer's body as consecutive pieces: a column of JSON or a few hundred rows of CSV each, so
 * a caller can stop between pieces (to let other requests run, or to refuse an answer grown too large).
 */
export function* answerPieces(
  answer: Answer,
  fields: readonly Field[],
  options: OutputOptions,
): Generator<string | Buffer> {
  const scalars = (answer.scalars ?? []).filter(
    (s) =>
      options.columns === undefined || options.columns.includes(s.key) || options.columns.includes(s.human),
  );
  const keyOf = (f: { key: string; human: string }) => (options.human ? f.human : f.key);
  const withS = options.columns === undefined && !options.human;
  if (options.format === 'csv') {
    // Scalars repeat on every row; columns are printed a piece of rows at a time (dates formatted too).
    type Column = { name: string; scalar?: unknown; field?: Field };
    const scalarColumn = (s: Scalar) => ({
      name: keyOf(s),
      scalar: formatValue(s.value, s.kind, options.dateformat),
    });
    const columns: Column[] = [
      ...scalars.filter((s) => s.position === 'before').map(scalarColumn),
      ...fields.map((f) => ({ name: keyOf(f), field: f })),
      ...scalars.filter((s) => s.position === 'after').map(scalarColumn),
    ];
    const rows = Math.max(
      columns.some((c) => c.field === undefined) ? 1 : 0,
      ...fields.map((f) => f.values.length),
    );
    if (options.headers) yield columns.map((c) => csvCell(c.name)).join(',') + EOL;
    for (let from = 0; from < rows; from += CSV_ROWS_PER_PIECE) {
      const to = Math.min(rows, from + CSV_ROWS_PER_PIECE);
      const values = columns.map((c) =>
        c.field === undefined
          ? undefined
          : formatValues(c.field.values.slice(from, to), c.field.kind, options.dateformat),
      );
      let piece = '';
      for (let i = 0; i < to - from; i++) {
        piece += `${columns.map((c, j) => csvCell(c.field === undefined ? c.scalar : values[j]![i])).join(',')}${EOL}`;
      }
      yield piece;
    }
    return;
  }
  if (answer.rawBody !== undefined) {
    // A raw body's keys may repeat the fields': one object keeps the service's first place, last value.
    const body: Record<string, unknown> = {};
    if (withS) body['s'] = 'ok';
    for (const s of scalars)
      if (s.position === 'before') body[keyOf(s)] = formatValue(s.value, s.kind, options.dateformat);
    for (const f of fields) body[keyOf(f)] = formatValues(f.values, f.kind, options.dateformat);
    for (const s of scalars)
      if (s.position === 'after') body[keyOf(s)] = formatValue(s.value, s.kind, options.dateformat);
    Object.assign(body, answer.rawBody);
    yield JSON.stringify(body);
    return;
  }
  yield* jsonWithColumns(scalars, fields, keyOf, withS, options.dateformat);
}

/**
 * The JSON body written piece by piece, the same text `JSON.stringify` gives for the object (a key given
 * twice keeps its first place and its last value), with kept column texts copied rather than printed.
 */
function* jsonWithColumns(
  scalars: readonly (Scalar & { readonly position: 'before' | 'after' })[],
  fields: readonly Field[],
  keyOf: (f: { key: string; human: string }) => string,
  withS: boolean,
  dateformat: DateFormat | undefined,
): Generator<string | Buffer> {
  type Piece = { scalar?: Scalar; field?: Field; text?: string };
  const entries = new Map<string, Piece>();
  if (withS) entries.set('s', { text: '"ok"' });
  for (const s of scalars) if (s.position === 'before') entries.set(keyOf(s), { scalar: s });
  for (const f of fields) entries.set(keyOf(f), { field: f });
  for (const s of scalars) if (s.position === 'after') entries.set(keyOf(s), { scalar: s });
  const formatKey = dateformat ?? '';
  let separator = '{';
  for (const [key, piece] of entries) {
    yield `${separator}${JSON.stringify(key)}:`;
    separator = ',';
    const f = piece.field;
    if (piece.text !== undefined) yield piece.text;
    else if (piece.scalar !== undefined)
      yield JSON.stringify(formatValue(piece.scalar.value, piece.scalar.kind, dateformat));
    else if (f !== undefined)
      yield f.json === undefined
        ? JSON.stringify(formatValues(f.values, f.kind, dateformat))
        : f.json.column.arrayJson(f.json.rows, formatKey, (values) =>
            formatValues(values, f.kind, dateformat),
          );
  }
  yield entries.size === 0 ? '{}' : '}';
}

/** Renders a valid question without data: 404 no_data in JSON; in CSV the service's 200 `0` body. */
export function renderNoData(noData: NoData, options: OutputOptions): Rendered & { status: number } {
  const body: Record<string, unknown> = { s: 'no_data' };
  if (noData.errmsg !== undefined) body['errmsg'] = noData.errmsg;
  if (noData.nextTime !== undefined)
    body['nextTime'] = formatValue(noData.nextTime, 'instant', options.dateformat);
  if (noData.prevTime !== undefined)
    body['prevTime'] = formatValue(noData.prevTime, 'instant', options.dateformat);
  if (options.format === 'csv') {
    const status = STATUS.noData('csv', noData.errmsg !== undefined);
    if (noData.errmsg !== undefined) return { status, ...renderError(body as ErrorBody, options) };
    return { status, contentType: CSV_TYPE, body: options.headers ? `0${EOL}""${EOL}` : `""${EOL}` };
  }
  return { status: STATUS.noData('json', true), contentType: JSON_TYPE, body: JSON.stringify(body) };
}

/** Renders an error body in the requested format (JSON unless the request asked for CSV). */
export function renderError(body: ErrorBody, options: Pick<OutputOptions, 'format'> | undefined): Rendered {
  if (options?.format === 'csv') {
    const keys = Object.keys(body);
    return {
      contentType: CSV_TYPE,
      body: `${keys.join(',')}${EOL}${keys.map((k) => csvCell(body[k])).join(',')}${EOL}`,
    };
  }
  return { contentType: JSON_TYPE, body: JSON.stringify(body) };
}

function formatValues(
  values: readonly unknown[],
  kind: FieldKind,
  dateformat: DateFormat | undefined,
): unknown[] {
  if (kind !== 'instant' && kind !== 'date') return values as unknown[];
  // Unix seconds print as they are: only check them (formatInstant refuses a non-finite one).
  if (kind === 'date' ? dateformat === undefined : (dateformat ?? 'unix') === 'unix') {
    if (values.every((v) => v === null || Number.isFinite(v) || (kind === 'date' && typeof v === 'string')))
      return values as unknown[];
  }
  return values.map((v) => formatValue(v, kind, dateformat));
}

function formatValue(value: unknown, kind: FieldKind, dateformat: DateFormat | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((v) => formatValue(v, kind, dateformat));
  if (kind === 'instant') return formatInstant(value as number, dateformat ?? 'unix');
  if (kind === 'date') {
    if (dateformat === undefined) return value;
    return formatInstant(etMidnightSeconds(value as string), dateformat);
  }
  return value;
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return csvField(text);
}
