/**
 * The units a vendor file prints IV and Greeks in, stated (`--greeks-units`) or detected per file. The
 * store keeps the service's units (spec/semantics.md §3.1): iv a fraction, delta and gamma per $1 of the
 * underlying, theta per calendar day, vega per volatility point. Vendors and vintages of one vendor differ
 * (a HistoricalOptionData file prints theta per year and vega per 1.00 of volatility, another gamma and
 * theta ×100), so a file's units are established from the file itself: each printed value is compared
 * with Black–Scholes on the file's near-money rows, and the known convention it matches gives the divisor
 * into the store's units. A Greek whose units cannot be established is refused, never stored as printed.
 */
import { IngestError, UsageError } from '../errors.js';
import type { SqlSession, SqlValue } from '../store/sql.js';
import { csvStructureProblem, explainReadFailure } from './csv-source.js';

/** The vendor columns, in the store's order. */
export const GREEKS = ['iv', 'delta', 'gamma', 'theta', 'vega'] as const;

/** One vendor column. */
export type Greek = (typeof GREEKS)[number];

/**
 * What a printed value is divided by to give the store's unit (theta per year: 365), or null when the
 * column is not stored at all (`--greeks-units none`).
 */
export type GreekDivisors = Readonly<Record<Greek, number | null>>;

/** The `--greeks-units` option, parsed: divisors stated for some or all columns, or none stored. */
export type GreeksUnitsOption =
  | { readonly kind: 'detect'; readonly stated: Readonly<Partial<Record<Greek, number>>> }
  | { readonly kind: 'none' };

/**
 * The conventions detection chooses among, as divisors into the store's units: iv as a fraction or in
 * percent; delta and gamma per $1 or ×100; theta per day, per day ×100, or per (365-day) year; vega per
 * volatility point or per 1.00 of volatility (= per point ×100).
 */
export const KNOWN_DIVISORS: Readonly<Record<Greek, readonly number[]>> = {
  iv: [1, 100],
  delta: [1, 100],
  gamma: [1, 100],
  theta: [1, 100, 365],
  vega: [1, 100],
};

/**
 * Named statements of all five columns: `store` (the store's own units, as the A L3 sample prints them)
 * and `per-year` (theta per year and vega per 1.00 of volatility, as the SPXW L2 sample prints them).
 */
export const GREEKS_UNITS_PRESETS = {
  store: { iv: 1, delta: 1, gamma: 1, theta: 1, vega: 1 },
  'per-year': { iv: 1, delta: 1, gamma: 1, theta: 365, vega: 100 },
} as const satisfies Readonly<Record<string, Readonly<Record<Greek, number>>>>;

/** The presets by any name, for looking up what the user wrote. */
const PRESETS_BY_NAME: Readonly<Record<string, Readonly<Record<Greek, number>>>> = GREEKS_UNITS_PRESETS;

/**
 * Parses `--greeks-units`: `auto` (the default: detect every column), `none` (store no vendor IV or
 * Greeks), or a comma-separated list of presets (`store`, `per-year`) and `greek=divisor` pairs
 * (`theta=365,vega=100`), later items winning; columns the list leaves out are detected.
 */
export function parseGreeksUnits(text: string | undefined): GreeksUnitsOption {
  const value = (text ?? 'auto').trim();
  if (value === 'auto') return { kind: 'detect', stated: {} };
  if (value === 'none') return { kind: 'none' };
  const stated: Partial<Record<Greek, number>> = {};
  for (const part of value.split(',')) {
    const preset = PRESETS_BY_NAME[part.trim()];
    if (preset !== undefined) {
      Object.assign(stated, preset);
      continue;
    }
    const match = /^\s*([a-z]+)\s*=\s*([0-9]+(?:\.[0-9]+)?)\s*$/i.exec(part);
    const greek = match?.[1]?.toLowerCase() as Greek | undefined;
    const divisor = Number(match?.[2]);
    if (greek === undefined || !GREEKS.includes(greek) || !(divisor > 0)) {
      throw new UsageError(
        `--greeks-units: expected auto, none, or presets (${Object.keys(GREEKS_UNITS_PRESETS).join(', ')}) ` +
          `and greek=divisor pairs such as theta=365,vega=100 (greeks: ${GREEKS.join(', ')}), not '${value}'`,
      );
    }
    stated[greek] = divisor;
  }
  return { kind: 'detect', stated };
}

/**
 * One near-money row of a file as printed: side, spot, strike, calendar days to expiration, a price (the
 * mid, or the close when a file has no quotes) and the vendor columns (null when missing).
 */
