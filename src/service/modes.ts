/**
 * Modes at clock T (semantics §5): which snapshot a request may see, after the account's plan and
 * entitlements, and the rules for `date`.
 */
import { type Account, isPaid } from '../billing/accounts.js';
import { FIXED_MESSAGES, MarketDataError } from '../errors.js';
import { isSession, toEtDate } from '../market-time/index.js';
import { type AsOf, currentAsOf } from '../pit/as-of.js';
import { MARKET_CLOSED } from '../query/no-data.js';
import { parseDateParam } from '../query/params.js';
import type { Endpoint, Mode } from '../query/types.js';

/** Mode names as requested (a Map: `constructor` or `__proto__` is an unknown mode, not a lookup hit). */
const MODE_NAMES: ReadonlyMap<string, Mode> = new Map([
  ['live', 'live'],
  ['delayed', 'delayed'],
  ['eod', 'eod'],
  ['historical', 'historical'],
  ['cached', 'cached'],
  ['cache', 'cached'],
  ['stale', 'cached'],
]);

/** Freshness order: a larger rank is older data. */
const RANK: Record<Exclude<Mode, 'cached'>, number> = { live: 0, delayed: 1, eod: 2, historical: 3 };

/** The resolved freshness of a request. */
export type Resolved = { mode: Mode; asOf: AsOf };

/** Reads the `mode` parameter (undefined when omitted); an unknown value is a 400. */
export function parseMode(text: string | undefined): Mode | undefined {
  if (text === undefined || text === '') return undefined;
  const mode = MODE_NAMES.get(text.toLowerCase());
  if (mode === undefined) {
    throw new MarketDataError(400, `Invalid mode '${text}'. Use live, delayed, eod, historical or cached.`);
  }
  return mode;
}

/** The freshest mode the account's entitlement allows for an endpoint family. */
export function entitlementCap(account: Account, family: Endpoint['family']): Exclude<Mode, 'cached'> {
  switch (family) {
    case 'options':
      if (account.userType !== 'nonpro') return 'historical';
      return account.opra ? 'live' : 'delayed';
    case 'stocks':
      return account.userType === 'nonpro' ? 'delayed' : 'historical';
    case 'prices':
    case 'none':
      return 'live';
  }
}

/** The mode of a request that names none: `live` for paid plans, `historical` for free and trial ones. */
export function defaultMode(account: Account): Exclude<Mode, 'cached'> {
  return isPaid(account.plan) ? 'live' : 'historical';
}

/**
 * Resolves mode and as-of for a request at T. `requested` is the parsed `mode`; `date` the raw `date`
 * parameter of an endpoint that takes historical dates. Throws the specification's 400/402/404s.
 */
export function resolveFreshness(
  endpoint: Endpoint,
  account: Account,
  requested: Mode | undefined,
  date: string | undefined,
  nowSeconds: number,
): Resolved {
  if (!isPaid(account.plan) && requested !== undefined && requested !== 'historical') {
    throw new MarketDataError(
      402,
      `The ${requested} mode is available on paid plans only. Free and trial accounts receive historical data.`,
    );
  }
  if (requested === 'cached' && !endpoint.cacheable) {
    throw new MarketDataError(400, 'Cached mode is available for quotes and option chains only.');
  }
  if (endpoint.dated && date !== undefined && date !== '') {
    if (requested !== undefined && requested !== 'historical' && requested !== 'eod') {
      throw new MarketDataError(400, FIXED_MESSAGES.invalidDate);
    }
    const session = parseHistoricalDate(date, nowSeconds);
    return { mode: requested ?? 'historical', asOf: { kind: 'dated', session } };
  }
  if (requested === 'cached') return { mode: 'cached', asOf: currentAsOf('live', nowSeconds) };
  const wanted = requested ?? defaultMode(account);
  const cap = entitlementCap(account, endpoint.family);
  const effective = RANK[cap] > RANK[wanted] ? cap : wanted;
  return { mode: effective, asOf: currentAsOf(effective, nowSeconds) };
}

/** A `date=` value: a past session in ET, or the specification's 400 / 404. */
function parseHistoricalDate(text: string, nowSeconds: number): string {
  const session = parseDateParam(text, nowSeconds);
  if (session >= toEtDate(nowSeconds)) throw new MarketDataError(400, FIXED_MESSAGES.invalidDate);
  let open: boolean;
  try {
    open = isSession(session);
  } catch {
    throw new MarketDataError(400, `Invalid date '${text}'. The calendar covers 2000 to 2035.`);
  }
  if (!open) {
    const errmsg = MARKET_CLOSED.errmsg!;
    throw new MarketDataError(404, errmsg, { body: { s: 'no_data', errmsg } });
  }
  return session;
}
