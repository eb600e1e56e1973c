/**
 * The one parameter toolkit of the endpoints: zod transforms over the query's strings, parsed once at the
 * boundary. Typed values come out; anything else is a 400 `{"s":"error","errmsg":…}` naming the
 * parameter (`parseParams`). Each helper words its own message in full, punctuation included, so the
 * texts the service answers stay exactly as they are pinned.
 */
import { z } from 'zod';
import { InvalidInputError, MarketDataError } from '../errors.js';
import {
  type Clock,
  etDateOf,
  fixedClock,
  type ParsedDate,
  parseDateInput,
  parseDateInputOrRelative,
  type RelativeDate,
  resolveRelative,
} from '../market-time/index.js';
import type { Endpoint } from './types.js';

/** One end of an interval. */
export type Bound = { readonly value: number; readonly inclusive: boolean };

/** A term of a strike or delta expression: an exact value, or an interval open on either side. */
export type NumberTerm =
  | { readonly kind: 'exact'; readonly value: number }
  | { readonly kind: 'interval'; readonly min: Bound | null; readonly max: Bound | null };

/** A comma-separated list of terms; a value matches the expression when it matches any term. */
export type NumberExpression = readonly NumberTerm[];

/** Tolerance for comparing prices and strikes that travelled through binary floating point. */
export const EPSILON = 1e-9;

const NUMBER = String.raw`(\d+(?:\.\d*)?|\.\d+)`;
const OPERATOR_TERM = new RegExp(`^(>=|<=|>|<)\\s*${NUMBER}$`);
const RANGE_TERM = new RegExp(`^${NUMBER}\\s*-\\s*${NUMBER}$`);
const EXACT_TERM = new RegExp(`^-?${NUMBER}$`);

/**
 * Reads `400`, `400,405`, `>400`, `>=400`, `<400`, `<=410`, `400-410` (inclusive) and lists mixing them.
 * With `absolute`, a leading minus on a lone value is dropped (a put's delta given signed). Undefined when
 * unreadable.
 */
export function parseNumberExpression(
  text: string,
  options: { absolute?: boolean } = {},
): NumberExpression | undefined {
  const terms: NumberTerm[] = [];
  for (const raw of text.split(',')) {
    const part = raw.trim();
    const operator = OPERATOR_TERM.exec(part);
    const range = RANGE_TERM.exec(part);
    if (operator !== null) {
      const bound = { value: Number(operator[2]), inclusive: operator[1]!.endsWith('=') };
      const above = operator[1]!.startsWith('>');
      terms.push({ kind: 'interval', min: above ? bound : null, max: above ? null : bound });
    } else if (range !== null) {
      const min = Number(range[1]);
      const max = Number(range[2]);
      if (min > max) return undefined;
      terms.push({
        kind: 'interval',
        min: { value: min, inclusive: true },
        max: { value: max, inclusive: true },
      });
    } else if (EXACT_TERM.test(part) && (options.absolute === true || !part.startsWith('-'))) {
      terms.push({ kind: 'exact', value: Math.abs(Number(part)) });
    } else {
      return undefined;
    }
  }
  return terms;
}

/** Whether `value` lies in an interval term (bounds compared with {@link EPSILON}). */
export function inInterval(term: Extract<NumberTerm, { kind: 'interval' }>, value: number): boolean {
  const { min, max } = term;
  if (min !== null && (min.inclusive ? value < min.value - EPSILON : value <= min.value + EPSILON))
    return false;
  if (max !== null && (max.inclusive ? value > max.value + EPSILON : value >= max.value - EPSILON))
    return false;
  return true;
}

/** Whether `value` matches any term, exact terms compared with {@link EPSILON}. */
export function matchesExpression(expression: NumberExpression, value: number): boolean {
  return expression.some((term) =>
    term.kind === 'exact' ? Math.abs(term.value - value) <= EPSILON : inInterval(term, value),
  );
}

