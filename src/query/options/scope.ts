/**
 * Which contracts an option query reads (an underlying's chain, one root of it, or one contract), and
 * the answers about a scope that are not rows: a closed market (unknown symbols are `contract-table.ts`'s
 * `underlyingKnown`, no data with the nearest sessions `no-data-around.ts`'s).
 */
import { isSession, underlyingOfRoot } from '../../market-time/index.js';
import type { AsOf } from '../../pit/as-of.js';
import { MARKET_CLOSED } from '../no-data.js';
import type { NoData } from '../types.js';

/**
 * Which contracts a query reads: an underlying's chain (optionally one root of it, optionally one
 * expiration of it: a chain asked for one date reads and keeps only that date's contracts) or one contract.
 */
export type Scope =
  | { readonly underlying: string; readonly root?: string; readonly expiration?: string }
  /** One contract; its `underlying` (from the contracts table) lets the reads skip other partitions. */
  | { readonly optionSymbol: string; readonly underlying: string };

/** The no-data answer for a dated request on a date the exchange was closed, else undefined. */
export function closedSession(asOf: AsOf): NoData | undefined {
  return asOf.kind === 'dated' && !isSession(asOf.session) ? MARKET_CLOSED : undefined;
}

/** The scope a path symbol names: an underlying, or one root of it (`SPXW` → SPX's chain, root SPXW). */
export function scopeOfSymbol(pathSymbol: string | undefined): {
  readonly scope: Exclude<Scope, { optionSymbol: string }>;
  readonly symbol: string;
  readonly underlying: string;
  readonly root: string | undefined;
} {
  const symbol = (pathSymbol ?? '').trim().toUpperCase();
  const underlying = underlyingOfRoot(symbol);
  const root = underlying === symbol ? undefined : symbol;
  return { scope: root === undefined ? { underlying } : { underlying, root }, symbol, underlying, root };
}

/** A chain scope without its expiration: what the loop and session blocks of the scope are kept by. */
export function chainOf(scope: Exclude<Scope, { optionSymbol: string }>): {
  underlying: string;
  root?: string;
} {
  return scope.root === undefined
    ? { underlying: scope.underlying }
    : { underlying: scope.underlying, root: scope.root };
}