export type EvidenceRow = {
  readonly side: 'call' | 'put';
  readonly spot: number;
  readonly strike: number;
  readonly days: number;
  readonly price: number | null;
} & Readonly<Record<Greek, number | null>>;

/** Rows further from the money than this (|ln(K/S)|) say little about the units, and are not read. */
const MAX_LOG_MONEYNESS = 0.25;
/** Expirations closer than this are too noisy, further ones depend on rates: both are left out. */
const MIN_DAYS = 5;
const MAX_DAYS = 180;
/** Below this an IV is a placeholder (Lean prints 0.0000001 for a contract it could not fit), not evidence. */
const MIN_IV = 0.001;
/** The data lines of a file that detection reads (from its start), and the near-money rows it keeps. */
const SAMPLE_LINES = 100_000;
const SAMPLE_ROWS = 2_000;

/** What detection found for one column: its divisor, or why none could be established. */
export type Detection =
  | { readonly divisor: number; readonly rows: number; readonly ratio: number }
  | { readonly divisor: undefined; readonly rows: number; readonly ratio: number | undefined };

const INV_SQRT_2PI = 0.3989422804014327;

function density(x: number): number {
  return INV_SQRT_2PI * Math.exp(-0.5 * x * x);
}

/** The standard normal distribution (Abramowitz & Stegun 26.2.17, |error| < 7.5e-8): ample for a ratio. */
function cdf(x: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(x));
  const poly =
    t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
  const tail = density(x) * poly;
  return x >= 0 ? 1 - tail : tail;
}

/**
 * Black–Scholes at a zero rate in the store's units, or undefined where it says nothing (no time or no
 * volatility). The rate is left out: within 180 days of near-money expirations it moves theta by far less
 * than the factor between two known conventions.
 */