/**
 * What a parameter accepts, as data beside its parser. The endpoint pages in `docs/` are generated from it
 * (`npm run docs`), so they list exactly what the schemas read.
 */
export type ParamShape =
  | { readonly kind: 'boolean' }
  | { readonly kind: 'number' | 'integer'; readonly min?: number; readonly max?: number }
  /** A calendar date in any input form; an instant stands for its Eastern date. */
  | { readonly kind: 'date' }
  /** A date or an instant; a relative `-N unit` counts back from the other end of the range. */
  | { readonly kind: 'date-or-relative' }
  /** A date, or `all`. */
  | { readonly kind: 'expiration' }
  /** A number expression (`example` shows its forms); `absolute` reads a signed value as its size. */
  | { readonly kind: 'expression'; readonly example: string; readonly absolute?: boolean }
  | { readonly kind: 'choice'; readonly values: readonly string[] }
  | { readonly kind: 'symbols' }
  | { readonly kind: 'text' };

/** The shape of every parameter schema the helpers below make. */
export const paramShapes = z.registry<ParamShape>();

function shaped<S extends z.ZodType>(schema: S, shape: ParamShape): S {
  paramShapes.add(schema, shape);
  return schema;
}

function bounds(options: { min?: number; max?: number }): { min?: number; max?: number } {
  return {
    ...(options.min === undefined ? {} : { min: options.min }),
    ...(options.max === undefined ? {} : { max: options.max }),
  };
}

function fail(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
}

/** A boolean parameter: `true`/`false` (any case) or `1`/`0`. */
export const booleanParam = z.string().transform((text, ctx): boolean => {
  const value = text.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return fail(ctx, `expected true or false, got "${echo(text)}"`);
});
paramShapes.add(booleanParam, { kind: 'boolean' });

/** A count parameter (`countback` of stocks and markets): a whole number from 1 to 10,000,000. */
export const countParam = z.string().transform((text, ctx): number => {
  const trimmed = text.trim();
  const value = Number(trimmed);
  if (!/^\d{1,8}$/.test(trimmed) || value < 1 || value > 10_000_000) {
    return fail(ctx, `expected a whole number from 1 to 10000000, got "${echo(text)}"`);
  }
  return value;
});
paramShapes.add(countParam, { kind: 'integer', min: 1, max: 10_000_000 });

const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;

/** A finite number in decimal notation, optionally within `[min, max]`. */
export function numberParam(options: { min?: number; max?: number } = {}) {
  const param = z.string().transform((text, ctx): number => {
    // Decimal notation only: Number() would also read `0x10`, `0b1` and an empty text.
    const value = DECIMAL.test(text) ? Number(text) : Number.NaN;
    if (!Number.isFinite(value)) return fail(ctx, `expected a number, got "${echo(text)}".`);
    const { min, max } = options;
    if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
      const range =
        max === undefined
          ? `of at least ${min}`
          : min === undefined
            ? `of at most ${max}`
            : `from ${min} to ${max}`;
      return fail(ctx, `expected a number ${range}, got "${echo(text)}".`);
    }
    return value;
  });
  return shaped(param, { kind: 'number', ...bounds(options) });
}

/** A whole number within `[min, max]`. */
export function integerParam(options: { min?: number; max?: number } = {}) {
  const param = z.string().transform((text, ctx): number => {
    const value = /^\s*[+-]?\d+\s*$/.test(text) ? Number(text) : Number.NaN;
    const inRange =
      Number.isSafeInteger(value) &&
      (options.min === undefined || value >= options.min) &&
      (options.max === undefined || value <= options.max);
    if (!inRange) {
      const range =
        options.max === undefined
          ? `of at least ${options.min ?? 0}`
          : `from ${options.min ?? 0} to ${options.max}`;
      return fail(ctx, `expected a whole number ${range}, got "${echo(text)}".`);
    }
    return value;
  });
  return shaped(param, { kind: 'integer', ...bounds(options) });
}

