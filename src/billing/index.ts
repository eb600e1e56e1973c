/** Credits, accounts and the ledger. */
export {
  type Account,
  AccountBook,
  type CreditWindow,
  isPaid,
  LOCAL_ACCOUNT,
  PLAN_WINDOWS,
  type Plan,
  type UserType,
} from './accounts.js';
export { creditsFor } from './credits.js';
export { Ledger, type LogEntry, LogUnavailableError, MAX_CONCURRENT } from './ledger.js';
