/**
 * The backtest runner's public shapes: what a strategy is and sees, what it may order, how orders fill,
 * and the report a run ends with.
 */
import type { Store } from '../library/store.js';
import type { PointInTimeView } from '../library/view.js';
import type { OptionSide } from '../occ/index.js';

/** An order: a signed quantity of an OCC option symbol (contracts) or a stock symbol (shares). */
export type Order = {
  /** An OCC option symbol (`SPY200417P00240000`) or a stock symbol (`AAPL`). */
  readonly symbol: string;
  /** Positive buys, negative sells; contracts for options, shares for stock. */
  readonly quantity: number;
  /** A label carried to the trade (e.g. `open`, `take profit`). */
  readonly tag?: string;
};

/** What a position holds: an option contract or shares of a stock. */
export type Position = {
  readonly symbol: string;
  readonly kind: 'option' | 'stock';
  /** Signed: contracts for options, shares for stock. */
  readonly quantity: number;
  /** The average price paid (or received, for a short position) per unit, in the quote's units. */
  readonly averagePrice: number;
  /** Dollars per unit of price: 100 for an option contract (shares per contract), 1 for a share. */
  readonly multiplier: number;
  readonly underlying: string;
  /** The session the position was opened. */
  readonly openedOn: string;
  /** Options: the contract's terms. */
  readonly expiration?: string;
  readonly side?: OptionSide;
  readonly strike?: number;
  readonly settlement?: 'AM' | 'PM';
  /** The latest price known at the decision instant (the mid, else the last trade), null if none. */
  readonly mark: number | null;
  /** When that price was quoted (epoch seconds), null if none. */
  readonly markTime: number | null;
};

/** A change of holdings: an order's fill, or what an expiration, an exercise or a split did. */
export type Trade = {
  readonly session: string;
  /** The instant of the fill or event (epoch seconds). */
  readonly time: number;
  readonly symbol: string;
  readonly quantity: number;
  /** The price per unit (for an expiration, the settlement value of the contract). */
  readonly price: number;
  readonly commission: number;
  /** The cash it moved, in dollars: negative for a purchase, positive for a sale. */
  readonly cashFlow: number;
  readonly reason: 'order' | 'expiration' | 'assignment' | 'exercise' | 'split';
  readonly tag?: string;
};

/** An order that could not be filled, and why. */
export type RejectedOrder = Order & { readonly session: string; readonly reason: string };

/**
 * The price an order fills at, from the quote: `mid`; `bid-ask` (buy at the ask, sell at the bid); or
 * `{ spread: f }`, a fraction f of the half-spread from the mid toward the side that costs (0 = mid,
 * 1 = bid-ask; ORATS's 2-leg rule of 66% of the spread is about `{ spread: 0.66 }`).
 */
export type FillModel = 'mid' | 'bid-ask' | { readonly spread: number };

/** A strategy's view of one session at its decision instant. */
export type StrategyContext = {
  /** The session (Eastern date). */
  readonly session: string;
  /** The decision instant (epoch seconds). */
  readonly now: number;
  /** The store as known at `now`, with the strict look-ahead policy: the only market data a strategy sees. */
  readonly view: PointInTimeView;
  /** The positions held, marked with the prices known at `now`. */
  readonly positions: readonly Position[];
  readonly cash: number;
  /** Cash plus the positions at their marks. */
  readonly equity: number;
};

/** A strategy: called at every session's decision instant, it returns the orders to place. */
export type Strategy = {
  readonly name?: string;
  /** Called once before the first session of every run: where a strategy resets the state it keeps. */
  onStart?(): void | Promise<void>;
  onSession(context: StrategyContext): readonly Order[] | undefined | Promise<readonly Order[] | undefined>;
};

/** Costs and fills of a run. */
export type ExecutionOptions = {
  /** How an order's price is taken from the quote (default `mid`). */
  readonly fill?: FillModel;
  /** Fill at the quote the decision saw (`decision`, default) or at the next snapshot, the session's close (`next`). */
  readonly fillAt?: 'decision' | 'next';
  /** Dollars per unit of price added against every fill (per option leg; per share for stock). Default 0. */
  readonly slippage?: number;
  /** Dollars per option contract (default 0.65) and per share of stock (default 0). */
  readonly commission?: { readonly option?: number; readonly stock?: number };
};

/** A run: a store, a period, a decision time, a strategy and its execution. */
export type BacktestOptions = ExecutionOptions & {
  readonly store: Store;
  /** First and last session (Eastern dates, inclusive). */
  readonly from: string;
  readonly to: string;
  /** The decision time, Eastern wall clock (default `15:45`; on early-close days the same time before the close). */
  readonly at?: string;
  readonly strategy: Strategy;
  /** Starting cash in dollars (default 100,000). */
  readonly cash?: number;
  /** `computed`: IV and Greeks computed point-in-time from the quotes (`store.at(T, { greeks })`). */
  readonly greeks?: 'vendor' | 'computed';
  /** Called after each session with how far the run is. */
  readonly onProgress?: (done: number, total: number, session: string) => void;
};

/** One point of the equity curve: the account marked at a session's decision instant, after its orders. */
export type EquityPoint = {
  readonly session: string;
  readonly cash: number;
  readonly positionsValue: number;
  readonly equity: number;
};

/** What a run did and what it would have cost. */
export type BacktestReport = {
  readonly strategy: string;
  readonly from: string;
  readonly to: string;
  readonly at: string;
  readonly dataVersion: string;
  readonly fill: string;
  readonly startingCash: number;
  readonly trades: readonly Trade[];
  readonly rejected: readonly RejectedOrder[];
  readonly equity: readonly EquityPoint[];
  readonly finalPositions: readonly Position[];
  readonly pnl: number;
  /** The largest fall of equity from a previous peak, in dollars (positive), and as a fraction of that peak. */
  readonly maxDrawdown: number;
  readonly maxDrawdownPct: number;
  /** Credits the same requests would have cost on the service: the strategy's, the runner's marks and fills. */
  readonly credits: number;
  readonly creditsByPart: { readonly strategy: number; readonly runner: number };
  /** Requests the strategy made, and how many of them held values known after their decision instant. */
  readonly requests: number;
  readonly lookAheadReads: number;
  /** What the run had to approximate (e.g. a settlement value the store could not give). */
  readonly warnings: readonly string[];
};