/** The message of a date that cannot be read: the reader's own words, never a JavaScript error's. */
function unreadableDate(error: unknown, text: string): string {
  return error instanceof InvalidInputError ? error.message : `could not read the date "${echo(text)}".`;
}

/** A calendar date in any form the API accepts (semantics §1), read against `clock`; an instant gives its ET date. */
export function dayParam(clock: Clock) {
  const param = z.string().transform((text, ctx): string => {
    try {
      return etDateOf(parseDateInput(text.trim(), clock));
    } catch (error) {
      return fail(ctx, unreadableDate(error, text));
    }
  });
  return shaped(param, { kind: 'date' });
}

/**
 * The calendar date (ET) a request's `date=` names, read against its clock instant: the one reading of
 * the historical `date` shared by the service (which then checks it is a past session) and the backtest
 * face (which judges it by known-at instead). Unreadable: the 400 `Invalid date '…'`.
 */
export function parseDateParam(text: string, nowSeconds: number): string {
  try {
    return etDateOf(parseDateInput(text, fixedClock(nowSeconds)));
  } catch (error) {
    throw new MarketDataError(400, `Invalid date '${text}'. Use a date such as 2024-03-15.`, {
      cause: error,
    });
  }
}

/** A date or instant read against `clock`, where a relative `-N unit` stays unresolved (`from` against `to`). */
export function dateOrRelativeParam(clock: Clock) {
  const param = z.string().transform((text, ctx): ParsedDate | RelativeDate => {
    try {
      return parseDateInputOrRelative(text, clock);
    } catch (error) {
      return fail(ctx, unreadableDate(error, text));
    }
  });
  return shaped(param, { kind: 'date-or-relative' });
}

/**
 * A {@link dateOrRelativeParam} value read against `anchor` (`from` against `to`); a shift that leaves the
 * representable dates is the parameter's 400.
 */
export function resolveDateParam(
  name: string,
  value: ParsedDate | RelativeDate,
  anchor: ParsedDate,
): ParsedDate {
  if (value.kind !== 'relative') return value;
  try {
    return resolveRelative(value, anchor);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    throw new MarketDataError(400, `Invalid parameter ${name}: ${error.message}`, { cause: error });
  }
}

/** `all` or a date, as for the chain's and strikes' `expiration`. */
export function expirationParam(clock: Clock) {
  const date = dayParam(clock);
  const param = z.string().transform((text, ctx): string => {
    if (text.trim().toLowerCase() === 'all') return 'all';
    const parsed = date.safeParse(text);
    return parsed.success ? parsed.data : fail(ctx, `expected a date or "all", got "${echo(text)}".`);
  });
  return shaped(param, { kind: 'expiration' });
}

/** A strike or (with `absolute`) delta expression (see {@link parseNumberExpression}). */
export function expressionParam(example: string, options: { absolute?: boolean } = {}) {
  const param = z.string().transform((text, ctx): NumberExpression => {
    const parsed = parseNumberExpression(text, options);
    return parsed ?? fail(ctx, `could not read "${echo(text)}" (use ${example}).`);
  });
  return shaped(param, {
    kind: 'expression',
    example,
    ...(options.absolute === true ? { absolute: true } : {}),
  });
}

/** One of a few words, in any case. */
export function choiceParam<const T extends string>(choices: readonly T[]) {
  const param = z.string().transform((text, ctx): T => {
    const value = text.trim().toLowerCase();
    const found = choices.find((choice) => choice === value);
    return found ?? fail(ctx, `expected ${choices.join(', ')}, got "${echo(text)}".`);
  });
  return shaped(param, { kind: 'choice', values: choices });
}

/** Normalises one ticker: trimmed, upper case. */
export function normalizeSymbol(text: string): string {
  return text.trim().toUpperCase();
}

/** A comma-separated ticker list: normalised, empty items dropped, first occurrence kept. */
export const symbolsParam = z.string().transform((text, ctx): string[] => {
  const symbols = [
    ...new Set(
      text
        .split(',')
        .map(normalizeSymbol)
        .filter((s) => s !== ''),
    ),
  ];
  return symbols.length > 0 ? symbols : fail(ctx, 'expected a comma-separated list of symbols');
});
paramShapes.add(symbolsParam, { kind: 'symbols' });

