/**
 * The no-data answers every endpoint shares (semantics §5–§6): 404 bodies `{"s":"no_data", …}`. One place
 * for their words, so an endpoint, the service's date rule and the backtest face say them alike.
 */
import type { NoData } from './types.js';

/** A symbol the store does not know at the as-of. */
export const SYMBOL_NOT_FOUND: NoData = { kind: 'no_data', errmsg: 'Symbol not found.' };

/** A `date` on which the exchange was closed. */
export const MARKET_CLOSED: NoData = { kind: 'no_data', errmsg: 'Market closed on this date.' };

/** The message of a 404 for a contract the store does not hold (api-reference §3.2). */
export const NO_OPTION_FOUND = 'No option found. No option was found for this strike and expiration.';
