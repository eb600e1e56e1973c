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
import type { FillQuote } from './fills.js';

/** A price as of an instant, with when it was quoted. */
export type Quote = FillQuote & { readonly mid: number | null; readonly time: number | null };

/** Counts the credits of the runner's own requests. */
export class MarketReader {
  credits = 0;

  constructor(private readonly store: Store) {}

  /**
   * Option quotes at a view's instant for many contracts: one chain request per underlying and
   * expiration (a backtest's loop keeps these in the store's read-ahead), then looked up by symbol.
   */
  async optionQuotes(
    view: PointInTimeView,
    contracts: readonly ContractTerms[],
  ): Promise<Map<string, Quote>> {
    const groups = new Map<string, { underlying: string; expiration: string }>();
    for (const contract of contracts) {
      groups.set(`${contract.underlying}|${contract.expiration}`, {
        underlying: contract.underlying,
        expiration: contract.expiration,
      });
    }
    const quotes = new Map<string, Quote>();
    for (const { underlying, expiration } of groups.values()) {
      const chain = await this.answered(() => view.options.chain(underlying, { expiration }));
      if (chain === undefined) continue;
      const { optionSymbol, bid, ask, last, mid, updated } = chain.columns;
      for (let i = 0; i < chain.length; i++) {
        quotes.set(optionSymbol[i]!, {
          bid: bid[i] ?? null,
          ask: ask[i] ?? null,
          last: last[i] ?? null,
          mid: mid[i] ?? null,
          time: updated[i] ?? null,
        });
      }
    }
    // Billed as the option-quotes requests a user marking these contracts would make: 1 credit per
    // contract with a quote (one chain request per expiration is only how the store reads them fast).
    this.credits += contracts.filter((contract) => quotes.has(contract.symbol)).length;
    return quotes;
  }

  private readonly dailyCloses = new Map<string, Promise<{ t: number[]; c: number[] } | undefined>>();

  /**
   * A stock's latest daily close known at `now` (a session's bar is known at its close), from the bars
   * of the whole run read once per symbol: marks every session without a stock quote request each.
   */
  async stockClose(symbol: string, now: number, from: string, to: string): Promise<Quote | undefined> {
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
    return {
      bid: null,
      ask: null,
      mid: null,
      last: close,
      time: sessionCloseSeconds(toEtDate(found.t[latest]!)),
    };
  }

  /** A stock's quote at a view's instant (the service delays stock quotes for non-professionals). */
  async stockQuote(view: PointInTimeView, symbol: string): Promise<Quote | undefined> {
    const result = await this.answered(() => view.stocks.quotes(symbol));
    if (result === undefined || result.length === 0) return undefined;
    this.credits += result.meta.credits;
    const column = (name: string) => (result.columns[name]?.[0] as number | null | undefined) ?? null;
    const bid = column('bid');
    const ask = column('ask');
    return { bid, ask, last: column('last'), mid: column('mid'), time: column('updated') };
  }

  /** A contract's terms as the store lists them, or undefined when it lists no such contract. */
  async contractTerms(symbol: string): Promise<ContractTerms | undefined> {
    return (await this.store.contracts([symbol]))[0];
  }

  /**
   * The settlement value of an underlying on its expiration session: the opening price (`AM`) or the
   * closing price (`PM`) from the store's daily bars; without bars, the close the option snapshots of
   * that session carry, and a warning says so.
   */
  async settlementValue(
    underlying: string,
    session: string,
    style: 'AM' | 'PM',
    afterSeconds: number,
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
    const price = chain?.columns.underlyingPrice.find((value) => value !== null);
    if (chain === undefined || price === undefined || price === null) return undefined;
    this.credits += chain.meta.credits;
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