/** Any text, read as given (the endpoint judges it). */
export const textParam = shaped(z.string(), { kind: 'text' });

/**
 * A parser for an endpoint whose schema reads dates against the request's clock, with the schema built
 * once: zod's schema construction costs far more than a parse, and a session loop asks at a new instant
 * every time. The schema holds a clock whose instant is set for each parse, which runs synchronously.
 */
export function clockedParser<S extends z.ZodType>(
  factory: (clock: Clock) => S,
): (query: Readonly<Record<string, string>>, nowSeconds: number) => z.output<S> {
  const parse = clockedSafeParser(factory);
  return (query, nowSeconds) => resultOrRefusal(parse(query, nowSeconds));
}

/** How many queries' parses a clocked parser keeps (a loop asks the same few at every instant). */
const KEPT_PARSES = 32;

/**
 * `clockedParser`'s safe parse, which keeps what it parsed without reading the clock: such a query parses
 * the same at every instant, and a loop asks the same one each minute or session (a zod parse was 3-4 % of
 * an intraday minute, twice: the endpoint's and the response cache key's). A parse kept is frozen, since
 * every later request with that query shares it.
 */
export function clockedSafeParser<S extends z.ZodType>(
  factory: (clock: Clock) => S,
): (query: Readonly<Record<string, string>>, nowSeconds: number) => z.ZodSafeParseResult<z.output<S>> {
  let instant = 0;
  let clockRead = false;
  let schema: S | undefined;
  const clock: Clock = {
    nowSeconds: () => {
      clockRead = true;
      return instant;
    },
  };
  const kept = new Map<string, z.ZodSafeParseSuccess<z.output<S>>>();
  return (query, nowSeconds) => {
    schema ??= factory(clock);
    const text = JSON.stringify(query);
    const found = kept.get(text);
    if (found !== undefined) return found;
    instant = nowSeconds;
    clockRead = false;
    const result = schema.safeParse(query);
    if (result.success && !clockRead) {
      if (kept.size >= KEPT_PARSES) kept.delete(kept.keys().next().value!);
      kept.set(text, { success: true, data: deepFrozen(result.data) });
    }
    return result;
  };
}

/** `value` with it and every object and array inside it frozen. */
function deepFrozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFrozen(inner);
  }
  return value;
}

/**
 * The query keys an endpoint reads besides the universal ones: its schema's keys, and `date` when it takes
 * historical dates (the service reads that one before the endpoint runs).
 */
export function paramNames(endpoint: Pick<Endpoint, 'schema' | 'dated'>): string[] {
  const keys = Object.keys(endpoint.schema(fixedClock(0)).shape);
  return endpoint.dated && !keys.includes('date') ? ['date', ...keys] : keys;
}

/** Parses an endpoint's parameters from the query; the first problem becomes the 400 the service sends. */
export function parseParams<S extends z.ZodType>(
  schema: S,
  query: Readonly<Record<string, string>>,
): z.output<S> {
  return resultOrRefusal(schema.safeParse(query));
}

/** A parse's data, or its first problem as the 400 the service sends. */
function resultOrRefusal<T>(result: z.ZodSafeParseResult<T>): T {
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  // Only the helpers above add issues; zod's own (a value that is not text) would speak JavaScript.
  const message = issue.code === 'custom' ? issue.message : 'expected text.';
  const errmsg =
    issue.path.length === 0 ? message : `Invalid parameter ${issue.path.map(String).join('.')}: ${message}`;
  throw new MarketDataError(400, errmsg, { cause: result.error });
}

/** A 400 for parameters that are each valid but cannot be combined. */
export function badCombination(message: string): MarketDataError {
  return new MarketDataError(400, `Bad parameters. ${message}`);
}

function echo(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
