/**
 * The account of a run: cash, positions and the trades that changed them. Pure arithmetic: fills,
 * expirations (cash settlement or delivery), splits and marks; the runner decides when each happens.
 */
import type { ContractTerms } from '../library/store.js';
import { formatOccSymbol } from '../occ/index.js';
import { roundCash, roundPrice } from './fills.js';
import type { Greeks, MarkSource, OptionPosition, Position, StockPosition, Trade } from './types.js';

/** Shares per standard equity option contract, and the multiplier of index options. */
export const CONTRACT_MULTIPLIER = 100;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Holding = Mutable<OptionPosition> | Mutable<StockPosition>;

/** What an order or an event trades: an option contract (with its terms) or shares. */
export type Instrument = { kind: 'option'; terms: ContractTerms } | { kind: 'stock'; symbol: string };

/** A fill to book: what, how many, at what price and cost, and which order and quote it came from. */
export type FillEntry = {
  readonly session: string;
  readonly time: number;
  readonly instrument: Instrument;
  readonly quantity: number;
  readonly price: number;
  readonly commission: number;
  readonly reason: Trade['reason'];
  readonly tag?: string;
  readonly orderId: number | null;
  readonly quoteTime: number | null;
};

const NO_GREEKS: Greeks = { delta: 0, gamma: 0, theta: 0, vega: 0 };

/** Cash, positions by symbol, and every trade. */
export class Portfolio {
  cash: number;
  readonly trades: Trade[] = [];
  private readonly holdings = new Map<string, Holding>();
  /** Per-unit Greeks of each option held, from its latest mark. */
  private readonly unitGreeks = new Map<string, Greeks>();

  constructor(startingCash: number) {
    this.cash = startingCash;
  }

  /** The positions held, in the order they were opened. */
  positions(): Position[] {
    return [...this.holdings.values()].map((holding) => ({ ...holding }));
  }

  /** One position, if held. */
  position(symbol: string): Position | undefined {
    const held = this.holdings.get(symbol);
    return held === undefined ? undefined : { ...held };
  }

  /** The option positions held, with their contract terms. */
  optionTerms(): ContractTerms[] {
    const terms: ContractTerms[] = [];
    for (const h of this.holdings.values()) if (h.kind === 'option') terms.push(termsOf(h));
    return terms;
  }

  /** The stock symbols held. */
  stockSymbols(): string[] {
    return [...this.holdings.values()].filter((h) => h.kind === 'stock').map((h) => h.symbol);
  }

  /** Sets a position's mark (the latest price known at the decision instant) and, for options, its Greeks. */
  mark(symbol: string, price: number, time: number | null, source: MarkSource, greeks?: Greeks): void {
    const holding = this.holdings.get(symbol);
    if (holding === undefined) return;
    holding.mark = price;
    holding.markTime = time;
    holding.markSource = source;
    if (greeks !== undefined) this.unitGreeks.set(symbol, greeks);
  }

  /** The positions at their marks, in dollars (a position never marked counts at its average price). */
  positionsValue(): number {
    let value = 0;
    for (const h of this.holdings.values()) value += h.quantity * h.multiplier * (h.mark ?? h.averagePrice);
    return roundCash(value);
  }

  /** Cash plus the positions at their marks. */
  equity(): number {
    return roundCash(this.cash + this.positionsValue());
  }

  /** The portfolio's Greeks: per-contract Greek × quantity × multiplier; shares add to delta. */
  greeks(): Greeks {
    const total = { ...NO_GREEKS };
    for (const h of this.holdings.values()) {
      if (h.kind === 'stock') {
        total.delta += h.quantity;
        continue;
      }
      const unit = this.unitGreeks.get(h.symbol) ?? NO_GREEKS;
      const size = h.quantity * h.multiplier;
      total.delta += unit.delta * size;
      total.gamma += unit.gamma * size;
      total.theta += unit.theta * size;
      total.vega += unit.vega * size;
    }
    const r = (v: number) => Math.round(v * 10_000) / 10_000 || 0;
    return { delta: r(total.delta), gamma: r(total.gamma), theta: r(total.theta), vega: r(total.vega) };
  }

  /** Adds interest (or its cost) to cash. */
  credit(amount: number): void {
    this.cash = roundCash(this.cash + amount);
  }

