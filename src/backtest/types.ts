/**
 * The backtest runner's public shapes: what a strategy is and sees, what it may order, how orders fill,
 * what the account may hold, and the report a run ends with.
 */

import type { Store } from '../library/store.js';
import type { PointInTimeView } from '../library/view.js';
import type { OptionSide } from '../occ/index.js';

/** One leg of an order: a signed quantity of an OCC option symbol (contracts) or a stock symbol (shares). */
export type OrderLeg = {
  /** An OCC option symbol (`SPY200417P00240000`) or a stock symbol (`AAPL`). */
  readonly symbol: string;
  /** Positive buys, negative sells; contracts for options, shares for stock. */
  readonly quantity: number;
};

/**
 * The worst net price an order accepts, in price units (dollars ÷ 100): the sum over its legs of
 * quantity × price × multiplier ÷ 100, positive for a debit paid, negative for a credit received. An
 * order fills only at a net price ≤ `limit`: a spread sold for at least 1.20 has `limit: -1.2`, one bought
 * for at most 2.50 `limit: 2.5`; a buy-write of 100 shares and one short call is quoted as the share
 * price less the call's.
 */
type Limit = { readonly limit?: number };

/** A single order: one leg, with an optional limit and a label carried to its trade. */
export type SingleOrder = OrderLeg & Limit & { readonly tag?: string };

/** A combo order: every leg fills or none does, at a net price that respects the limit. */
export type ComboOrder = Limit & { readonly legs: readonly OrderLeg[]; readonly tag?: string };

/** What a strategy may order. */
export type Order = SingleOrder | ComboOrder;

/** Where a position's mark came from (see docs/backtest.md, "Marks"). */
export type MarkSource =
  /** The mid of a valid quote no older than `maxQuoteAge`. */
  | 'quote'
  /** The mid of a valid quote older than `maxQuoteAge` (counted in the report). */
  | 'stale'
  /** No valid quote: the last valid implied volatility repriced at the current underlying. */
  | 'model'
  /** No valid quote and no model: the last valid mark carried. */
  | 'last'
  /** No valid quote, in its expiration session after the close: the intrinsic value at the underlying. */
  | 'intrinsic'
  /** Not marked yet: the fill price. */
  | 'fill';

/** The portfolio Greeks, or one position's: per-contract Greek × quantity × multiplier. */
export type Greeks = {
  readonly delta: number;
  readonly gamma: number;
  readonly theta: number;
  readonly vega: number;
};

/** What every position has. */
type PositionBase = {
  readonly symbol: string;
  /** Signed: contracts for options, shares for stock. */
  readonly quantity: number;
  /** The average price paid (or received, for a short position) per unit, in the quote's units. */
  readonly averagePrice: number;
  /** Dollars per unit of price: 100 for an option contract (shares per contract), 1 for a share. */
  readonly multiplier: number;
  readonly underlying: string;
  /** The session the position was opened. */
  readonly openedOn: string;
  /** The latest price known at the decision instant, null if none. */
  readonly mark: number | null;
  /** When the quote behind that price was quoted (epoch seconds; a model mark: the underlying's), null if none. */
  readonly markTime: number | null;
  readonly markSource: MarkSource;
};

/** An option contract held. */
export type OptionPosition = PositionBase & {
  readonly kind: 'option';
  readonly expiration: string;
  readonly side: OptionSide;
  readonly strike: number;
  readonly settlement: 'AM' | 'PM';
};

/** Shares of a stock (or ETF) held. */
export type StockPosition = PositionBase & { readonly kind: 'stock' };

/** What a position holds: an option contract or shares of a stock. */
export type Position = OptionPosition | StockPosition;

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
  /** The order it filled (every leg of a combo shares it); null for events. */
  readonly orderId: number | null;
  /** The `updated` (epoch seconds) of the quote the fill used; null for events that used no quote. */
  readonly quoteTime: number | null;
};

/** An order that could not be filled, and why (for a combo, the leg and its reason). */
export type RejectedOrder = Order & { readonly session: string; readonly reason: string };

