/**
 * The typed parameters and columns of the library face, endpoint by endpoint. Parameters are handed to
 * the endpoint's own schema (the one place a parameter is read), so a typed call and a request with the
 * same values are answered alike.
 */
import { UsageError } from '../errors.js';
import type { OptionValues } from '../query/options/records.js';
import type { Mode } from '../query/types.js';

/** A date or instant: `YYYY-MM-DD`, any input form the API reads, epoch seconds, or a Date (its UTC date). */
export type DateInput = string | number | Date;

/** Parameters every endpoint takes: the mode, and `maxage` for `mode: 'cached'`. */
export type CommonParams = {
  readonly mode?: Mode;
  readonly maxage?: string;
};

/** `options.chain` parameters (api-reference §3.1). */
export type ChainParams = CommonParams & {
  readonly date?: DateInput;
  readonly expiration?: DateInput | 'all';
  readonly dte?: number;
  readonly from?: DateInput;
  readonly to?: DateInput;
  readonly month?: number;
  readonly year?: number;
  readonly weekly?: boolean;
  readonly monthly?: boolean;
  readonly quarterly?: boolean;
  readonly nonstandard?: boolean;
  readonly am?: boolean;
  readonly pm?: boolean;
  /** A strike, a list, or an expression: `400`, `[400, 405]`, `'>400'`, `'400-410'`. */
  readonly strike?: number | readonly number[] | string;
  /** A delta, a list, or an expression, as for `strike`. */
  readonly delta?: number | readonly number[] | string;
  readonly strikeLimit?: number;
  readonly range?: 'itm' | 'otm' | 'all';
  readonly side?: 'call' | 'put';
  readonly minBid?: number;
  readonly maxBid?: number;
  readonly minAsk?: number;
  readonly maxAsk?: number;
  readonly maxBidAskSpread?: number;
  readonly maxBidAskSpreadPct?: number;
  readonly minOpenInterest?: number;
  readonly minVolume?: number;
};

/** `options.quotes` parameters: one date, or a range of sessions. */
export type OptionQuotesParams = CommonParams & {
  readonly date?: DateInput;
  readonly from?: DateInput;
  readonly to?: DateInput;
  readonly countback?: number;
};

/** `options.expirations` parameters. */
export type ExpirationsParams = CommonParams & {
  readonly date?: DateInput;
  readonly strike?: number;
  readonly nonstandard?: boolean;
};

/** `options.strikes` parameters. */
export type StrikesParams = CommonParams & {
  readonly date?: DateInput;
  readonly expiration?: DateInput | 'all';
};

/** `options.lookup` parameters. */
export type LookupParams = CommonParams;

/** Stock candle parameters (api-reference §4). */
export type CandlesParams = CommonParams & {
  readonly date?: DateInput;
  readonly from?: DateInput;
  readonly to?: DateInput;
  readonly countback?: number;
  readonly extended?: boolean;
  readonly adjustsplits?: boolean;
  readonly adjustdividends?: boolean;
};

/** Stock quote parameters. */
export type StockQuotesParams = CommonParams & {
  readonly '52week'?: boolean;
  readonly extended?: boolean;
  readonly candle?: boolean;
};

/** Stock price parameters. */
export type StockPricesParams = CommonParams & {
  readonly extended?: boolean;
};

/** Market status parameters. */
export type MarketStatusParams = CommonParams & {
  readonly date?: DateInput;
  readonly from?: DateInput;
  readonly to?: DateInput;
  readonly countback?: number;
  readonly country?: string;
};

/** Any endpoint's parameters, as the library face passes them on. */
export type AnyParams = CommonParams & { readonly [key: string]: unknown };

/** The option row's columns (chain and option quotes), field for field. */
export type OptionColumns = { readonly [K in keyof OptionValues]: OptionValues[K][] };

/** Expirations' column. */
export type ExpirationColumns = { readonly expirations: string[] };

/** Candles' columns: open, high, low, close, volume, and the bar's start (epoch seconds). */
export type CandleColumns = {
  readonly o: number[];
  readonly h: number[];
  readonly l: number[];
  readonly c: number[];
  readonly v: number[];
  readonly t: number[];
};

/** Bulk candles' columns: one candle per symbol. */
export type BulkCandleColumns = CandleColumns & { readonly symbol: string[] };

/**
 * Stock quotes' columns, one row per symbol (the last price as bid, ask, mid and last; sizes 0), with
 * `52weekHigh`/`52weekLow` when `52week` is asked for one symbol and `o`, `h`, `l`, `c` with `candle`.
 */
export type StockQuoteColumns = {
  readonly symbol: string[];
  readonly ask: number[];
  readonly askSize: number[];
  readonly bid: number[];
  readonly bidSize: number[];
  readonly mid: number[];
  readonly last: number[];
  /** Change from the previous session's close; null without one. */
  readonly change: (number | null)[];
  readonly changepct: (number | null)[];
  readonly volume: number[];
  /** The quote's instant (epoch seconds). */
  readonly updated: number[];
  readonly '52weekHigh'?: number[];
  readonly '52weekLow'?: number[];
  readonly o?: number[];
  readonly h?: number[];
  readonly l?: number[];
  readonly c?: number[];
};

/** Stock prices' columns, one row per symbol. */
export type StockPriceColumns = {
  readonly symbol: string[];
  readonly mid: number[];
  readonly change: (number | null)[];
  readonly changepct: (number | null)[];
  readonly updated: number[];
};

/** Market status columns: each day (00:00 ET, epoch seconds), `open`, `closed`, or null outside the calendar. */
export type MarketStatusColumns = {
  readonly date: number[];
  readonly status: ('open' | 'closed' | null)[];
};

/** Strikes' columns: one list of strikes per expiration date (`YYYY-MM-DD`); `meta.scalars.updated` beside. */
export type StrikeColumns = { readonly [expiration: string]: number[] };

/** Lookup has no columns: the OCC symbol is `meta.scalars.optionSymbol`. */
export type LookupColumns = { readonly [field: string]: never[] };

/** Columns of an endpoint this module types loosely. */
export type GenericColumns = { readonly [field: string]: unknown[] };

/**
 * The query text of typed parameters: lists comma-joined, Dates as their UTC `YYYY-MM-DD`, numbers and
 * booleans as text. `undefined` leaves a parameter out; anything else that is not text is the caller's
 * `UsageError`.
 */
export function toQuery(params: AnyParams | undefined): Record<string, string> {
  const query: Record<string, string> = Object.create(null);
  if (params === undefined || params === null) return query;
  if (typeof params !== 'object') throw new UsageError('Parameters must be an object of name → value.');
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    query[key] = paramText(key, value);
  }
  return query;
}

function paramText(key: string, value: unknown): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new UsageError(`Parameter ${key}: invalid Date.`);
    return value.toISOString().slice(0, 10);
  }
  if (Array.isArray(value)) return value.map((item) => paramText(key, item)).join(',');
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  throw new UsageError(
    `Parameter ${key}: expected text, a number, a boolean, a Date or a list, got ${typeof value}.`,
  );
}
