/** pitchain: point-in-time option chains and stock bars, answered as the market-data REST API would. */

export type { ErrorBody } from './errors.js';
export {
  FIXED_MESSAGES,
  IngestError,
  LookAheadError,
  MarketDataError,
  StoreError,
  UsageError,
} from './errors.js';
