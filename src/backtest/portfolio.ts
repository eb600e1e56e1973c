/**
 * The account of a run: cash, positions and the trades that changed them. Pure arithmetic: fills,
 * expirations (cash settlement or delivery), splits and marks; the runner decides when each happens.
 */
import type { ContractTerms } from '../library/store.js';
import { formatOccSymbol } from '../occ/index.js';
import { roundCash, roundPrice } from './fills.js';
import type { Position, Trade } from './types.js';

/** Shares per standard equity option contract, and the multiplier of index options. */
export const CONTRACT_MULTIPLIER = 100;

type Holding = {
  -readonly [K in keyof Position]: Position[K];
};

/** Cash, positions by symbol, and every trade. */
export class Portfolio {
  cash: number;
  readonly trades: Trade[] = [];
  private readonly holdings = new Map<string, Holding>();

  constructor(startingCash: number) {
    this.cash = startingCash;
  }

  /** The positions held, in the order they were opened. */
  positions(): Position[] {
    return [...this.holdings.values()].map((holding) => ({ ...holding }));
  }

  /** The option positions held, with their contract terms. */
  optionTerms(): ContractTerms[] {
    const terms: ContractTerms[] = [];
    for (const h of this.holdings.values()) {
      if (h.kind !== 'option') continue;
      terms.push({
        symbol: h.symbol,
        underlying: h.underlying,
        root: rootOf(h.symbol),
        expiration: h.expiration!,
        side: h.side!,
        strike: h.strike!,
        settlement: h.settlement!,
      });
    }
    return terms;
  }

  /** The stock symbols held. */
  stockSymbols(): string[] {
    return [...this.holdings.values()].filter((h) => h.kind === 'stock').map((h) => h.symbol);
  }

  /** Sets a position's mark (the latest price known at the decision instant). */
  mark(symbol: string, price: number | null, time: number | null): void {
    const holding = this.holdings.get(symbol);
    if (holding === undefined || price === null) return;
    holding.mark = price;
    holding.markTime = time;
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

  /**
   * Books a fill of `quantity` at `price` (per unit) with its commission: cash moves, the position grows,
   * shrinks, closes or flips; the average price is that of the units still held.
   */
  fill(
    session: string,
    time: number,
    instrument: { kind: 'option'; terms: ContractTerms } | { kind: 'stock'; symbol: string },
    quantity: number,
    price: number,
    commission: number,
    reason: Trade['reason'],
    tag?: string,
  ): Trade {
    const symbol = instrument.kind === 'option' ? instrument.terms.symbol : instrument.symbol;
    const multiplier = instrument.kind === 'option' ? CONTRACT_MULTIPLIER : 1;
    const cashFlow = roundCash(-quantity * price * multiplier - commission);
    this.cash = roundCash(this.cash + cashFlow);
    const held = this.holdings.get(symbol);
    if (held === undefined) {
      this.holdings.set(symbol, {
        symbol,
        kind: instrument.kind,
        quantity,
        averagePrice: price,
        multiplier,
        underlying: instrument.kind === 'option' ? instrument.terms.underlying : instrument.symbol,
        openedOn: session,
        ...(instrument.kind === 'option'
          ? {
              expiration: instrument.terms.expiration,
              side: instrument.terms.side,
              strike: instrument.terms.strike,
              settlement: instrument.terms.settlement,
            }
          : {}),
        mark: price,
        markTime: time,
      });
    } else {
      const total = held.quantity + quantity;
      if (total === 0) {
        this.holdings.delete(symbol);
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
      reason,
      ...(tag === undefined ? {} : { tag }),
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
      let adjusted: Holding = {
        ...h,
        quantity,
        averagePrice,
        mark: h.mark === null ? null : roundPrice(h.mark / ratio),
      };
      if (h.kind === 'option') {
        const strike = Math.round((h.strike! / ratio) * 1000) / 1000;
        const newSymbol = formatOccSymbol({
          root: rootOf(h.symbol),
          expirationDate: h.expiration!,
          side: h.side!,
          strike,
        });
        adjusted = { ...adjusted, symbol: newSymbol, strike };
      }
      this.holdings.set(adjusted.symbol, adjusted);
      this.trades.push(
        {
          session,
          time,
          symbol: h.symbol,
          quantity: -h.quantity,
          price: h.averagePrice,
          commission: 0,
          cashFlow: 0,
          reason: 'split',
        },
        {
          session,
          time,
          symbol: adjusted.symbol,
          quantity,
          price: averagePrice,
          commission: 0,
          cashFlow: 0,
          reason: 'split',
        },
      );
    }
  }

  /**
   * Settles the options of `underlying` expiring on `expiration` at the underlying's settlement value:
   * index options (`cash: true`) pay their intrinsic value in cash; equity options in the money by a cent
   * or more are exercised or assigned into shares at the strike; the rest expire worthless.
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
      const strike = h.strike!;
      const intrinsic = roundPrice(
        Math.max(0, h.side === 'call' ? settlementValue - strike : strike - settlementValue),
      );
      const terms = {
        symbol: h.symbol,
        underlying: h.underlying,
        root: rootOf(h.symbol),
        expiration,
        side: h.side!,
        strike,
        settlement: h.settlement!,
      };
      if (cash || intrinsic < 0.01) {
        this.fill(session, time, { kind: 'option', terms }, -h.quantity, intrinsic, 0, 'expiration');
        continue;
      }
      // Delivery: the contract leaves at its intrinsic value and the shares arrive at the settlement
      // value, which together move exactly strike × shares of cash.
      this.fill(
        session,
        time,
        { kind: 'option', terms },
        -h.quantity,
        intrinsic,
        0,
        h.quantity > 0 ? 'exercise' : 'assignment',
      );
      const shares = h.quantity * h.multiplier * (h.side === 'call' ? 1 : -1);
      this.fill(
        session,
        time,
        { kind: 'stock', symbol: underlying },
        shares,
        settlementValue,
        0,
        h.quantity > 0 ? 'exercise' : 'assignment',
      );
    }
  }
}

/** The OCC root of a symbol: what precedes its 15-character date, side and strike. */
function rootOf(symbol: string): string {
  return symbol.slice(0, -15);
}