/**
 * The price an order fills at, from the quote: `mid`; `bid-ask` (buy at the ask, sell at the bid); or
 * `{ spread: f }`, a fraction f of the half-spread from the mid toward the side that costs (0 = mid,
 * 1 = bid-ask; ORATS's 2-leg rule of 66% of the spread is about `{ spread: 0.66 }`).
 */
export type FillModel = 'mid' | 'bid-ask' | { readonly spread: number };

/** A strategy's parameters: named scalars, with defaults on the strategy and overrides on the run. */
export type StrategyParameters = Readonly<Record<string, string | number | boolean>>;

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
  /** What the positions require under the account's margin rules (dollars). */
  readonly marginUsed: number;
  /** Equity less margin used: what new positions may still take. */
  readonly buyingPower: number;
  /** The strategy's parameters: `{ ...strategy.parameters, ...options.parameters }`. */
  readonly parameters: StrategyParameters;
};

/** A strategy: called at every session's decision instant, it returns the orders to place. */
export type Strategy = {
  readonly name?: string;
  /** Default parameters, overridden by `BacktestOptions.parameters`. */
  readonly parameters?: StrategyParameters;
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
  /**
   * The oldest quote a fill may use, in seconds before the fill instant (default 900, 15 minutes): an
   * order on an older quote is rejected, a mark on one is counted as stale.
   */
  readonly maxQuoteAge?: number;
};

/** A run: a store, a period, a decision time, a strategy, its execution and its account. */
export type BacktestOptions = ExecutionOptions & {
  readonly store: Store;
  /** First and last session (Eastern dates, inclusive), within the sessions the store holds. */
  readonly from: string;
  readonly to: string;
  /**
   * The decision time, Eastern wall clock (default `16:00`, the end-of-day snapshot). On early-close days
   * a time before 16:00 keeps its distance to the close (15:45 is 12:45); 16:00 stays 16:00, where
   * end-of-day snapshots are stamped every day.
   */
  readonly at?: string;
  readonly strategy: Strategy;
  /** Overrides of the strategy's default parameters. */
  readonly parameters?: StrategyParameters;
  /** Starting cash in dollars (default 100,000). */
  readonly cash?: number;
  /** `margin` (default): Cboe strategy-based margin, Reg T 50 % on stock; `cash`: everything paid or secured in full. */
  readonly account?: 'cash' | 'margin';
  /** Annual interest on cash, simple, by calendar day (0.02 = 2 %; a negative balance pays it). Default 0. */
  readonly cashRate?: number;
  /** The annual risk-free rate the report's Sharpe and Sortino excess returns are measured over (default 0). */
  readonly riskFreeRate?: number;
  /**
   * An expiring position whose settlement value the store cannot give: `error` (default) stops the run;
   * `last-price` settles at the last underlying price known and says so in the warnings.
   */
  readonly missingSettlement?: 'error' | 'last-price';
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
  /** What the positions require under the account's margin rules (dollars). */
  readonly marginUsed: number;
  /** The portfolio's Greeks (stock adds its shares to delta). */
  readonly greeks: Greeks;
};

/** A contract marked without a fresh valid quote: how, how often, and over which sessions. */
export type MarkNote = {
  readonly symbol: string;
  readonly source: 'stale' | 'model' | 'last';
  readonly sessions: number;
  readonly first: string;
  readonly last: string;
};

