/**
 * One backtest run and its state: the clock (the sessions and the decision instant of each), the
 * portfolio, the account's rules, and what the runner reads from the market. `backtest()` builds one
 * and runs it; each step of a session is a method, so the order of a session reads in `session()`.
 */

import { InvalidInputError, StoreError } from '../errors.js';
import type { ContractTerms, Store } from '../library/store.js';
import type { PointInTimeView } from '../library/view.js';
import {
  etWallToSeconds,
  isIndexRoot,
  sessionCloseSeconds,
  sessionOpenSeconds,
  toEtDate,
} from '../market-time/index.js';
import { isOccSymbol } from '../occ/index.js';
import { describeFill, type Execution, executionOf, fillPrice, roundCash } from './fills.js';
import { type MarginHolding, marginRequirement } from './margin.js';
import { MarketReader } from './market.js';
import { boundGroup, type GroupLeg, modelValue } from './model-marks.js';
import { type Instrument, Portfolio, termsOf } from './portfolio.js';
import { describeAge, midOf, type Quote, quoteAge, quoteProblem } from './quotes.js';
import { roundTripsOf } from './round-trips.js';
import { computeStatistics, type Drawdown, largestDrawdown } from './statistics.js';
import type {
  BacktestOptions,
  BacktestReport,
  EquityPoint,
  MarkNote,
  MarkSource,
  Order,
  OrderLeg,
  Position,
  RejectedOrder,
  StrategyContext,
  StrategyParameters,
} from './types.js';

/** The default decision time: the close, where end-of-day vendor snapshots are stamped (docs/backtest.md). */
export const DEFAULT_DECISION_TIME = '16:00';

/** A leg ready to book: its instrument, the quote it fills on, and its price. */
type PricedLeg = { leg: OrderLeg; instrument: Instrument; quote: Quote; price: number };

type MutableNote = { -readonly [K in keyof MarkNote]: MarkNote[K] };

export class BacktestRun {
  private readonly execution: Execution;
  private readonly at: string;
  private readonly decisionOffset: number;
  private readonly startingCash: number;
  private readonly account: 'cash' | 'margin';
  private readonly cashRate: number;
  private readonly parameters: StrategyParameters;
  private readonly market: MarketReader;
  private readonly portfolio: Portfolio;
  private readonly equity: EquityPoint[] = [];
  private readonly rejected: RejectedOrder[] = [];
  private readonly warnings: string[] = [];
  private requests = 0;
  private lookAheadReads = 0;
  private strategyCredits = 0;
  private interest = 0;
  private nextOrderId = 1;
  /** The latest underlying prices known (option snapshots' underlying price, stock marks). */
  private readonly underlyingPrices = new Map<string, number>();
  /** Each contract's last valid implied volatility, for model marks. */
  private readonly lastIv = new Map<string, number>();
  private readonly markCounts = { stale: 0, model: 0, last: 0 };
  private readonly markNotes = new Map<string, MutableNote>();