function blackScholes(
  row: EvidenceRow,
  vol: number,
): { price: number; d1: number; delta: number; gamma: number; theta: number; vega: number } | undefined {
  const years = row.days / 365;
  const root = vol * Math.sqrt(years);
  if (!(root > 0) || !(row.spot > 0) || !(row.strike > 0)) return undefined;
  const d1 = (Math.log(row.spot / row.strike) + (root * root) / 2) / root;
  const d2 = d1 - root;
  const call = row.side === 'call';
  const price = call
    ? row.spot * cdf(d1) - row.strike * cdf(d2)
    : row.strike * cdf(-d2) - row.spot * cdf(-d1);
  return {
    price,
    d1,
    delta: call ? cdf(d1) : cdf(d1) - 1,
    gamma: density(d1) / (row.spot * root),
    theta: -(row.spot * density(d1) * vol) / (2 * Math.sqrt(years)) / 365,
    vega: (row.spot * density(d1) * Math.sqrt(years)) / 100,
  };
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The known divisor that the median ratio (printed ÷ Black–Scholes) of one column fits, or undefined when
 * it fits none: within a factor of 2 of it, and nearer to it than to any other (a factor of √3.65 separates
 * theta per year from theta per day ×100, so their margin is narrower).
 */
function knownDivisorOf(greek: Greek, ratio: number | undefined): number | undefined {
  if (ratio === undefined || !(ratio > 0)) return undefined;
  const candidates = KNOWN_DIVISORS[greek];
  for (const candidate of candidates) {
    const gap = Math.min(
      ...candidates.filter((c) => c !== candidate).map((c) => Math.abs(Math.log(c / candidate))),
    );
    const tolerance = Math.min(Math.log(2), 0.45 * gap);
    if (Math.abs(Math.log(ratio / candidate)) < tolerance) return candidate;
  }
  return undefined;
}

/**
 * Detects each column's divisor from near-money rows: the IV's from Black–Scholes prices against the
 * rows' prices (mid or close), then each Greek's from its ratio to Black–Scholes at that IV on rows with
 * |d1| ≤ 1. A stated divisor is taken as it is (and a stated IV is what the Greeks are compared at).
 */
export function detectGreekUnits(
  rows: readonly EvidenceRow[],
  stated: Readonly<Partial<Record<Greek, number>>> = {},
): Record<Greek, Detection> {
  const result = {} as Record<Greek, Detection>;
  const given = (greek: Greek): Detection | undefined => {
    const divisor = stated[greek];
    return divisor === undefined ? undefined : { divisor, rows: 0, ratio: divisor };
  };
  const near = rows.filter(
    (r) =>
      r.spot > 0 &&
      r.strike > 0 &&
      r.days >= MIN_DAYS &&
      r.days <= MAX_DAYS &&
      Math.abs(Math.log(r.strike / r.spot)) <= MAX_LOG_MONEYNESS &&
      r.iv !== null &&
      r.iv >= MIN_IV,
  );
  // IV: the reading (fraction or percent) whose Black–Scholes prices are nearest the file's own prices,
  // on out-of-the-money rows: their price is all time value, which the IV alone decides (an in-the-money
  // price is mostly intrinsic value, which any IV matches).
  let iv = given('iv');
  if (iv === undefined) {
    const priced = near.filter(
      (r) =>
        r.price !== null &&
        r.price > 0 &&
        (r.side === 'call' ? r.strike >= r.spot : r.strike <= r.spot) &&
        Math.abs(Math.log(r.strike / r.spot)) <= MAX_LOG_MONEYNESS / 2,
    );
    let best: { divisor: number; error: number; ratio: number } | undefined;
    for (const divisor of KNOWN_DIVISORS.iv) {
      const ratios = priced.flatMap((r) => {
        const model = blackScholes(r, r.iv! / divisor);
        return model === undefined || !(model.price > 0) ? [] : [model.price / r.price!];
      });
      const ratio = median(ratios);
      if (ratio === undefined || !(ratio > 0)) continue;
      const error = Math.abs(Math.log(ratio));
      if (best === undefined || error < best.error) best = { divisor, error, ratio };
    }
    iv =
      best !== undefined && best.error < Math.log(2)
        ? { divisor: best.divisor, rows: priced.length, ratio: best.ratio * best.divisor }
        : { divisor: undefined, rows: priced.length, ratio: undefined };
  }
  result.iv = iv;
  for (const greek of ['delta', 'gamma', 'theta', 'vega'] as const) {
    const stated = given(greek);
    if (stated !== undefined) {
      result[greek] = stated;
      continue;
    }
    if (iv.divisor === undefined) {
      result[greek] = { divisor: undefined, rows: 0, ratio: undefined };
      continue;
    }
    const ratios = near.flatMap((r) => {
      const printed = r[greek];
      const model = blackScholes(r, r.iv! / iv.divisor!);
      if (printed === null || printed === 0 || model === undefined || Math.abs(model.d1) > 1) return [];
      const value = model[greek];
      return value === 0 ? [] : [printed / value];
    });
    const ratio = median(ratios);
    const divisor = knownDivisorOf(greek, ratio);
    result[greek] =
      divisor === undefined || ratio === undefined
        ? { divisor: undefined, rows: ratios.length, ratio }
        : { divisor, rows: ratios.length, ratio };
  }
  return result;
}

/**
 * The SQL columns a format gives for detection, over the raw columns of its CSV read: `side` ('call' or
 * 'put'), `spot`, `strike`, `days` (to expiration), `price`, and the vendor columns, each a DOUBLE (NULL
 * when unreadable).
 */
export type EvidenceColumns = Readonly<Record<'side' | 'spot' | 'strike' | 'days' | 'price' | Greek, string>>;

/**
 * Establishes the divisors of one file's vendor columns, or throws an `IngestError` naming the file and
 * the columns whose units it cannot establish. `rows` is a query over the file's records (e.g. its CSV
 * read) with `params`; detection reads its first 100,000 records, and only where a column cannot be
 * established there does it read the whole file, to make sure the column is empty or zero throughout
 * (which any divisor stores right).
 */
export async function establishGreekUnits(
  sql: SqlSession,
  file: string,
  option: GreeksUnitsOption,
  rows: (limit: number | undefined) => { readonly sql: string; readonly params: readonly SqlValue[] },
  columns: EvidenceColumns,
): Promise<{ divisors: GreekDivisors; detections: Partial<Record<Greek, Detection>> }> {
  if (option.kind === 'none') {
    return { divisors: { iv: null, delta: null, gamma: null, theta: null, vega: null }, detections: {} };
  }
  const divisors: Record<Greek, number | null> = { iv: 1, delta: 1, gamma: 1, theta: 1, vega: 1 };
  if (GREEKS.every((greek) => option.stated[greek] !== undefined)) {
    for (const greek of GREEKS) divisors[greek] = option.stated[greek]!;
    return { divisors, detections: {} };
  }
  const sample = rows(SAMPLE_LINES);
  const evidence = await sql
    .all<EvidenceRow>(
      `SELECT side, spot, strike, days, price, ${GREEKS.join(', ')} FROM (
       SELECT ${Object.entries(columns)
         .map(([name, expression]) => `${expression} AS ${name}`)
         .join(', ')}
       FROM (${sample.sql}))
     WHERE side IN ('call', 'put') AND spot > 0 AND strike > 0 AND days BETWEEN ${MIN_DAYS} AND ${MAX_DAYS}
       AND iv > 0 AND abs(ln(strike / spot)) <= ${MAX_LOG_MONEYNESS}
     LIMIT ${SAMPLE_ROWS}`,
      sample.params,
    )
    .catch(explainReadFailure(file));
  const detections = detectGreekUnits(evidence, option.stated);
  const unknown: Greek[] = [];
  for (const greek of GREEKS) {
    const divisor = detections[greek].divisor;
    if (divisor === undefined) unknown.push(greek);
    else divisors[greek] = divisor;
  }
  if (unknown.length > 0) {
    // A column that is empty or zero everywhere is stored right by any divisor: only a file that prints
    // values in it needs its units.
    const whole = rows(undefined);
    const printed = await sql
      .all<Record<string, boolean>>(
        `SELECT ${unknown.map((greek) => `coalesce(bool_or(${columns[greek]} <> 0), false) AS ${greek}`).join(', ')}
       FROM (${whole.sql})`,
        whole.params,
      )
      .catch(explainReadFailure(file));
    const refused = unknown.filter((greek) => printed[0]?.[greek] === true);
    if (refused.length > 0) {
      // A file whose text breaks the reader (an unterminated quote, mixed line endings) leaves too few
      // rows to judge: that is its problem, not its units.
      const broken = await csvStructureProblem(file);
      if (broken !== undefined) throw broken;
      const why = refused.map((greek) => {
        const found = detections[greek];
        if (greek !== 'iv' && detections.iv.divisor === undefined)
          return `${greek}: the IV's units are unknown`;
        if (found.rows === 0) return `${greek}: no near-money rows to compare`;
        if (greek === 'iv' || found.ratio === undefined) {
          return `${greek}: no known unit prices its ${found.rows} near-money rows near their own prices`;
        }
        return `${greek}: ${formatRatio(found.ratio)}× Black–Scholes on ${found.rows} near-money rows fits no known unit`;
      });
      throw new IngestError(
        file,
        undefined,
        `cannot establish the units of ${refused.join(', ')} (${why.join('; ')}); state them with ` +
          `--greeks-units (e.g. per-year, or theta=365,vega=100) or store no vendor Greeks with --greeks-units none`,
      );
    }
  }
  return { divisors, detections };
}

function formatRatio(ratio: number): string {
  return ratio >= 10 ? ratio.toFixed(0) : ratio.toPrecision(2);
}

/**
 * How a file's IV and Greeks were stored, for the data-quality summary: `none`, `store` (printed in the
 * store's units) or the divisors that differ from 1 in `--greeks-units` syntax (`theta=365,vega=100`), then
 * whether the file's values established them (`detected`) or the user stated every one (`stated`).
 */
export function describeGreekUnits(
  divisors: GreekDivisors,
  option: GreeksUnitsOption,
  byFormat = false,
): string {
  if (GREEKS.every((greek) => divisors[greek] === null)) return 'none';
  const differing = GREEKS.filter((greek) => divisors[greek] !== 1).map(
    (g) => `${g}=${divisors[g] ?? 'none'}`,
  );
  const stated = option.kind === 'detect' && GREEKS.every((greek) => option.stated[greek] !== undefined);
  const how = byFormat ? 'the format' : stated ? 'stated' : 'detected';
  return `${differing.length === 0 ? 'store' : differing.join(',')} (${how})`;
}

/**
 * The units option of a format whose documentation fixes its units: `auto` (nothing stated) becomes
 * `units`, stated in full; a statement the user made stands. The second value says whether the format's
 * units were taken.
 */
export function formatUnits(
  option: GreeksUnitsOption,
  units: Readonly<Record<Greek, number>>,
): [GreeksUnitsOption, boolean] {
  if (option.kind === 'detect' && Object.keys(option.stated).length === 0) {
    return [{ kind: 'detect', stated: units }, true];
  }
  return [option, false];
}

/** SQL dividing a vendor value (a DOUBLE expression) by its divisor; NULL when the column is not stored. */
export function dividedSql(value: string, divisor: number | null): string {
  if (divisor === null) return 'NULL';
  return divisor === 1 ? value : `(${value}) / ${divisor}`;
}