/** What a run did and what it would have cost. */
export type BacktestReport = {
  readonly strategy: string;
  readonly from: string;
  readonly to: string;
  readonly at: string;
  readonly dataVersion: string;
  readonly fill: string;
  readonly account: 'cash' | 'margin';
  readonly maxQuoteAge: number;
  readonly parameters: StrategyParameters;
  readonly startingCash: number;
  readonly trades: readonly Trade[];
  readonly rejected: readonly RejectedOrder[];
  readonly equity: readonly EquityPoint[];
  readonly finalPositions: readonly Position[];
  readonly pnl: number;
  /** Interest earned (or paid) on cash at `cashRate`, included in the P&L. */
  readonly interest: number;
  /**
   * The largest fall of equity from a previous peak (the starting cash included), in dollars (positive) and
   * as a fraction of that peak: `statistics.maxDrawdown`'s amount and fraction (rounded to 4 places).
   */
  readonly maxDrawdown: number;
  readonly maxDrawdownPct: number;
  /** Credits the same requests would have cost on the service: the strategy's, the runner's marks and fills. */
  readonly credits: number;
  readonly creditsByPart: { readonly strategy: number; readonly runner: number };
  /** Requests the strategy made, and how many of them held values known after their decision instant. */
  readonly requests: number;
  readonly lookAheadReads: number;
  /** Marks not taken from a fresh valid quote, counted by source and listed per contract. */
  readonly marks: { readonly stale: number; readonly model: number; readonly last: number };
  readonly markNotes: readonly MarkNote[];
  /** What the run had to approximate (e.g. a settlement value the store could not give). */
  readonly warnings: readonly string[];
  /** What a quant reads first, from the equity curve and the round trips (`statistics.ts`). */
  readonly statistics: BacktestStatistics;
  /** The positions from open to close, the legs of one order together (`round-trips.ts`). */
  readonly roundTrips: readonly RoundTrip[];
};

/** One leg of a round trip: a symbol and the quantity its opening order bought (+) or sold (−). */
export type RoundTripLeg = { readonly symbol: string; readonly quantity: number };

/** A position from the order that opened it to the trades that closed it. */
export type RoundTrip = {
  /** 1, 2, … in the order the round trips opened. */
  readonly id: number;
  /** The order that opened it (null: opened by an event, e.g. shares delivered by an assignment). */
  readonly orderId: number | null;
  /** The legs as opened (after any split: the adjusted symbol and quantity). */
  readonly legs: readonly RoundTripLeg[];
  readonly tag?: string;
  readonly openSession: string;
  readonly openTime: number;
  /** null while open. */
  readonly closeSession: string | null;
  readonly closeTime: number | null;
  readonly status: 'open' | 'closed';
  /** The reasons of the closing trades, in order, without repeats (e.g. `order`, `expiration`). */
  readonly closedBy: readonly string[];
  /** Dollars the opening fills moved: positive for a credit received, negative for a debit paid. */
  readonly entryCashFlow: number;
  /** Dollars the closing fills moved (so far, for an open round trip). */
  readonly exitCashFlow: number;
  readonly commissions: number;
  /** entry + exit cash flow, once closed; null while open (its value is in the equity curve, not here). */
  readonly pnl: number | null;
  /** How many trades it holds (split trades included). */
  readonly trades: number;
};

/** The largest drawdown of a curve: how deep, when, and how long. */
export type Drawdown = {
  /** The fall as a fraction of the peak (0.1 = 10 %). */
  readonly fraction: number;
  /** The same fall in dollars. */
  readonly amount: number;
  /** The session of the peak (`start`: the starting cash), of the trough, and of the recovery (null: not yet). */
  readonly peak: string | null;
  readonly trough: string | null;
  readonly recovery: string | null;
  /** Sessions from the peak to the recovery, or to the last session when not recovered. */
  readonly sessions: number;
};

/** What a quant reads first (`statistics.ts` computes them and states their conventions). */
export type BacktestStatistics = {
  readonly sessions: number;
  readonly startEquity: number;
  readonly endEquity: number;
  readonly totalReturn: number | null;
  readonly cagr: number | null;
  readonly volatility: number | null;
  readonly riskFreeRate: number;
  readonly sharpe: number | null;
  readonly sortino: number | null;
  readonly maxDrawdown: Drawdown;
  readonly calmar: number | null;
  readonly roundTrips: number;
  readonly openRoundTrips: number;
  readonly wins: number;
  readonly losses: number;
  readonly winRate: number | null;
  readonly profitFactor: number | null;
  readonly averageWin: number | null;
  readonly averageLoss: number | null;
  readonly expectancy: number | null;
  readonly timeInMarket: number | null;
  readonly credits: number | null;
};