  constructor(
    private readonly options: BacktestOptions,
    private readonly sessions: readonly string[],
  ) {
    this.execution = executionOf(options);
    this.at = options.at ?? DEFAULT_DECISION_TIME;
    if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(this.at)) {
      throw new InvalidInputError(`at must be a time such as 16:00, not ${JSON.stringify(this.at)}`);
    }
    this.decisionOffset = etWallToSeconds('2020-01-02', this.at) - etWallToSeconds('2020-01-02', '16:00');
    this.startingCash = options.cash ?? 100_000;
    if (!Number.isFinite(this.startingCash))
      throw new InvalidInputError(`cash must be a number, not ${this.startingCash}`);
    this.account = options.account ?? 'margin';
    if (this.account !== 'cash' && this.account !== 'margin') {
      throw new InvalidInputError(`account must be 'cash' or 'margin', not ${JSON.stringify(this.account)}`);
    }
    this.cashRate = options.cashRate ?? 0;
    if (!Number.isFinite(this.cashRate))
      throw new InvalidInputError(`cashRate must be a number, not ${this.cashRate}`);
    this.parameters = { ...options.strategy.parameters, ...options.parameters };
    this.market = new MarketReader(options.store);
    this.portfolio = new Portfolio(this.startingCash);
  }

  private get store(): Store {
    return this.options.store;
  }

  /** Steps through every session, then reports. */
  async run(): Promise<BacktestReport> {
    const { sessions } = this;
    this.store.announceSessionLoop(sessions[0]!, sessions.at(-1)!);
    const splits = await this.market.splitList();
    await this.options.strategy.onStart?.();
    for (const [index, session] of sessions.entries()) {
      await this.session(session, index, splits);
      this.options.onProgress?.(index + 1, sessions.length, session);
    }
    return this.report();
  }

  /** One session: splits, interest, AM settlement; the decision and its fills; PM settlement. */
  private async session(
    session: string,
    index: number,
    splits: Awaited<ReturnType<MarketReader['splitList']>>,
  ): Promise<void> {
    const open = sessionOpenSeconds(session);
    const close = sessionCloseSeconds(session);
    // On early-close days a decision before 16:00 keeps its distance to the close (Cboe's 15:45 is 12:45
    // then); 16:00 and later stay on the wall clock, where end-of-day snapshots are stamped every day.
    const now = this.decisionOffset >= 0 ? etWallToSeconds(session, this.at) : close + this.decisionOffset;

    for (const split of splits) {
      if (split.exDate === session) this.portfolio.split(session, open, split.symbol, split.ratio);
    }
    if (index > 0) this.accrueInterest(this.sessions[index - 1]!, session);
    await this.settle(this.expiring(session, 'AM'), session, open);

    // The runner's reads and the strategy's go through separate views, so that the strategy's audit
    // holds only what the strategy asked.
    const greeks = this.options.greeks ?? 'vendor';
    const view = this.store.at(now, { policy: 'strict', greeks });
    await this.markAt(view, session);
    const strategyView = this.store.at(now, { policy: 'strict', greeks });
    const marginUsed = this.marginUsed();
    const equity = this.portfolio.equity();
    const context: StrategyContext = {
      session,
      now,
      view: strategyView,
      positions: this.portfolio.positions(),
      cash: this.portfolio.cash,
      equity,
      marginUsed,
      buyingPower: roundCash(equity - marginUsed),
      parameters: this.parameters,
    };
    const orders = (await this.options.strategy.onSession(context)) ?? [];
    const audit = strategyView.audit();
    this.requests += audit.requests;
    this.lookAheadReads += audit.lookAheadReads;
    this.strategyCredits += audit.credits;
    if (orders.length > 0) {
      // `next`: the session's close, never before the decision (a 16:00 decision on an early close).
      const at = this.execution.fillAt === 'next' ? Math.max(close, now) : now;
      const fillView = at === now ? view : this.store.at(at, { policy: 'strict', greeks });
      for (const order of orders) await this.fillOrder(order, session, at, fillView);
    }
    this.equity.push({
      session,
      cash: this.portfolio.cash,
      positionsValue: this.portfolio.positionsValue(),
      equity: this.portfolio.equity(),
      marginUsed: this.marginUsed(),
      greeks: this.portfolio.greeks(),
    });

    await this.settle(this.expiring(session, 'PM'), session, close);
    // Contracts whose expiration was not a session of the loop (a holiday-shifted date) settle now.
    await this.settle(
      this.portfolio.optionTerms().filter((t) => t.expiration < session),
      session,
      close,
    );
  }

  private expiring(session: string, style: 'AM' | 'PM'): ContractTerms[] {
    return this.portfolio.optionTerms().filter((t) => t.expiration === session && t.settlement === style);
  }

  /** Interest on the cash held from one session to the next, by calendar day (simple, 365-day year). */
  private accrueInterest(previous: string, session: string): void {
    if (this.cashRate === 0) return;
    const days = Math.round(
      (Date.parse(`${session}T00:00:00Z`) - Date.parse(`${previous}T00:00:00Z`)) / 86_400_000,
    );
    const amount = roundCash((this.portfolio.cash * this.cashRate * days) / 365);
    this.portfolio.credit(amount);
    this.interest = roundCash(this.interest + amount);
  }

  /**
   * Marks every position with the price known at the view's instant: a valid quote's mid (stale when
   * older than maxQuoteAge), else a model price from the contract's last valid IV at the current
   * underlying, else the last mark; then keeps the estimated marks of legs held together within bounds.
   */
  private async markAt(view: PointInTimeView, session: string): Promise<void> {
    const now = view.asOfSeconds;
    const terms = this.portfolio.optionTerms();
    if (terms.length > 0) {
      const quotes = await this.market.optionQuotes(view, terms);
      for (const t of terms) this.markOption(t, quotes.get(t.symbol), now);
      this.boundEstimates();
    }
    for (const symbol of this.portfolio.stockSymbols()) await this.markShares(symbol, now);
    for (const p of this.portfolio.positions()) {
      if (p.markSource === 'stale' || p.markSource === 'model' || p.markSource === 'last') {
        this.noteMark(p.symbol, p.markSource, session);
      }
    }
  }

  /** Marks one option from its quote at `now` (see markAt). */
  private markOption(terms: ContractTerms, quote: Quote | undefined, now: number): void {
    if (quote?.underlyingPrice != null) this.underlyingPrices.set(terms.underlying, quote.underlyingPrice);
    if (quoteProblem(quote) === undefined) {
      const q = quote!;
      if (q.iv != null && q.iv > 0) this.lastIv.set(terms.symbol, q.iv);
      const source: MarkSource = quoteAge(q, now) > this.execution.maxQuoteAge ? 'stale' : 'quote';
      this.portfolio.mark(terms.symbol, midOf(q), q.time, source, greeksOf(q));
      return;
    }
    const iv = this.lastIv.get(terms.symbol);
    const spot = quote?.underlyingPrice ?? this.underlyingPrices.get(terms.underlying);
    // In its expiration session, once the market has closed, a contract is worth what it settles for.
    if (
      spot !== undefined &&
      terms.expiration === toEtDate(now) &&
      now >= sessionCloseSeconds(terms.expiration)
    ) {
      const intrinsic = Math.max(0, terms.side === 'call' ? spot - terms.strike : terms.strike - spot);
      this.portfolio.mark(
        terms.symbol,
        Math.round(intrinsic * 10_000) / 10_000,
        quote?.time ?? null,
        'intrinsic',
      );
      return;
    }
    if (iv !== undefined && spot !== undefined) {
      const model = modelValue(terms, iv, spot, now);
      this.portfolio.mark(terms.symbol, model.price, quote?.time ?? null, 'model', model.greeks);
      return;
    }
    const held = this.portfolio.position(terms.symbol);
    if (held?.mark != null) this.portfolio.mark(terms.symbol, held.mark, held.markTime, 'last');
  }

  /** Moves model and carried marks within the no-arbitrage bounds of the quoted contracts held with them. */
  private boundEstimates(): void {
    const groups = new Map<string, { symbol: string; leg: GroupLeg; position: Position }[]>();
    for (const p of this.portfolio.positions()) {
      if (p.kind !== 'option' || p.mark === null) continue;
      const key = `${p.underlying}|${p.expiration}|${p.side}`;
      const legs = groups.get(key) ?? [];
      legs.push({
        symbol: p.symbol,
        position: p,
        leg: {
          side: p.side,
          strike: p.strike,
          mark: p.mark,
          estimated: p.markSource === 'model' || p.markSource === 'last',
        },
      });
      groups.set(key, legs);
    }
    for (const legs of groups.values()) {
      if (!boundGroup(legs.map((l) => l.leg))) continue;
      for (const { symbol, leg, position } of legs) {
        if (leg.estimated) this.portfolio.mark(symbol, leg.mark, position.markTime, position.markSource);
      }
    }
  }

  private noteMark(symbol: string, source: 'stale' | 'model' | 'last', session: string): void {
    this.markCounts[source] += 1;
    const key = `${symbol}|${source}`;
    const note = this.markNotes.get(key);
    if (note === undefined)
      this.markNotes.set(key, { symbol, source, sessions: 1, first: session, last: session });
    else {
      note.sessions += 1;
      note.last = session;
    }
  }

  /** Marks shares at the latest daily close known at `now`. */
  private async markShares(symbol: string, now: number): Promise<void> {
    const close = await this.market.stockClose(symbol, now, this.sessions[0]!, this.sessions.at(-1)!);
    if (close === undefined) return;
    this.underlyingPrices.set(symbol, close.price);
    const source: MarkSource = quoteAge(close, now) > this.execution.maxQuoteAge ? 'stale' : 'quote';
    this.portfolio.mark(symbol, close.price, close.time, source);
  }

  /** What the positions require now under the account's rules (dollars). */
  private marginUsed(): number {
    return marginRequirement(this.marginHoldings(new Map()), this.underlyingPrices, this.account).required;
  }

  /** The positions as margin sees them, with `changes` (symbol → quantity and value) applied. */
  private marginHoldings(
    changes: ReadonlyMap<string, { quantity: number; value: number; instrument: Instrument }>,
  ): MarginHolding[] {
    const holdings: MarginHolding[] = [];
    const seen = new Set<string>();
    const add = (p: { quantity: number; value: number; instrument: Instrument }) => {
      if (p.quantity === 0) return;
      if (p.instrument.kind === 'stock') {
        holdings.push({
          kind: 'stock',
          underlying: p.instrument.symbol,
          quantity: p.quantity,
          value: p.value,
        });
        return;
      }
      const t = p.instrument.terms;
      holdings.push({
        kind: 'option',
        underlying: t.underlying,
        quantity: p.quantity,
        multiplier: 100,
        side: t.side,
        strike: t.strike,
        expiration: t.expiration,
        broadIndex: isIndexRoot(t.root),
        value: p.value,
      });
    };
    for (const p of this.portfolio.positions()) {
      seen.add(p.symbol);
      const change = changes.get(p.symbol);
      const instrument: Instrument =
        p.kind === 'option' ? { kind: 'option', terms: termsOf(p) } : { kind: 'stock', symbol: p.symbol };
      add({
        instrument,
        quantity: p.quantity + (change?.quantity ?? 0),
        value: change?.value ?? p.mark ?? p.averagePrice,
      });
    }
    for (const [symbol, change] of changes) if (!seen.has(symbol)) add(change);
    return holdings;
  }

  /**
   * Fills one order, single or combo, at the quotes of `view` (the decision's, or the close's): every
   * leg on a valid quote no older than maxQuoteAge, the net price within the limit, the account's
   * buying power enough; else nothing fills and the refusal names the leg and the reason.
   */
  private async fillOrder(order: Order, session: string, time: number, view: PointInTimeView): Promise<void> {
    const reject = (reason: string) => this.rejected.push({ ...order, session, reason });
    const combo = order !== null && typeof order === 'object' && 'legs' in order;
    const legs: readonly OrderLeg[] = combo ? order.legs : [order as OrderLeg];
    if (!Array.isArray(legs) || legs.length === 0) return void reject('a combo order needs at least one leg');
    for (const leg of legs) {
      if (typeof leg?.symbol !== 'string' || !Number.isInteger(leg.quantity) || leg.quantity === 0) {
        return void reject(
          `${combo ? `leg ${JSON.stringify(leg?.symbol)}: ` : ''}an order needs a symbol and a non-zero whole quantity`,
        );
      }
    }
    if (new Set(legs.map((l) => l.symbol)).size !== legs.length) {
      return void reject('a combo order names a symbol twice');
    }
    const limit = order?.limit;
    if (limit !== undefined && !Number.isFinite(limit))
      return void reject(`the limit must be a number, not ${limit}`);

    const optionLegs = legs.filter((leg) => isOccSymbol(leg.symbol));
    const terms = new Map(
      (await this.store.contracts(optionLegs.map((l) => l.symbol))).map((t) => [t.symbol, t]),
    );
    const quotes = await this.market.optionQuotes(view, [...terms.values()]);
    const priced: PricedLeg[] = [];
    for (const leg of legs) {
      const name = combo ? `leg ${leg.symbol}: ` : '';
      let instrument: Instrument;
      let quote: Quote | undefined;
      if (isOccSymbol(leg.symbol)) {
        const option = terms.get(leg.symbol);
        if (option === undefined) return void reject(`${name}the store lists no such contract`);
        if (option.expiration < session) return void reject(`${name}the contract has expired`);
        instrument = { kind: 'option', terms: option };
        quote = quotes.get(leg.symbol);
      } else {
        instrument = { kind: 'stock', symbol: leg.symbol };
        quote = await this.market.stockQuote(view, leg.symbol);
      }
      const problem = quote === undefined ? 'no quote' : quoteProblem(quote, instrument.kind);
      if (problem !== undefined)
        return void reject(
          `${name}${problem === 'no quote' ? 'no quote to fill at' : `not a price: ${problem}`}`,
        );
      const age = quoteAge(quote!, time);
      if (age > this.execution.maxQuoteAge) {
        return void reject(
          `${name}the quote is ${describeAge(age)} old (updated ${describeInstant(quote!.time)}), older than maxQuoteAge ${this.execution.maxQuoteAge} s`,
        );
      }
      priced.push({
        leg,
        instrument,
        quote: quote!,
        price: fillPrice({ bid: quote!.bid!, ask: quote!.ask! }, leg.quantity, this.execution),
      });
    }

    const multiplier = (p: PricedLeg) => (p.instrument.kind === 'option' ? 100 : 1);
    const net = priced.reduce((sum, p) => sum + (p.leg.quantity * p.price * multiplier(p)) / 100, 0);
    if (limit !== undefined && net > limit + 1e-9) {
      return void reject(`the net price ${net.toFixed(4)} is worse than the limit ${limit}`);
    }
    const commissions = priced.map((p) =>
      roundCash(
        Math.abs(p.leg.quantity) *
          (p.instrument.kind === 'option' ? this.execution.optionCommission : this.execution.stockCommission),
      ),
    );
    const refusal = this.buyingPowerRefusal(priced, commissions);
    if (refusal !== undefined) return void reject(refusal);

    const orderId = this.nextOrderId++;
    priced.forEach((p, i) => {
      this.portfolio.fill({
        session,
        time,
        instrument: p.instrument,
        quantity: p.leg.quantity,
        price: p.price,
        commission: commissions[i]!,
        reason: 'order',
        ...(order.tag === undefined ? {} : { tag: order.tag }),
        orderId,
        quoteTime: p.quote.time,
      });
      if (p.quote.underlyingPrice != null && p.instrument.kind === 'option') {
        this.underlyingPrices.set(p.instrument.terms.underlying, p.quote.underlyingPrice);
      }
      if (p.quote.iv != null && p.quote.iv > 0) this.lastIv.set(p.leg.symbol, p.quote.iv);
      // Marked at the quote it filled against (no second request for what was just read).
      const source: MarkSource = quoteAge(p.quote, time) > this.execution.maxQuoteAge ? 'stale' : 'quote';
      this.portfolio.mark(p.leg.symbol, midOf(p.quote), p.quote.time, source, greeksOf(p.quote));
    });
  }

  /** Why the account cannot take these fills, with the numbers; undefined when it can. */
  private buyingPowerRefusal(
    priced: readonly PricedLeg[],
    commissions: readonly number[],
  ): string | undefined {
    const changes = new Map<string, { quantity: number; value: number; instrument: Instrument }>();
    let cashFlow = 0;
    let valueChange = 0;
    priced.forEach((p, i) => {
      const unit = p.instrument.kind === 'option' ? 100 : 1;
      const mid = midOf(p.quote);
      changes.set(p.leg.symbol, { quantity: p.leg.quantity, value: mid, instrument: p.instrument });
      cashFlow += -p.leg.quantity * p.price * unit - commissions[i]!;
      valueChange += p.leg.quantity * mid * unit;
      if (p.instrument.kind === 'option' && p.quote.underlyingPrice != null) {
        this.underlyingPrices.set(p.instrument.terms.underlying, p.quote.underlyingPrice);
      }
    });
    const before = this.marginUsed();
    const after = marginRequirement(this.marginHoldings(changes), this.underlyingPrices, this.account);
    if (after.refusal !== undefined) return `buying power: ${after.refusal}`;
    const equityAfter = roundCash(this.portfolio.equity() + cashFlow + valueChange);
    // An order that lowers the requirement (a close, a hedge) is always accepted.
    if (after.required > equityAfter && after.required > before) {
      return `buying power: the positions would require ${money(after.required)} in a ${this.account} account, and equity after the order would be ${money(equityAfter)}`;
    }
    return undefined;
  }

  /** Settles expiring contracts at their underlying's settlement value (cash, or delivery of shares). */
  private async settle(expiring: readonly ContractTerms[], session: string, time: number): Promise<void> {
    const groups = new Map<string, ContractTerms>();
    for (const t of expiring) groups.set(`${t.underlying}|${t.expiration}|${t.settlement}`, t);
    for (const t of groups.values()) {
      // The value is known once its session closes; asked the night after (a dated request needs a
      // past date), when the store serves it.
      const after = sessionCloseSeconds(t.expiration) + 10 * 3600;
      const settlement = await this.market.settlementValue(
        t.underlying,
        t.expiration,
        t.settlement,
        after,
        t.symbol,
      );
      let value: number;
      if (settlement !== undefined) {
        if (settlement.approximate !== undefined) this.warnings.push(settlement.approximate);
        value = settlement.value;
      } else {
        const last = this.underlyingPrices.get(t.underlying);
        if (this.options.missingSettlement !== 'last-price' || last === undefined) {
          throw new StoreError(
            `the store has no settlement value of ${t.underlying} for the ${t.expiration} expiration` +
              (last === undefined
                ? ' and no price of it was seen'
                : "; run with missingSettlement: 'last-price' (--missing-settlement last-price) to settle at the last price seen") +
              ' (expiring positions are never settled at 0)',
          );
        }
        this.warnings.push(
          `${t.underlying} ${t.expiration}: no settlement value in the store; settled at the last price seen, ${last}`,
        );
        value = last;
      }
      this.portfolio.expire(session, time, t.underlying, t.expiration, value, isIndexRoot(t.root));
    }
  }

  private report(): BacktestReport {
    const { sessions, startingCash, options } = this;
    const final = this.equity.at(-1)?.equity ?? startingCash;
    const credits = this.strategyCredits + this.market.credits;
    const roundTrips = roundTripsOf(this.portfolio.trades);
    const statistics = computeStatistics(this.equity, roundTrips, {
      startingCash,
      credits,
      ...(options.riskFreeRate === undefined ? {} : { riskFreeRate: options.riskFreeRate }),
    });
    return {
      strategy: options.strategy.name ?? 'strategy',
      from: sessions[0]!,
      to: sessions.at(-1)!,
      at: this.at,
      dataVersion: this.store.dataVersion,
      fill: describeFill(this.execution),
      account: this.account,
      maxQuoteAge: this.execution.maxQuoteAge,
      parameters: this.parameters,
      startingCash,
      trades: this.portfolio.trades,
      rejected: this.rejected,
      equity: this.equity,
      finalPositions: this.portfolio.positions(),
      pnl: roundCash(final - startingCash),
      interest: this.interest,
      ...drawdownFields(statistics.maxDrawdown),
      credits,
      creditsByPart: { strategy: this.strategyCredits, runner: this.market.credits },
      requests: this.requests,
      lookAheadReads: this.lookAheadReads,
      marks: { ...this.markCounts },
      markNotes: [...this.markNotes.values()],
      warnings: this.warnings,
      statistics,
      roundTrips,
    };
  }
}

