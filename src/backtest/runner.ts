/**
 * `backtest()`: a clock steps through the sessions at the decision time; at each, the strategy sees only
 * `store.at(now)` under the strict policy and its marked positions, and returns orders; the runner fills
 * them by the stated model, marks the account, settles what expires and adjusts for splits. The report
 * names the data version, the credits the same requests would have cost, and the look-ahead reads.
 */
import { InvalidInputError } from '../errors.js';
import type { ContractTerms } from '../library/store.js';
import type { PointInTimeView } from '../library/view.js';
import {
  etWallToSeconds,
  isIndexRoot,
  sessionCloseSeconds,
  sessionOpenSeconds,
  sessionsBetween,
} from '../market-time/index.js';
import { isOccSymbol } from '../occ/index.js';
import { describeFill, executionOf, fillPrice, roundCash } from './fills.js';
import { MarketReader, type Quote } from './market.js';
import { Portfolio } from './portfolio.js';
import type {
  BacktestOptions,
  BacktestReport,
  EquityPoint,
  Order,
  RejectedOrder,
  Strategy,
  StrategyContext,
} from './types.js';

/** Types a strategy (an identity function: the types are the help). */
export function defineStrategy(strategy: Strategy): Strategy {
  return strategy;
}

/** Runs a strategy over the sessions `from`…`to` and reports what it did. */
export async function backtest(options: BacktestOptions): Promise<BacktestReport> {
  const { store, strategy } = options;
  const execution = executionOf(options);
  const at = options.at ?? '15:45';
  const sessions = periodSessions(options.from, options.to);
  const decisionOffset = etWallToSeconds('2020-01-02', at) - etWallToSeconds('2020-01-02', '16:00');
  const startingCash = options.cash ?? 100_000;
  if (!Number.isFinite(startingCash))
    throw new InvalidInputError(`cash must be a number, not ${startingCash}`);
  const greeks = options.greeks ?? 'vendor';

  store.announceSessionLoop(sessions[0]!, sessions.at(-1)!);
  const market = new MarketReader(store);
  const portfolio = new Portfolio(startingCash);
  const splits = await market.splitList();
  await strategy.onStart?.();
  const equity: EquityPoint[] = [];
  const rejected: RejectedOrder[] = [];
  const warnings: string[] = [];
  let requests = 0;
  let lookAheadReads = 0;
  let strategyCredits = 0;

  for (const [index, session] of sessions.entries()) {
    const open = sessionOpenSeconds(session);
    const close = sessionCloseSeconds(session);
    // On early-close days the decision keeps its distance to the close (Cboe's 15:45 is 12:45 then).
    const now = close + decisionOffset;

    // Before the decision: splits effective today, then AM-settled contracts expiring today.
    for (const split of splits) {
      if (split.exDate === session) portfolio.split(session, open, split.symbol, split.ratio);
    }
    const expiringToday = (style: 'AM' | 'PM') =>
      portfolio.optionTerms().filter((t) => t.expiration === session && t.settlement === style);
    await settle(expiringToday('AM'), session, open);

    // The decision, at `now`, on what was known at `now`.
    // The runner's reads and the strategy's go through separate views, so that the strategy's audit
    // holds only what the strategy asked.
    const view = store.at(now, { policy: 'strict', greeks });
    await markAt(view);
    const strategyView = store.at(now, { policy: 'strict', greeks });
    const context: StrategyContext = {
      session,
      now,
      view: strategyView,
      positions: portfolio.positions(),
      cash: portfolio.cash,
      equity: portfolio.equity(),
    };
    const orders = (await strategy.onSession(context)) ?? [];
    const audit = strategyView.audit();
    requests += audit.requests;
    lookAheadReads += audit.lookAheadReads;
    strategyCredits += audit.credits;
    if (orders.length > 0) {
      const fillView = execution.fillAt === 'next' ? store.at(close, { policy: 'strict', greeks }) : view;
      await fillOrders(orders, session, execution.fillAt === 'next' ? close : now, fillView);
    }
    equity.push({
      session,
      cash: portfolio.cash,
      positionsValue: portfolio.positionsValue(),
      equity: portfolio.equity(),
    });

    // After the close: PM-settled contracts expiring today.
    await settle(expiringToday('PM'), session, close);
    // Contracts whose expiration was not a session of the loop (a holiday-shifted date) settle now.
    await settle(
      portfolio.optionTerms().filter((t) => t.expiration < session),
      session,
      close,
    );
    options.onProgress?.(index + 1, sessions.length, session);
  }

  const curve = equity.map((point) => point.equity);
  const { maxDrawdown, maxDrawdownPct } = drawdown(curve);
  const final = curve.at(-1) ?? startingCash;
  return {
    strategy: strategy.name ?? 'strategy',
    from: sessions[0] ?? options.from,
    to: sessions.at(-1) ?? options.to,
    at,
    dataVersion: store.dataVersion,
    fill: describeFill(execution),
    startingCash,
    trades: portfolio.trades,
    rejected,
    equity,
    finalPositions: portfolio.positions(),
    pnl: roundCash(final - startingCash),
    maxDrawdown,
    maxDrawdownPct,
    credits: strategyCredits + market.credits,
    creditsByPart: { strategy: strategyCredits, runner: market.credits },
    requests,
    lookAheadReads,
    warnings,
  };

  /** Marks every position with the price known at the view's instant. */
  async function markAt(view: PointInTimeView): Promise<void> {
    const terms = portfolio.optionTerms();
    if (terms.length > 0) {
      const quotes = await market.optionQuotes(view, terms);
      for (const t of terms) {
        const quote = quotes.get(t.symbol);
        if (quote !== undefined) portfolio.mark(t.symbol, markOf(quote), quote.time);
      }
    }
    for (const symbol of portfolio.stockSymbols()) await markShares(symbol, view.asOfSeconds);
  }

  /** Marks shares at the latest daily close known at `at`. */
  async function markShares(symbol: string, at: number): Promise<void> {
    const quote = await market.stockClose(symbol, at, sessions[0]!, sessions.at(-1)!);
    if (quote !== undefined) portfolio.mark(symbol, markOf(quote), quote.time);
  }

  /** Fills the orders at the quotes of `view` (the decision's, or the close's), rejecting what cannot fill. */
  async function fillOrders(orders: readonly Order[], session: string, time: number, view: PointInTimeView) {
    const valid: Order[] = [];
    for (const order of orders) {
      if (typeof order?.symbol !== 'string' || !Number.isInteger(order.quantity) || order.quantity === 0) {
        rejected.push({ ...order, session, reason: 'an order needs a symbol and a non-zero whole quantity' });
      } else valid.push(order);
    }
    const optionOrders = valid.filter((order) => isOccSymbol(order.symbol));
    const terms = await store.contracts(optionOrders.map((order) => order.symbol));
    const termsBySymbol = new Map(terms.map((t) => [t.symbol, t]));
    const quotes = await market.optionQuotes(view, terms);
    for (const order of valid) {
      let instrument: Parameters<Portfolio['fill']>[2];
      let quote: Quote | undefined;
      if (isOccSymbol(order.symbol)) {
        const option = termsBySymbol.get(order.symbol);
        const refusal =
          option === undefined
            ? 'the store lists no such contract'
            : option.expiration < session
              ? 'the contract has expired'
              : undefined;
        if (refusal !== undefined) {
          rejected.push({ ...order, session, reason: refusal });
          continue;
        }
        instrument = { kind: 'option', terms: option! };
        quote = quotes.get(order.symbol);
      } else {
        instrument = { kind: 'stock', symbol: order.symbol };
        quote = await market.stockQuote(view, order.symbol);
      }
      const price = quote === undefined ? null : fillPrice(quote, order.quantity, execution);
      if (price === null) {
        rejected.push({ ...order, session, reason: 'no quote to fill at' });
        continue;
      }
      const perUnit = instrument.kind === 'option' ? execution.optionCommission : execution.stockCommission;
      const commission = roundCash(Math.abs(order.quantity) * perUnit);
      portfolio.fill(session, time, instrument, order.quantity, price, commission, 'order', order.tag);
      // Marked as the decision's marks are: an option at the quote it filled against, shares at the
      // latest daily close (no second request for what was just read).
      if (instrument.kind === 'option') portfolio.mark(order.symbol, markOf(quote!), quote!.time);
      else await markShares(order.symbol, view.asOfSeconds);
    }
  }

  /** Settles expiring contracts at their underlying's settlement value (cash, or delivery of shares). */
  async function settle(expiring: readonly ContractTerms[], session: string, time: number): Promise<void> {
    const groups = new Map<string, ContractTerms>();
    for (const t of expiring) groups.set(`${t.underlying}|${t.expiration}|${t.settlement}`, t);
    for (const t of groups.values()) {
      // The value is known once its session closes; asked the night after (a dated request needs a
      // past date), when the store serves it.
      const after = sessionCloseSeconds(t.expiration) + 10 * 3600;
      const settlement = await market.settlementValue(t.underlying, t.expiration, t.settlement, after);
      if (settlement === undefined) {
        warnings.push(`${t.underlying} ${t.expiration}: no settlement value in the store; expired at 0`);
      } else if (settlement.approximate !== undefined) {
        warnings.push(settlement.approximate);
      }
      portfolio.expire(
        session,
        time,
        t.underlying,
        t.expiration,
        settlement?.value ?? 0,
        isIndexRoot(t.root),
      );
    }
  }
}

