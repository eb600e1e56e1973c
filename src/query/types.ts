/**
 * The contract between the request pipeline (`request.ts`: routing, auth, universal parameters, modes,
 * cache, credits, output formats) and the endpoint modules (`endpoints/*.ts`: what each path answers).
 *
 * An endpoint parses its own parameters (zod, at the boundary), reads the store through `ctx.sql` with
 * bound parameters only, and returns an `Answer` in the service's columnar shape with typed fields. The
 * pipeline then applies `columns`, `human`, `limit`/`offset`, `dateformat` and `format`, computes the
 * credits from `answer.billing`, and writes headers. Endpoints never format dates or pick keys' case.
 */
import type { z } from 'zod';
import type { Clock } from '../market-time/index.js';
import type { AsOf } from '../pit/as-of.js';
import type { StoreCache } from '../store/cache.js';
import type { SqlSession } from '../store/sql.js';
import type { FieldKind, JsonColumn } from './json-columns.js';

export type { AsOf, FieldKind };

/**
 * Where option answers' IV and Greeks come from: the store's vendor figures, or computed from the quotes.
 * A setting of the whole service that every endpoint receives; only the option endpoints read it.
 */
export type GreeksSource = 'vendor' | 'computed';

/** One column of a columnar answer: the API key, its human-mode key, its kind and one value per row. */
export type Field = {
  readonly key: string;
  readonly human: string;
  readonly kind: FieldKind;
  readonly values: readonly unknown[];
  /**
   * The same values as rows of a column whose JSON text the session keeps (`rows` null: all of it, in
   * order); the JSON output copies that text instead of printing the values again.
   */
  readonly json?: { readonly column: JsonColumn; readonly rows: Int32Array | null };
};

/** A scalar key beside the arrays (expirations' and strikes' `updated`, lookup's `optionSymbol`). */
export type Scalar = {
  readonly key: string;
  readonly human: string;
  readonly kind: FieldKind;
  readonly value: unknown;
};

/**
 * How an answer is billed (semantics §6); the pipeline applies it after `limit`/`offset`/`columns`:
 * - `per-row`: 1 credit per row (live/delayed chains, option quotes: 1 per symbol).
 * - `per-1000-rows`: ceil(rows / 1000) (historical chains, candles).
 * - `per-symbol-with-quote`: 1 per row when the kept columns include any of bid/ask/mid/last, else 1.
 * - `per-response`: 1.
 * A 204, a 4xx and the HTML 400 cost 0; a `mode=cached` hit costs 1 whatever the rule.
 */
export type Billing = 'per-row' | 'per-1000-rows' | 'per-symbol-with-quote' | 'per-response';

/** A successful columnar answer (`s: "ok"`). */
export type Answer = {
  readonly kind: 'ok';
  /** The arrays, in the service's key order. All have the same length. */
  readonly fields: readonly Field[];
  /** Scalars, each placed before (`position: 'before'`) or after the arrays as the service orders them. */
  readonly scalars?: readonly (Scalar & { readonly position: 'before' | 'after' })[];
  /** The key that names a row (`optionSymbol`, `symbol`, `t`, `date`), kept by `columns` only if named. */
  readonly rowKey?: string;
  readonly billing: Billing;
  /** The latest known-at instant (epoch seconds) of any value served: cache age and backtest `dataAsOf`. */
  readonly dataAsOfSeconds: number | null;
  /**
   * When the answer is not a columnar table (lookup's scalar `optionSymbol`; strikes' date keys), the
   * endpoint gives the body itself; `fields` is then empty and `columns`/`limit` do not apply.
   */
  readonly rawBody?: Readonly<Record<string, unknown>>;
  /**
   * Set when the IV and Greeks served were computed from the quotes, not the vendor's (`greeks: 'computed'`):
   * the service says so in a header. (Option answers carry more: `OptionAnswer`, beside the option endpoints.)
   */
  readonly greeksComputed?: true;
};

/** No data for a valid question: 404 `{"s":"no_data", nextTime?, prevTime?}` (or with `errmsg`). */
export type NoData = {
  readonly kind: 'no_data';
  readonly errmsg?: string;
  readonly nextTime?: number | null;
  readonly prevTime?: number | null;
};

/** What an endpoint returns (an answer of kind `A`, or no data); refusals are thrown as `MarketDataError`. */
export type EndpointResult<A extends Answer = Answer> = A | NoData;

/** The mode the request runs in after defaults and entitlements. */
export type Mode = 'live' | 'delayed' | 'eod' | 'historical' | 'cached';

/** What an endpoint handler receives. */
export type EndpointContext = {
  /** The store's DuckDB, with the canonical tables as views (`option_quotes`, `contracts`, …). */
  readonly sql: SqlSession;
  /** The store's cache, keyed by its data version: derived answers kept across requests. */
  readonly cache: StoreCache;
  /** The clock instant T of the request (epoch seconds). */
  readonly nowSeconds: number;
  /** Path parameters by name (e.g. `underlying`, `optionSymbol`, `resolution`, `symbol`, `text`). */
  readonly path: Readonly<Record<string, string>>;
  /** Query parameters (last occurrence wins), universal ones removed. */
  readonly query: Readonly<Record<string, string>>;
  /** Resolved freshness: from `date` (dated) or from the mode and entitlements at T. */
  readonly asOf: AsOf;
  readonly mode: Mode;
  /** Where option answers' IV and Greeks come from: the store's vendor figures, or computed from the quotes. */
  readonly greeks: GreeksSource;
};

/** One endpoint: its path shape, what it accepts, and its handler. */
export type Endpoint = {
  /** The service name used in `/status/` and the request log, e.g. `/v1/options/chain/`. */
  readonly service: string;
  /** Path pattern with `:name` segments and a final `*name` rest segment (lookup text may hold `/`). */
  readonly pattern: string;
  /** Entitlement family (semantics §5): options, stock quotes/candles, stock prices, or none (utilities). */
  readonly family: 'options' | 'stocks' | 'prices' | 'none';
  /** Whether `mode=cached` is allowed (stock quotes, option quotes, chains); elsewhere it is a 400. */
  readonly cacheable: boolean;
  /** Whether the endpoint takes `date` (historical requests). */
  readonly dated: boolean;
  /**
   * The endpoint's own query parameters as the zod object `run` parses them with, made for the request's
   * clock (relative dates are read against it): the one list of what it reads besides the universal keys
   * and, when `dated`, `date` (`paramNames` in `params.ts`; unknown keys are ignored). Each parameter's
   * shape is in `paramShapes`; the endpoint pages in `docs/` are generated from both.
   */
  readonly schema: (clock: Clock) => z.ZodObject;
  /** Answers a question at its as-of: typed columns, a no-data answer, or a thrown refusal. */
  run(ctx: EndpointContext): Promise<EndpointResult>;
};