/** A quote's per-contract Greeks, when it carries them. */
function greeksOf(quote: Quote) {
  if (quote.delta == null) return undefined;
  return { delta: quote.delta, gamma: quote.gamma ?? 0, theta: quote.theta ?? 0, vega: quote.vega ?? 0 };
}

/** An instant as an Eastern date and time, e.g. `2019-01-04 16:00 ET`. */
function describeInstant(seconds: number | null): string {
  if (seconds === null) return 'at an unknown time';
  const date = toEtDate(seconds);
  const minutes = Math.round((seconds - etWallToSeconds(date, '00:00')) / 60);
  return `${date} ${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')} ET`;
}

function money(value: number): string {
  return `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** The largest fall from a running peak, as a fraction of the peak and in dollars (the statistics' rule). */
export function drawdown(curve: readonly number[]): { maxDrawdown: number; maxDrawdownPct: number } {
  return drawdownFields(largestDrawdown(curve, curve.map(String)));
}

/** The report's drawdown fields, read from the statistics' largest drawdown so the two never disagree. */
function drawdownFields(largest: Drawdown): { maxDrawdown: number; maxDrawdownPct: number } {
  return {
    maxDrawdown: roundCash(largest.amount),
    maxDrawdownPct: Math.round(largest.fraction * 10_000) / 10_000,
  };
}
