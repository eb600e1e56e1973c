/**
 * What the runner takes as a price. The API face serves what the vendor sent; a backtest fills and marks
 * only on a two-sided market: a bid and an ask both above zero, not crossed, with size where the vendor
 * reports size. Anything else (0/0, a one-sided quote, a crossed market, a quote with no size, a last
 * trade alone) is not a price, whatever its `mid` or `last` say. Stock quotes are the exception on
 * size: the service serves a stock's last trade as bid = ask = mid with size 0 (the store keeps bars,
 * not stock quotes), and a last trade of the stock is its price. One place for the rule, so that fills,
 * marks and the report agree.
 */
import { sessionCloseSeconds, toEtDate } from '../market-time/index.js';
import { midOf as serviceMid } from '../query/options/records.js';

/** A quote as the runner reads it: bid, ask and sizes (null where the vendor gives none), and when. */
export type Quote = {
  readonly bid: number | null;
  readonly ask: number | null;
  readonly bidSize: number | null;
  readonly askSize: number | null;
  /** The service's mid ((bid + ask) / 2, half up to the cent), as the chain prints it. */
  readonly mid?: number | null;
  readonly last: number | null;
  /** The quote's `updated`, epoch seconds. */
  readonly time: number | null;
  /** Options: the underlying's price the snapshot carries, and the implied volatility served with it. */
  readonly underlyingPrice?: number | null;
  readonly iv?: number | null;
  readonly delta?: number | null;
  readonly gamma?: number | null;
  readonly theta?: number | null;
  readonly vega?: number | null;
};

/** Why a quote is not a price, or undefined when it is one. */
export function quoteProblem(
  quote: Quote | undefined,
  kind: 'option' | 'stock' = 'option',
): string | undefined {
  if (quote === undefined) return 'no quote';
  const { bid, ask } = quote;
  if (bid === null || ask === null) return 'a one-sided quote';
  if (bid <= 0 && ask <= 0) return 'a 0/0 quote';
  if (bid <= 0 || ask <= 0) return `a one-sided quote (bid ${bid}, ask ${ask})`;
  if (ask < bid) return `a crossed market (bid ${bid}, ask ${ask})`;
  // A vendor without sizes (null) is not a quote without size.
  if (kind === 'option' && (quote.bidSize === 0 || quote.askSize === 0)) return 'a quote with no size';
  return undefined;
}

/** The mark of a valid quote: the service's mid, as the strategy reads it in a chain. */
export function midOf(quote: Quote): number {
  return quote.mid ?? serviceMid(quote.bid!, quote.ask!);
}

/**
 * How old a quote is at `now`, in seconds (infinite when it carries no time). Counted up to the
 * session's close when `now` is after it: nothing newer can be quoted then, so an end-of-day snapshot
 * (stamped 16:00, or at an early close) is as fresh as the session gets.
 */
export function quoteAge(quote: { readonly time: number | null }, now: number): number {
  if (quote.time === null) return Number.POSITIVE_INFINITY;
  return Math.max(0, Math.min(now, sessionCloseSeconds(toEtDate(now))) - quote.time);
}

/** An age in words: `45 s`, `20 min`, `3.0 h`, `2.9 days`. */
export function describeAge(seconds: number): string {
  if (!Number.isFinite(seconds)) return 'of unknown age';
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 2 * 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
}