  /**
   * Books a fill of `quantity` at `price` (per unit) with its commission: cash moves, the position grows,
   * shrinks, closes or flips; the average price is that of the units still held.
   */
  fill(entry: FillEntry): Trade {
    const { session, time, instrument, quantity, price, commission } = entry;
    const symbol = instrument.kind === 'option' ? instrument.terms.symbol : instrument.symbol;
    const multiplier = instrument.kind === 'option' ? CONTRACT_MULTIPLIER : 1;
    const cashFlow = roundCash(-quantity * price * multiplier - commission);
    this.cash = roundCash(this.cash + cashFlow);
    const held = this.holdings.get(symbol);
    if (held === undefined) {
      const base = {
        symbol,
        quantity,
        averagePrice: price,
        multiplier,
        openedOn: session,
        mark: price,
        markTime: entry.quoteTime ?? time,
        markSource: 'fill' as MarkSource,
      };
      this.holdings.set(
        symbol,
        instrument.kind === 'option'
          ? {
              ...base,
              kind: 'option',
              underlying: instrument.terms.underlying,
              expiration: instrument.terms.expiration,
              side: instrument.terms.side,
              strike: instrument.terms.strike,
              settlement: instrument.terms.settlement,
            }
          : { ...base, kind: 'stock', underlying: instrument.symbol },
      );
    } else {
      const total = held.quantity + quantity;
      if (total === 0) {
        this.holdings.delete(symbol);
        this.unitGreeks.delete(symbol);
      } else if (Math.sign(total) !== Math.sign(held.quantity)) {
        // Flipped through zero: what is left was opened by this fill.
        held.quantity = total;
        held.averagePrice = price;
        held.openedOn = session;
      } else if (Math.sign(quantity) === Math.sign(held.quantity)) {
        held.averagePrice = roundPrice((held.averagePrice * held.quantity + price * quantity) / total);
        held.quantity = total;
      } else {
        held.quantity = total; // reduced: the units left keep their price
      }
    }
    const trade: Trade = {
      session,
      time,
      symbol,
      quantity,
      price,
      commission,
      cashFlow,
      reason: entry.reason,
      ...(entry.tag === undefined ? {} : { tag: entry.tag }),
      orderId: entry.orderId,
      quoteTime: entry.quoteTime,
    };
    this.trades.push(trade);
    return trade;
  }

  /**
   * Replaces a position by its split-adjusted one: shares × ratio at price ÷ ratio; option contracts ×
   * ratio on the strike ÷ ratio (the standard contract a whole-number split leaves).
   */
  split(session: string, time: number, symbol: string, ratio: number): void {
    for (const h of [...this.holdings.values()]) {
      if (h.underlying !== symbol) continue;
      this.holdings.delete(h.symbol);
      const quantity = h.quantity * ratio;
      const averagePrice = roundPrice(h.averagePrice / ratio);
      const mark = h.mark === null ? null : roundPrice(h.mark / ratio);
      let adjusted: Holding;
      if (h.kind === 'option') {
        const strike = Math.round((h.strike / ratio) * 1000) / 1000;
        const newSymbol = formatOccSymbol({
          root: rootOf(h.symbol),
          expirationDate: h.expiration,
          side: h.side,
          strike,
        });
        adjusted = { ...h, quantity, averagePrice, mark, symbol: newSymbol, strike };
        this.unitGreeks.delete(h.symbol);
      } else adjusted = { ...h, quantity, averagePrice, mark };
      this.holdings.set(adjusted.symbol, adjusted);
      const event = {
        session,
        time,
        commission: 0,
        cashFlow: 0,
        reason: 'split' as const,
        orderId: null,
        quoteTime: null,
      };
      this.trades.push(
        { ...event, symbol: h.symbol, quantity: -h.quantity, price: h.averagePrice },
        { ...event, symbol: adjusted.symbol, quantity, price: averagePrice },
      );
    }
  }

  /**
   * Settles the options of `underlying` expiring on `expiration` at the underlying's settlement value:
   * index options (`cash: true`) pay their intrinsic value in cash; equity options in the money by a cent
   * or more are exercised or assigned into shares at the strike (exercise by exception); the rest expire
   * worthless.
   */
  expire(
    session: string,
    time: number,
    underlying: string,
    expiration: string,
    settlementValue: number,
    cash: boolean,
  ): void {
    for (const h of [...this.holdings.values()]) {
      if (h.kind !== 'option' || h.underlying !== underlying || h.expiration !== expiration) continue;
      const intrinsic = roundPrice(
        Math.max(0, h.side === 'call' ? settlementValue - h.strike : h.strike - settlementValue),
      );
      const event = { session, time, commission: 0, orderId: null, quoteTime: null };
      const option: Instrument = { kind: 'option', terms: termsOf(h) };
      if (cash || intrinsic < 0.01) {
        this.fill({
          ...event,
          instrument: option,
          quantity: -h.quantity,
          price: intrinsic,
          reason: 'expiration',
        });
        continue;
      }
      // Delivery: the contract leaves at its intrinsic value and the shares arrive at the settlement
      // value, which together move exactly strike × shares of cash.
      const reason = h.quantity > 0 ? 'exercise' : 'assignment';
      this.fill({ ...event, instrument: option, quantity: -h.quantity, price: intrinsic, reason });
      const shares = h.quantity * h.multiplier * (h.side === 'call' ? 1 : -1);
      this.fill({
        ...event,
        instrument: { kind: 'stock', symbol: underlying },
        quantity: shares,
        price: settlementValue,
        reason,
      });
    }
  }
}

/** The contract terms of an option position. */
export function termsOf(h: OptionPosition): ContractTerms {
  return {
    symbol: h.symbol,
    underlying: h.underlying,
    root: rootOf(h.symbol),
    expiration: h.expiration,
    side: h.side,
    strike: h.strike,
    settlement: h.settlement,
  };
}

/** The OCC root of a symbol: what precedes its 15-character date, side and strike. */
export function rootOf(symbol: string): string {
  return symbol.slice(0, -15);
}
