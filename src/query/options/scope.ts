/**
 * Which contracts an option query reads (an underlying's chain, one root of it, or one contract), and
 * the answers about a scope that are not rows: unknown symbols, a closed market (no data with the nearest
 * sessions is `no-data-around.ts`'s).
 */
import { isSession, underlyingOfRoot } from '../../market-time/index.js';
import type { AsOf } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import { MARKET_CLOSED } from '../no-data.js';
import type { NoData } from '../types.js';
import { heldContractTable } from './contract-table.js';

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

/**
 * Whether the store holds any contract of the underlying (optionally of one root). From the underlying's
 * contract table when the session cache holds it (a chain asked of a root without monthlies for its front
 * month has read it, and found no group), else by a statement: one per such request cost some 1.5 ms of
 * CPU over DuckDB's threads on the 213 M-row bench store.
 */
export async function underlyingKnown(
  sql: SqlSession,
  cache: StoreCache,
  underlying: string,
  root?: string,
): Promise<boolean> {
  const table = await heldContractTable(cache, underlying)?.catch(() => undefined);
  if (table !== undefined) {
    // A table's roots are those of its contracts (`rootIndices`).
    return root === undefined ? table.count > 0 : table.roots.includes(root);
  }
  const found = await sql.value<number>(
    root === undefined
      ? 'SELECT count(*) FROM (SELECT 1 FROM contracts WHERE underlying = $underlying LIMIT 1)'
      : 'SELECT count(*) FROM (SELECT 1 FROM contracts WHERE underlying = $underlying AND root = $root LIMIT 1)',
    root === undefined ? { underlying } : { underlying, root },
  );
  return Number(found) > 0;
}
