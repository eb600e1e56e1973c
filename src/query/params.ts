/**
 * The option endpoints' own query parameters, parsed once with zod at the boundary: typed values out, a
 * 400 `{"s":"error","errmsg":…}` naming the parameter and the accepted forms for anything else.
 */
import { z } from 'zod';
import { MarketDataError } from '../errors.js';
import { type Clock, parseDateInput, toEtDate } from '../market-time/index.js';

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

const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;

/** A finite number in decimal notation, optionally within `[min, max]`. */
export function numberParam(options: { min?: number; max?: number } = {}) {
  return z.string().transform((text, ctx): number => {
    // Decimal notation only: Number() would also read `0x10`, `0b1` and an empty text.
    const value = DECIMAL.test(text) ? Number(text) : Number.NaN;
    if (!Number.isFinite(value)) return fail(ctx, `expected a number, got "${echo(text)}"`);
    const { min, max } = options;
    if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
      const range = max === undefined ? `of at least ${min}` : `from ${min ?? 'any'} to ${max}`;
      return fail(ctx, `expected a number ${range}, got "${echo(text)}"`);
    }
    return value;
  });
}

/** A whole number within `[min, max]`. */
export function integerParam(options: { min?: number; max?: number } = {}) {
  return z.string().transform((text, ctx): number => {
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
      return fail(ctx, `expected a whole number ${range}, got "${echo(text)}"`);
    }
    return value;
  });
}

/** A date in any form the API accepts (semantics §1), read against `clock`, as its Eastern calendar date. */
export function dateParam(clock: Clock) {
  return z.string().transform((text, ctx): string => {
    try {
      const parsed = parseDateInput(text.trim(), clock);
      return parsed.kind === 'date' ? parsed.date : toEtDate(parsed.tsSeconds);
    } catch {
      return fail(ctx, `could not read the date "${echo(text)}"`);
    }
  });
}

/** `all` or a date, as for the chain's and strikes' `expiration`. */
export function expirationParam(clock: Clock) {
  const date = dateParam(clock);
  return z.string().transform((text, ctx): string => {
    if (text.trim().toLowerCase() === 'all') return 'all';
    const parsed = date.safeParse(text);
    return parsed.success ? parsed.data : fail(ctx, `expected a date or "all", got "${echo(text)}"`);
  });
}

/** A strike or (with `absolute`) delta expression (see {@link parseNumberExpression}). */
export function expressionParam(example: string, options: { absolute?: boolean } = {}) {
  return z.string().transform((text, ctx): NumberExpression => {
    const parsed = parseNumberExpression(text, options);
    return parsed ?? fail(ctx, `could not read "${echo(text)}" (use ${example})`);
  });
}

/** One of a few words, in any case. */
export function choiceParam<const T extends string>(choices: readonly T[]) {
  return z.string().transform((text, ctx): T => {
    const value = text.trim().toLowerCase();
    const found = choices.find((choice) => choice === value);
    return found ?? fail(ctx, `expected ${choices.join(', ')}, got "${echo(text)}"`);
  });
}

/** Parses the endpoint's parameters from the query; the first problem becomes the 400 the service sends. */
export function parseParams<S extends z.ZodType>(
  schema: S,
  query: Readonly<Record<string, string>>,
): z.output<S> {
  const result = schema.safeParse(query);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const name = issue.path.map(String).join('.');
  throw new MarketDataError(400, `Invalid parameter ${name}: ${issue.message}.`, { cause: result.error });
}

/** A 400 for parameters that are each valid but cannot be combined. */
export function badCombination(message: string): MarketDataError {
  return new MarketDataError(400, `Bad parameters. ${message}`);
}

function echo(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
