/**
 * `pitchain/client`: the endpoint functions of a local store, answered by any service that speaks the API
 * (`createClient({ baseUrl, token })`), following the service's rules on batches, ranges, retries, credits.
 */
export type {
  CandleColumns,
  CandlesParams,
  ChainParams,
  DateInput,
  ExpirationColumns,
  ExpirationsParams,
  GenericColumns,
  LookupParams,
  MarketStatusParams,
  OptionColumns,
  OptionQuotesParams,
  StockQuotesParams,
  StrikesParams,
} from '../library/params.js';
export { QueryResult, type ResultMeta } from '../library/result.js';
export { type Client, type ClientOptions, createClient, DEFAULT_BASE_URL, requestTarget } from './client.js';
export {
  AuthenticationError,
  BadRequestError,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  ParseError,
  PayloadTooLargeError,
  PaymentRequiredError,
  RateLimitError,
  ServerError,
  ServiceError,
} from './errors.js';
export { candleChunks, isIntraday, MAX_BATCH_SYMBOLS, symbolBatches } from './split.js';
export { type Credits, MAX_REQUEST_LINE_BYTES, type RawResponse, type ResponseEvent } from './transport.js';
