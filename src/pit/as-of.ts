/**
 * The as-of of a question (semantics §4–§5): a dated session D, or "current" at a cutoff that a mode
 * derives from the clock T. Every other module takes an `AsOf` and never derives one from instants.
 */
import {
  etWallToSeconds,
  indexOptionCloseSeconds,
  isSession,
  previousSession,
  sessionOpenSeconds,
  toEtDate,
} from '../market-time/index.js';

/**
 * What a question is answered as of:
 * - `dated`: a `date=D` request: D's latest snapshot, OI settled from D−1, Greeks null.
 * - `current`: the latest value of each field known at `cutoffSeconds` (quotes: q ≤ cutoff; volume:
 *   its stamp v ≤ cutoff; OI: published ≤ cutoff), restricted to sessions' latest snapshots of sessions
 *   ≤ `maxSession` when `eodOnly` (modes eod and historical). Values not known at the cutoff are null.
 */
export type AsOf =
  | { readonly kind: 'dated'; readonly session: string }
  | {
      readonly kind: 'current';
      readonly cutoffSeconds: number;
      readonly eodOnly: boolean;
      readonly maxSession: string | null;
    };

/** A current as-of: the latest value of each field known at a cutoff. */
export type CurrentAsOf = Extract<AsOf, { kind: 'current' }>;

/** The freshness modes that resolve to a cutoff (`cached` reads the response cache instead). */
export type FreshMode = 'live' | 'delayed' | 'eod' | 'historical';

/** How far `delayed` lags the clock. */
export const DELAY_SECONDS = 15 * 60;

/** The as-of of a current request in a mode at clock T (semantics §5). */
export function currentAsOf(mode: FreshMode, nowSeconds: number): AsOf {
  switch (mode) {
    case 'live':
      return { kind: 'current', cutoffSeconds: nowSeconds, eodOnly: false, maxSession: null };
    case 'delayed':
      return { kind: 'current', cutoffSeconds: nowSeconds - DELAY_SECONDS, eodOnly: false, maxSession: null };
    case 'eod':
      return eodAsOf(latestSession(nowSeconds, indexOptionCloseSeconds), nowSeconds);
    case 'historical':
      return eodAsOf(previousSession(latestSession(nowSeconds, sessionOpenSeconds)), nowSeconds);
  }
}

/**
 * The as-of that serves a session's end of day: its latest snapshot known by T, whatever its clock time
 * (§3.1). The cutoff runs to the end of the session's calendar day in ET, so that a snapshot taken after
 * an early close (13:00) or after the 16:15 index close still belongs to its session, but never past T.
 */
function eodAsOf(session: string, nowSeconds: number): AsOf {
  return {
    kind: 'current',
    cutoffSeconds: Math.min(nowSeconds, endOfEtDay(session)),
    eodOnly: true,
    maxSession: session,
  };
}

/** The last second of an ET calendar date. */
function endOfEtDay(date: string): number {
  return etWallToSeconds(date, '23:59:59');
}

/** The latest session S whose `instantOf(S)` is at or before T. */
function latestSession(nowSeconds: number, instantOf: (session: string) => number): string {
  const today = toEtDate(nowSeconds);
  if (isSession(today) && instantOf(today) <= nowSeconds) return today;
  return previousSession(today);
}

/**
 * The session an as-of answers for: D when dated; for a current answer the session whose end of day it
 * serves (modes eod and historical), else the session holding the cutoff, or the last one before a closed
 * day. Contracts that expired before it are no longer listed.
 */
export function asOfSession(asOf: AsOf): string {
  if (asOf.kind === 'dated') return asOf.session;
  if (asOf.eodOnly && asOf.maxSession !== null) return asOf.maxSession;
  const date = toEtDate(asOf.cutoffSeconds);
  return isSession(date) ? date : previousSession(date);
}

/**
 * The last calendar date whose snapshots a current as-of may use: the session it serves with `eodOnly`,
 * else the cutoff's date.
 */
export function lastSessionOf(asOf: CurrentAsOf): string {
  return asOf.eodOnly && asOf.maxSession !== null ? asOf.maxSession : toEtDate(asOf.cutoffSeconds);
}

/** The instant that names a session in `nextTime`/`prevTime`: 16:00 ET of its date. */
export function sessionEndSeconds(session: string): number {
  return etWallToSeconds(session, '16:00');
}

/** A stable text key of an as-of, for caches. */
export function asOfKey(asOf: AsOf): string {
  return asOf.kind === 'dated'
    ? `dated:${asOf.session}`
    : `current:${asOf.cutoffSeconds}:${asOf.eodOnly}:${asOf.maxSession}`;
}
