/** pitchain: point-in-time option chains and stock bars, answered as the market-data REST API would. */

// Accounts and credits.
export {
  type Account,
  AccountBook,
  Ledger,
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
  LookAheadError,
  MarketDataError,
  StoreError,
  UsageError,
} from './errors.js';
// Market time.
export {
  type Clock,
  type DateFormat,
  dte,
  expirationSeconds,
  fixedClock,
  formatInstant,
  isSession,
  nextSession,
  parseDateInput,
  previousSession,
  sessionCloseSeconds,
  sessionOpenSeconds,
  sessionsBetween,
  systemClock,
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
export {
  Api,
  type ApiOptions,
  type ApiResponse,
  MAX_REQUEST_LINE,
  type RequestOptions,
  statusText,
} from './service/service.js';
// The store, for writers and tools.
export { type CommitResult, type Manifest, StoreReader, WriteTransaction } from './store/index.js';
export { type StoreSummary, summarizeStore } from './store/summary.js';
// Open a store and ask it questions (the library face).
export {
  type Body,
  decode,
  type OpenOptions,
  openStore,
  type Params,
  type ParamValue,
  Store,
} from './store-api.js';
