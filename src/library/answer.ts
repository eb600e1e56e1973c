/**
 * From an endpoint's answer to a typed result: the columns as the endpoint computed them, the credits the
 * service would bill, and errors as the service would state them.
 */
import { creditsFor } from '../billing/credits.js';
import { MarketDataError } from '../errors.js';
import type { LookAheadField } from '../pit/policy.js';
import { MARKET_STATUS_FIELDS } from '../query/endpoints/markets-status.js';
import { isOptionAnswer } from '../query/endpoints/option-answer.js';
import { CANDLE_FIELDS } from '../query/endpoints/stocks-candles.js';
import { STOCK_PRICE_FIELDS } from '../query/endpoints/stocks-prices.js';
import { STOCK_QUOTE_FIELDS } from '../query/endpoints/stocks-quotes.js';
import { OPTION_COLUMNS } from '../query/options/columns.js';
import type { Answer, EndpointResult, FieldKind, Mode, NoData } from '../query/types.js';
import { failureOf } from '../service/errors.js';
import { type Columns, QueryResult } from './result.js';

/** What a result is made from besides the answer. */
export type ResultContext = {
  readonly asOfSeconds: number;
  readonly dataVersion: string;
  readonly mode: Mode;
  readonly status: 200 | 203 | 204;
  readonly cachedHit: boolean;
  readonly service: string;
  readonly lookAhead?: readonly LookAheadField[];
  /** The latest known-at served, when the backtest face masked some values. */
  readonly dataAsOf?: number | null;
  /** Columns that replace the answer's own (the backtest face's masked or flagged values). */
  readonly replaced?: ReadonlyMap<string, readonly unknown[]>;
};

/** The typed result of an endpoint's answer (an empty one for no data or a cache miss). */
export function toResult<C extends Columns>(
  result: EndpointResult | undefined,
  context: ResultContext,
): QueryResult<C> {
  const base = {
    asOf: context.asOfSeconds,
    dataVersion: context.dataVersion,
    lookAhead: context.lookAhead ?? [],
    mode: context.mode,
    scalars: {},
  };
  if (result === undefined || result.kind === 'no_data') {
    // Every no-data answer has one shape: empty columns with the endpoint's keys, `meta.noData`, and the
    // service's words when it gives some ("Symbol not found.", "Market closed on this date.").
    return new QueryResult<C>(emptyColumns(context.service) as unknown as C, {
      ...base,
      dataAsOf: null,
      credits: 0,
      status: context.status === 204 ? 200 : context.status,
      noData: true,
      ...(result?.errmsg === undefined ? {} : { errmsg: result.errmsg }),
      ...(result?.nextTime === undefined ? {} : { nextTime: result.nextTime }),
      ...(result?.prevTime === undefined ? {} : { prevTime: result.prevTime }),
    });
  }
  const columns: Record<string, readonly unknown[]> = {};
  const kinds: Record<string, FieldKind> = {};
  for (const field of result.fields) {
    columns[field.key] = context.replaced?.get(field.key) ?? field.values;
    kinds[field.key] = field.kind;
  }
  const scalars: Record<string, unknown> = {};
  for (const scalar of result.scalars ?? []) scalars[scalar.key] = scalar.value;
  if (result.rawBody !== undefined) {
    for (const [key, value] of Object.entries(result.rawBody)) {
      if (Array.isArray(value)) columns[key] = value;
      else if (key !== 's') scalars[key] = value;
    }
  }
  return new QueryResult<C>(
    columns as C,
    {
      ...base,
      scalars,
      dataAsOf: context.dataAsOf === undefined ? result.dataAsOfSeconds : context.dataAsOf,
      credits: creditsOf(result, context.cachedHit),
      status: context.status === 204 ? 200 : context.status,
      ...(result.greeksComputed ? { greeks: 'computed' as const } : {}),
    },
    kinds,
    isOptionAnswer(result) ? (result.knownAtColumns?.families ?? result.optionRecords) : undefined,
  );
}

/** The credits of a whole answer (all columns, no limit), as the service bills them. */
function creditsOf(answer: Answer, cachedHit: boolean): number {
  const rows = answer.fields[0]?.values.length ?? 0;
  return creditsFor(
    answer.billing,
    rows,
    answer.fields.map((f) => f.key),
    cachedHit,
  );
}

const keysOf = (fields: readonly (readonly [string, ...unknown[]])[]) => fields.map(([key]) => key);
const CANDLE_KEYS = keysOf(CANDLE_FIELDS);

/** The keys an endpoint's typed columns always have, from the endpoints' own lists; lookup and strikes have none. */
const COLUMN_KEYS: Readonly<Record<string, readonly string[]>> = {
  '/v1/options/chain/': OPTION_COLUMNS.map(({ key }) => key),
  '/v1/options/quotes/': OPTION_COLUMNS.map(({ key }) => key),
  '/v1/options/expirations/': ['expirations'],
  '/v1/stocks/candles/': CANDLE_KEYS,
  '/v1/stocks/bulkcandles/': ['symbol', ...CANDLE_KEYS],
  '/v1/stocks/quotes/': keysOf(STOCK_QUOTE_FIELDS),
  '/v1/stocks/prices/': keysOf(STOCK_PRICE_FIELDS),
  '/v1/markets/status/': keysOf(MARKET_STATUS_FIELDS),
};

/** The columns of an endpoint's empty answer: its keys, each with no value. */
function emptyColumns(service: string): Record<string, unknown[]> {
  return Object.fromEntries((COLUMN_KEYS[service] ?? []).map((key) => [key, []]));
}

/**
 * A refusal that is a no-data answer (`{"s":"no_data",…}`: the service's rule for a `date` on which the
 * market was closed), as the no-data answer the library returns for it.
 */
export function noDataOf(error: unknown): NoData | undefined {
  if (!(error instanceof MarketDataError) || error.body.s !== 'no_data') return undefined;
  return { kind: 'no_data', ...(error.errmsg === '' ? {} : { errmsg: error.errmsg }) };
}

/**
 * An error as the library throws it: a refusal of the service (4xx) as `MarketDataError` with the
 * service's status and body; anything else (a store fault, a bug) as it is, its cause kept.
 */
export function libraryError(error: unknown): unknown {
  if (error instanceof MarketDataError) return error;
  const failure = failureOf(error);
  if (failure.status >= 500) return error;
  return new MarketDataError(failure.status, String(failure.body.errmsg ?? ''), {
    body: failure.body,
    cause: error,
  });
}