/** The mark of a quote: the service's mid (exact half-up to the cent), else the last trade. */
function markOf(quote: Quote): number | null {
  return quote.mid ?? quote.last;
}

/** The sessions of a period, refusing dates that cannot be read or a period with none. */
function periodSessions(from: string, to: string): string[] {
  for (const [name, date] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (typeof date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
      throw new InvalidInputError(`${name} must be a date such as 2020-01-02, not ${JSON.stringify(date)}`);
    }
  }
  if (from > to) throw new InvalidInputError(`from (${from}) is after to (${to})`);
  const sessions = sessionsBetween(from, to);
  if (sessions.length === 0) throw new InvalidInputError(`no session between ${from} and ${to}`);
  return sessions;
}

/** The largest fall from a running peak, in dollars and as a fraction of the peak. */
export function drawdown(curve: readonly number[]): { maxDrawdown: number; maxDrawdownPct: number } {
  let peak = Number.NEGATIVE_INFINITY;
  let maxDrawdown = 0;
  let maxDrawdownPct = 0;
  for (const value of curve) {
    peak = Math.max(peak, value);
    const fall = peak - value;
    if (fall > maxDrawdown) maxDrawdown = fall;
    if (peak > 0 && fall / peak > maxDrawdownPct) maxDrawdownPct = fall / peak;
  }
  return {
    maxDrawdown: roundCash(maxDrawdown),
    maxDrawdownPct: Math.round(maxDrawdownPct * 10_000) / 10_000,
  };
}
