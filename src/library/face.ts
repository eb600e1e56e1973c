/**
 * The endpoint-shaped functions of the library, shared by the API face (`store.options.chain(…)`) and the
 * backtest face (`store.at(T).options.chain(…)`): each names its endpoint, path and typed parameters and
 * hands them to an `ask` function that the face supplies. No URL and no JSON text on the way.
 */
import type {
  AnyParams,
  BulkCandleColumns,
  CandleColumns,
  CandlesParams,
  ChainParams,
  ExpirationColumns,
  ExpirationsParams,
  LookupColumns,
  LookupParams,
  MarketStatusColumns,
  MarketStatusParams,
  OptionColumns,
  OptionQuotesParams,
  StockPriceColumns,
  StockPricesParams,
  StockQuoteColumns,
  StockQuotesParams,
  StrikeColumns,
  StrikesParams,
} from './params.js';
import type { Columns, QueryResult } from './result.js';

/** One question to an endpoint: its service name, path parameters and typed query parameters. */
export type Question = {
  readonly service: string;
  readonly path: Readonly<Record<string, string>>;
  readonly params: AnyParams;
};

/** Per-call options of the API face: the clock instant and the token (default: the store's). */
export type CallOptions = {
  /** Clock instant T: epoch seconds, a Date, or an instant such as `2020-03-16T15:45:00-04:00`. */
  readonly now?: number | Date | string;
  readonly token?: string;
};

/** How a face answers a question. */
export type Ask = <C extends Columns>(question: Question, options?: CallOptions) => Promise<QueryResult<C>>;

/** The option endpoints of a face (`store.options`, `store.at(T).options`). */
export type OptionFunctions = {
  /** `/v1/options/chain/{underlying}/`: the chain, filtered as the service does. */
  chain(underlying: string, params?: ChainParams, options?: CallOptions): Promise<QueryResult<OptionColumns>>;
  /** `/v1/options/quotes/{optionSymbol}/`: one contract's quote now, on a date, or per session of a range. */
  quotes(
    optionSymbol: string,
    params?: OptionQuotesParams,
    options?: CallOptions,
  ): Promise<QueryResult<OptionColumns>>;
  /** `/v1/options/lookup/{text}/`: the OCC symbol of a human-readable description (`meta.scalars.optionSymbol`). */
  lookup(text: string, params?: LookupParams, options?: CallOptions): Promise<QueryResult<LookupColumns>>;
  /** `/v1/options/expirations/{underlying}/`: the listed expirations. */
  expirations(
    underlying: string,
    params?: ExpirationsParams,
    options?: CallOptions,
  ): Promise<QueryResult<ExpirationColumns>>;
  /** `/v1/options/strikes/{underlying}/`: the listed strikes per expiration. */
  strikes(
    underlying: string,
    params?: StrikesParams,
    options?: CallOptions,
  ): Promise<QueryResult<StrikeColumns>>;
};

/** The stock endpoints of a face (`store.stocks`, `store.at(T).stocks`). */
export type StockFunctions = {
  /** `/v1/stocks/candles/{resolution}/{symbol}/`: bars of one stock. */
  candles(
    resolution: string,
    symbol: string,
    params?: CandlesParams,
    options?: CallOptions,
  ): Promise<QueryResult<CandleColumns>>;
  /** `/v1/stocks/bulkcandles/{resolution}/`: one bar per symbol. */
  bulkCandles(
    resolution: string,
    params?: CandlesParams & { symbols?: string },
    options?: CallOptions,
  ): Promise<QueryResult<BulkCandleColumns>>;
  /** `/v1/stocks/quotes/{symbol}/` or `?symbols=`: quotes of one or several stocks. */
  quotes(
    symbols: string | readonly string[],
    params?: StockQuotesParams,
    options?: CallOptions,
  ): Promise<QueryResult<StockQuoteColumns>>;
  /** `/v1/stocks/prices/{symbol}/` or `?symbols=`: mid prices of one or several stocks. */
  prices(
    symbols: string | readonly string[],
    params?: StockPricesParams,
    options?: CallOptions,
  ): Promise<QueryResult<StockPriceColumns>>;
};

