/**
 * The library face: `openStore(dir)` gives endpoint-shaped functions (`store.options.chain(…)`) and
 * `store.request(path)`, all answered by the same pipeline as the HTTP server, at clock T.
 */
import { AccountBook } from './billing/accounts.js';
import { MarketDataError } from './errors.js';
import { type Clock, fixedClock, parseDateInput, systemClock } from './market-time/index.js';
import { ENDPOINTS } from './query/endpoints/index.js';
import { Api, type ApiResponse, type RequestOptions } from './service/service.js';
import { StoreCache } from './store/cache.js';
import { type OpenStoreOptions as ReaderOptions, StoreReader } from './store/store.js';
import { type StoreSummary, summarizeStore } from './store/summary.js';

/** A query parameter value: lists are comma-joined, Dates become `YYYY-MM-DD` in UTC, booleans `true`/`false`. */
export type ParamValue = string | number | boolean | Date | readonly (string | number)[] | undefined;
export type Params = Readonly<Record<string, ParamValue>>;

/** How to open a store. */
export type OpenOptions = ReaderOptions & {
  /** The default clock instant T for requests that name none: an instant, or omit for real time. */
  readonly now?: number | Date | string;
  /** Path of an accounts file (tokens → plan, entitlements, credits); default: the local account. */
  readonly accounts?: string;
  /** Append every request-log entry to this JSON-lines file. */
  readonly ledgerFile?: string;
};

/** A decoded body: JSON as an object, CSV as text. */
export type Body = Record<string, unknown> | string;

/** An opened store: read-only, safe beside other readers and one writer. */
export class Store {
  /** Option chains, quotes, lookup, expirations and strikes. */
  readonly options = {
    chain: (underlying: string, params: Params = {}, request?: RequestOptions) =>
      this.call(`/v1/options/chain/${segment(underlying)}/`, params, request),
    quotes: (optionSymbol: string, params: Params = {}, request?: RequestOptions) =>
      this.call(`/v1/options/quotes/${segment(optionSymbol)}/`, params, request),
    lookup: (text: string, params: Params = {}, request?: RequestOptions) =>
      this.call(`/v1/options/lookup/${encodeURIComponent(text)}/`, params, request),
    expirations: (underlying: string, params: Params = {}, request?: RequestOptions) =>
      this.call(`/v1/options/expirations/${segment(underlying)}/`, params, request),
    strikes: (underlying: string, params: Params = {}, request?: RequestOptions) =>
      this.call(`/v1/options/strikes/${segment(underlying)}/`, params, request),
  };

  /** Stock candles, bulk candles, quotes and prices. */
  readonly stocks = {
    candles: (resolution: string, symbol: string, params: Params = {}, request?: RequestOptions) =>
      this.call(`/v1/stocks/candles/${segment(resolution)}/${segment(symbol)}/`, params, request),
    bulkCandles: (resolution: string, params: Params = {}, request?: RequestOptions) =>
      this.call(`/v1/stocks/bulkcandles/${segment(resolution)}/`, params, request),
    quotes: (symbols: string | readonly string[], params: Params = {}, request?: RequestOptions) =>
      typeof symbols === 'string'
        ? this.call(`/v1/stocks/quotes/${segment(symbols)}/`, params, request)
        : this.call('/v1/stocks/quotes/', { ...params, symbols }, request),
    prices: (symbols: string | readonly string[], params: Params = {}, request?: RequestOptions) =>
      typeof symbols === 'string'
        ? this.call(`/v1/stocks/prices/${segment(symbols)}/`, params, request)
        : this.call('/v1/stocks/prices/', { ...params, symbols }, request),
  };

  /** Market status (open/closed) by date. */
  readonly markets = {
    status: (params: Params = {}, request?: RequestOptions) =>
      this.call('/v1/markets/status/', params, request),
  };

  private constructor(
    readonly reader: StoreReader,
    readonly api: Api,
  ) {}

  /** Opens the store in `dir` read-only. */
  static async open(dir: string, options: OpenOptions = {}): Promise<Store> {
    const { now, accounts, ledgerFile, ...readerOptions } = options;
    const reader = await StoreReader.open(dir, readerOptions);
    try {
      const book = accounts === undefined ? undefined : await AccountBook.load(accounts);
      const api = new Api({
        sql: reader.sql,
        cache: new StoreCache(() => reader.dataVersion),
        endpoints: ENDPOINTS,
        clock: clockFor(now),
        ...(book === undefined ? {} : { accounts: book }),
        ...(ledgerFile === undefined ? {} : { ledgerFile }),
      });
      return new Store(reader, api);
    } catch (error) {
      reader.close();
      throw error;
    }
  }

  /** The data version (content hash) this store answers from. */
  get dataVersion(): string {
    return this.reader.dataVersion;
  }

  /** Answers `GET <path?query>` exactly as the service would: status, headers, body text, credits. */
  request(target: string, options?: RequestOptions): Promise<ApiResponse> {
    return this.api.request(target, options);
  }

  /** What the store holds: data version, tables, underlyings, sessions, provenance. */
  summary(): Promise<StoreSummary> {
    return summarizeStore(this.reader);
  }

  /** Moves to the newest committed version of the store; returns whether it changed. */
  refresh(): Promise<boolean> {
    return this.reader.refresh();
  }

  /** Releases the store's DuckDB. */
  close(): void {
    this.reader.close();
  }

  private async call(path: string, params: Params, request?: RequestOptions): Promise<Body> {
    const query = queryString(params);
    const response = await this.api.request(query === '' ? path : `${path}?${query}`, request);
    return decode(response);
  }
}

/** Opens a store for reading (see `Store`). */
export function openStore(dir: string, options?: OpenOptions): Promise<Store> {
  return Store.open(dir, options);
}

/**
 * The body of a response as a caller wants it: the decoded JSON (or CSV text) of a 200/203, the
 * `no_data` body of a 404 without `errmsg`, an empty object for a 204; any error is thrown as
 * `MarketDataError` with the service's status and body.
 */
export function decode(response: ApiResponse): Body {
  if (response.status === 204) return {};
  const isJson = response.headers['Content-Type'] === 'application/json';
  const body = isJson ? (JSON.parse(response.body) as Record<string, unknown>) : response.body;
  if (
    response.status < 400 ||
    (response.status === 404 && typeof body === 'object' && body['errmsg'] === undefined)
  ) {
    return body;
  }
  if (typeof body === 'object') {
    throw new MarketDataError(response.status, String(body['errmsg'] ?? ''), { body: body as never });
  }
  throw new MarketDataError(response.status, body);
}

function clockFor(now: OpenOptions['now']): Clock {
  if (now === undefined) return systemClock;
  if (typeof now === 'number') return fixedClock(now);
  if (now instanceof Date) return fixedClock(now.getTime() / 1000);
  const parsed = parseDateInput(now, systemClock);
  if (parsed.kind !== 'instant') throw new RangeError(`'now' must be an instant, not the date '${now}'`);
  return fixedClock(parsed.tsSeconds);
}

function segment(value: string): string {
  return encodeURIComponent(value);
}

function queryString(params: Params): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (value instanceof Date) search.set(key, value.toISOString().slice(0, 10));
    else if (Array.isArray(value)) search.set(key, value.join(','));
    else search.set(key, String(value));
  }
  return search.toString();
}
