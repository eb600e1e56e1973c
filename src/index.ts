/**
 * pitchain: point-in-time option chains and stock bars, answered as the market-data REST API would.
 * The public API only: the service's `Api`, the credit `Ledger` and the store's `StoreReader` and
 * `WriteTransaction` are internals, imported from their modules by the code that needs them.
 */

export {
  type BacktestOptions,
  type BacktestReport,
  type BacktestStatistics,
  backtest,
  type ComboOrder,
  combinations,
  computeStatistics,
  type Drawdown,
  defineStrategy,
  drawdownSeries,
  type EquityPoint,
  type ExecutionOptions,
  type FillModel,
  formatStatisticsTable,
  formatSweepTable,
  type Greeks,
  type Grid,
  loadStrategyModule,
  type MarginHolding,
  type MarginResult,
  type MarkNote,
  type MarkSource,
  marginRequirement,
  type OptionPosition,
  type Order,
  type OrderLeg,
  type Position,
  parseGrid,
  REPORT_FILES,
  type RejectedOrder,
  type RoundTrip,
  type RoundTripLeg,
  roundTripsOf,
  SESSIONS_PER_YEAR,
  type SingleOrder,
  type StockPosition,
  type Strategy,
  type StrategyContext,
  type StrategyParameters,
  type SweepOptions,
  type SweepResult,
  type SweepSortKey,
  sweep,
  sweepCsv,
  type Trade,
  withStatistics,
  writeReportFiles,
} from './backtest/index.js';
// Accounts and credits.
export {
  type Account,
  AccountBook,
  LOCAL_ACCOUNT,
  type LogEntry,
  type Plan,
  type UserType,
} from './billing/index.js';
export type { ErrorBody } from './errors.js';
// Errors.
export {
  FIXED_MESSAGES,
  IngestError,
  InvalidInputError,
  LookAheadError,
  MarketDataError,
  StoreError,
  UsageError,
} from './errors.js';
// Open a store and ask it questions (the library face), typed.
export type {
  Ask,
  CallOptions,
  MarketFunctions,
  OptionFunctions,
  Question,
  StockFunctions,
} from './library/face.js';
export type {
  AnyParams,
  BulkCandleColumns,
  CandleColumns,
  CandlesParams,
  ChainParams,
  CommonParams,
  DateInput,
  ExpirationColumns,
  ExpirationsParams,
  GenericColumns,
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
} from './library/params.js';
export {
  type Columns,
  type KnownAtColumns,
  QueryResult,
  type ResultMeta,
  type RowOf,
} from './library/result.js';
export { type ContractTerms, type OpenOptions, openStore, type Split, Store } from './library/store.js';
// The backtest face: store.at(T, { policy }), and the runner over it.
export { type Audit, type AuditEntry, PointInTimeView, type ViewOptions } from './library/view.js';
// Market time.
export {
  type Clock,
  type DateFormat,
  dte,
  etWallToSeconds,
  expirationSeconds,
  fixedClock,
  formatInstant,
  isSession,
  latestSessionAt,
  nextSession,
  parseDateInput,
  previousSession,
  sessionCloseSeconds,
  sessionOf,
  sessionOpenSeconds,
  sessionsBetween,
  systemClock,
  toEtDate,
} from './market-time/index.js';
// OCC symbology.
export {
  formatOccSymbol,
  isOccSymbol,
  type OccSymbol,
  type OptionSide,
  parseLookupText,
  parseOccSymbol,
  tryParseOccSymbol,
} from './occ/index.js';
export type { LookAheadField, LookAheadPolicy } from './pit/policy.js';
export type { GreeksSource } from './query/types.js';
// What store.request answers.
export { type ApiResponse, MAX_REQUEST_LINE, type RequestOptions, statusText } from './service/service.js';
// What pitchain info prints of a store.
export { type StoreSummary, summarizeStore } from './store/summary.js';