/** The market endpoints of a face (`store.markets`, `store.at(T).markets`). */
export type MarketFunctions = {
  /** `/v1/markets/status/`: open or closed by date. */
  status(params?: MarketStatusParams, options?: CallOptions): Promise<QueryResult<MarketStatusColumns>>;
};

/** The option endpoints over a face. */
export function optionFunctions(ask: Ask): OptionFunctions {
  return {
    /** `/v1/options/chain/{underlying}/`: the chain, filtered as the service does. */
    chain: (underlying: string, params: ChainParams = {}, options?: CallOptions) =>
      ask<OptionColumns>({ service: '/v1/options/chain/', path: { underlying }, params }, options),
    /** `/v1/options/quotes/{optionSymbol}/`: one contract's quote now, on a date, or per session of a range. */
    quotes: (optionSymbol: string, params: OptionQuotesParams = {}, options?: CallOptions) =>
      ask<OptionColumns>({ service: '/v1/options/quotes/', path: { optionSymbol }, params }, options),
    /** `/v1/options/lookup/{text}/`: the OCC symbol of a human-readable description. */
    lookup: (text: string, params: LookupParams = {}, options?: CallOptions) =>
      ask<LookupColumns>(
        { service: '/v1/options/lookup/', path: { text: encodeURIComponent(text) }, params },
        options,
      ),
    /** `/v1/options/expirations/{underlying}/`: the listed expirations. */
    expirations: (underlying: string, params: ExpirationsParams = {}, options?: CallOptions) =>
      ask<ExpirationColumns>({ service: '/v1/options/expirations/', path: { underlying }, params }, options),
    /** `/v1/options/strikes/{underlying}/`: the listed strikes per expiration. */
    strikes: (underlying: string, params: StrikesParams = {}, options?: CallOptions) =>
      ask<StrikeColumns>({ service: '/v1/options/strikes/', path: { underlying }, params }, options),
  };
}

/** The stock endpoints over a face. */
export function stockFunctions(ask: Ask): StockFunctions {
  const listed = (service: string, symbols: string | readonly string[]) =>
    typeof symbols === 'string'
      ? { service: `${service}`, path: { symbol: symbols } }
      : { service: `${service}`, path: {}, symbols: symbols.join(',') };
  return {
    /** `/v1/stocks/candles/{resolution}/{symbol}/`: bars of one stock. */
    candles: (resolution: string, symbol: string, params: CandlesParams = {}, options?: CallOptions) =>
      ask<CandleColumns>({ service: '/v1/stocks/candles/', path: { resolution, symbol }, params }, options),
    /** `/v1/stocks/bulkcandles/{resolution}/`: one bar per symbol. */
    bulkCandles: (
      resolution: string,
      params: CandlesParams & { symbols?: string } = {},
      options?: CallOptions,
    ) =>
      ask<BulkCandleColumns>({ service: '/v1/stocks/bulkcandles/', path: { resolution }, params }, options),
    /** `/v1/stocks/quotes/{symbol}/` or `?symbols=`: quotes of one or several stocks. */
    quotes: (symbols: string | readonly string[], params: StockQuotesParams = {}, options?: CallOptions) => {
      const route = listed('/v1/stocks/quotes/', symbols);
      const all = 'symbols' in route ? { ...params, symbols: route.symbols } : params;
      return ask<StockQuoteColumns>({ service: route.service, path: route.path, params: all }, options);
    },
    /** `/v1/stocks/prices/{symbol}/` or `?symbols=`: mid prices of one or several stocks. */
    prices: (symbols: string | readonly string[], params: StockPricesParams = {}, options?: CallOptions) => {
      const route = listed('/v1/stocks/prices/', symbols);
      const all = 'symbols' in route ? { ...params, symbols: route.symbols } : params;
      return ask<StockPriceColumns>({ service: route.service, path: route.path, params: all }, options);
    },
  };
}

/** The market endpoints over a face. */
export function marketFunctions(ask: Ask): MarketFunctions {
  return {
    /** `/v1/markets/status/`: open or closed by date. */
    status: (params: MarketStatusParams = {}, options?: CallOptions) =>
      ask<MarketStatusColumns>({ service: '/v1/markets/status/', path: {}, params }, options),
  };
}
