/**
 * What the runner itself reads from the store, besides what the strategy asks: the prices that mark and
 * fill positions (through a strict view at the instant, like the strategy's), settlement values of
 * expiring contracts, and splits. Every read goes through the library's faces, so the point-in-time
 * rules are the store's own, and every request's credits are counted.
 */
import { MarketDataError } from '../errors.js';
import type { ContractTerms, Split, Store } from '../library/store.js';
import type { PointInTimeView } from '../library/view.js';
import { sessionCloseSeconds, toEtDate } from '../market-time/index.js';
import type { Quote } from './quotes.js';

/** A price as of an instant, with when it was quoted. */
export type Price = { readonly price: number; readonly time: number };

/** Counts the credits of the runner's own requests. */
export class MarketReader {
  credits = 0;

  constructor(private readonly store: Store) {}

  /**
   * Option quotes at a view's instant, one option-quotes request per contract: in a backtest's loop the
   * store answers each from its read-ahead block of the underlying, so a mark costs a lookup.
   */
  async optionQuotes(
    view: PointInTimeView,
    contracts: readonly ContractTerms[],
  ): Promise<Map<string, Quote>> {
    const quotes = new Map<string, Quote>();
    for (const contract of contracts) {
      const result = await this.answered(() => view.options.quotes(contract.symbol));
      if (result === undefined || result.length === 0) continue;
      this.credits += result.meta.credits;
      const c = result.columns;
      quotes.set(contract.symbol, {
        bid: c.bid[0] ?? null,
        ask: c.ask[0] ?? null,
        bidSize: c.bidSize[0] ?? null,
        askSize: c.askSize[0] ?? null,
        mid: c.mid[0] ?? null,
        last: c.last[0] ?? null,
        time: c.updated[0] ?? null,
        underlyingPrice: c.underlyingPrice[0] ?? null,
        iv: c.iv[0] ?? null,
        delta: c.delta[0] ?? null,
        gamma: c.gamma[0] ?? null,
        theta: c.theta[0] ?? null,
        vega: c.vega[0] ?? null,
      });
    }
    return quotes;
  }

  private readonly dailyCloses = new Map<string, Promise<{ t: number[]; c: number[] } | undefined>>();

  /**
   * A stock's latest daily close known at `now` (a session's bar is known at its close), from the bars
   * of the whole run read once per symbol: marks every session without a stock quote request each.
   */
  async stockClose(symbol: string, now: number, from: string, to: string): Promise<Price | undefined> {
    let bars = this.dailyCloses.get(symbol);
    if (bars === undefined) {
      bars = this.answered(() =>
        this.store.stocks.candles(
          'D',
          symbol,
          { from, to, adjustsplits: false, adjustdividends: false },
          { now: sessionCloseSeconds(to) + 10 * 3600 },
        ),
      ).then((result) => {
        if (result === undefined) return undefined;
        this.credits += result.meta.credits;
        return { t: result.columns.t, c: result.columns.c };
      });
      this.dailyCloses.set(symbol, bars);
    }
    const found = await bars;
    if (found === undefined) return undefined;
    // The bar starting at t belongs to the session of t; it is known at that session's close.
    let latest = -1;
    for (let i = 0; i < found.t.length; i++) {
      if (sessionCloseSeconds(toEtDate(found.t[i]!)) <= now) latest = i;
      else break;
    }
    if (latest === -1) return undefined;
    // The bars are as traded: a split between the bar's session and now divides its price.
    const barSession = toEtDate(found.t[latest]!);
    const today = toEtDate(now);
    let close = found.c[latest]!;
    for (const split of await this.splitList()) {
      if (split.symbol === symbol && split.exDate > barSession && split.exDate <= today) close /= split.ratio;
    }
    return { price: close, time: sessionCloseSeconds(barSession) };
  }

  /** A stock's quote at a view's instant (the service delays stock quotes for non-professionals). */
  async stockQuote(view: PointInTimeView, symbol: string): Promise<Quote | undefined> {
    const result = await this.answered(() => view.stocks.quotes(symbol));
    if (result === undefined || result.length === 0) return undefined;
    this.credits += result.meta.credits;
    const column = (name: 'bid' | 'ask' | 'bidSize' | 'askSize' | 'last' | 'mid' | 'updated') =>
      result.columns[name]?.[0] ?? null;
    return {
      bid: column('bid'),
      ask: column('ask'),
      bidSize: column('bidSize'),
      askSize: column('askSize'),
      mid: column('mid'),
      last: column('last'),
      time: column('updated'),
    };
  }

  /**
   * The settlement value of an underlying on its expiration session: the opening price (`AM`) or the
   * closing price (`PM`) from the store's daily bars; without bars, the close the option snapshots of
   * that session carry (a chain's, else the expiring contract `symbol`'s own), with a warning for AM.
   */
  async settlementValue(
    underlying: string,
    session: string,
    style: 'AM' | 'PM',
    afterSeconds: number,
    symbol?: string,
  ): Promise<{ value: number; approximate?: string } | undefined> {
    const bars = await this.answered(() =>
      this.store.stocks.candles(
        'D',
        underlying,
        { date: session, adjustsplits: false, adjustdividends: false },
        { now: afterSeconds },
      ),
    );
    if (bars !== undefined && bars.length > 0) {
      this.credits += bars.meta.credits;
      const value = style === 'AM' ? bars.columns.o[0] : bars.columns.c[0];
      if (value !== undefined && value !== null) return { value };
    }
    const chain = await this.answered(() =>
      this.store.options.chain(underlying, { date: session, strikeLimit: 1 }, { now: afterSeconds }),
    );
    let price = chain?.columns.underlyingPrice.find((value) => value !== null) ?? null;
    if (chain !== undefined) this.credits += chain.meta.credits;
    if (price === null && symbol !== undefined) {
      // The expiring contract's own snapshot of that session carries the underlying's price too.
      const quote = await this.answered(() =>
        this.store.options.quotes(symbol, { date: session }, { now: afterSeconds }),
      );
      if (quote !== undefined) {
        this.credits += quote.meta.credits;
        price = quote.columns.underlyingPrice.find((value) => value !== null) ?? null;
      }
    }
    if (price === null) return undefined;
    return style === 'AM'
      ? {
          value: price,
          approximate: `${underlying} ${session}: AM settlement taken from the session's closing price (the store has no opening price of ${underlying})`,
        }
      : { value: price };
  }

  private splitsRead: Promise<readonly Split[]> | undefined;

  /** The store's splits in ex-date order (read once). */
  splitList(): Promise<readonly Split[]> {
    this.splitsRead ??= this.store.splits();
    return this.splitsRead;
  }

  /** A result, or undefined for a no-data answer or an unknown symbol (404). */
  private async answered<T extends { meta: { noData?: true } }>(
    ask: () => Promise<T>,
  ): Promise<T | undefined> {
    try {
      const result = await ask();
      return result.meta.noData ? undefined : result;
    } catch (error) {
      if (error instanceof MarketDataError && error.status === 404) return undefined;
      throw error;
    }
  }
}
