/**
 * Round trips: the trades of a run paired from open to close, each with its P&L.
 *
 * The rules, in the order trades are read:
 * - **Opening.** A fill that opens or adds to a position starts a round trip, and every other opening
 *   fill of the same order (same `orderId`: the legs of a combo) joins it. A later order adding to the
 *   same symbol starts its own round trip (a separate lot), as does an order that rolls (its closing
 *   fills close the old round trip, its opening fills start a new one).
 * - **Closing.** A fill that reduces a position (an order, an expiration, an assignment or an exercise)
 *   closes the round trips holding that symbol, oldest first (FIFO); one fill may close several, and
 *   its cash flow and commission are shared among them in proportion to the quantity each closes. What
 *   goes beyond every open lot (a position flipped through zero) opens a new round trip.
 *   A round trip is closed once every one of its legs is back to zero: a partial close leaves it open,
 *   and its P&L is known when the last leg closes.
 * - **Delivery.** The shares an assignment or an exercise delivers close what they offset (the stock
 *   leg of a covered call), else open a round trip of their own at the settlement value; the option's
 *   round trip closes at its intrinsic value. The option's P&L is thus the option's, and the shares'
 *   the shares'.
 * - **Splits.** A split's pair of trades (the old symbol out, the adjusted one in, no cash) renames the
 *   leg in the round trips that hold it and scales its quantity by the ratio: a split neither opens nor
 *   closes a round trip.
 *
 * P&L is the sum of the round trip's cash flows, commissions included (a trade's `cashFlow` is net of
 * its commission). Trades without an `orderId` (a runner that records none) are each their own order.
 */
import { roundCash } from './fills.js';
import type { RoundTrip, Trade } from './types.js';

/**
 * The fields of a trade round trips read: the runner's `Trade`, whose `orderId` may be absent (a trade
 * without one is its own order).
 */
export type RoundTripTrade = Pick<
  Trade,
  'session' | 'time' | 'symbol' | 'quantity' | 'price' | 'commission' | 'cashFlow' | 'reason' | 'tag'
> & { readonly orderId?: Trade['orderId'] };

export type { RoundTrip, RoundTripLeg } from './types.js';

type Lot = {
  id: number;
  orderId: number | null;
  tag?: string;
  legs: Map<string, { opened: number; held: number }>;
  openSession: string;
  openTime: number;
  closeSession: string | null;
  closeTime: number | null;
  closedBy: string[];
  entry: number;
  exit: number;
  commissions: number;
  trades: number;
};

/** The round trips of a run's trades, in the order they opened (see the module's rules). */
export function roundTripsOf(trades: readonly RoundTripTrade[]): RoundTrip[] {
  const lots: Lot[] = [];
  /** The lots that the current order has opened, by order id (only while that order's fills are read). */
  let openingOrder: { key: unknown; lot: Lot } | undefined;
  let orderless = 0;

  for (let i = 0; i < trades.length; i++) {
    const trade = trades[i]!;
    if (trade.reason === 'split') {
      const next = trades[i + 1];
      if (next !== undefined && next.reason === 'split' && next.time === trade.time) {
        renameForSplit(trade, next);
        i++;
      }
      continue;
    }
    // The order this fill belongs to: its id, or a key of its own when it has none.
    const orderKey =
      trade.orderId === undefined || trade.orderId === null ? `event:${orderless++}` : trade.orderId;
    let remaining = trade.quantity;
    // Closing first: the lots that hold the opposite side of this symbol, oldest first.
    for (const lot of lots) {
      if (remaining === 0) break;
      if (lot.closeSession !== null) continue;
      const leg = lot.legs.get(trade.symbol);
      if (leg === undefined || leg.held === 0 || Math.sign(leg.held) === Math.sign(remaining)) continue;
      const closes = Math.sign(remaining) * Math.min(Math.abs(remaining), Math.abs(leg.held));
      const share = closes / trade.quantity;
      leg.held += closes;
      remaining -= closes;
      lot.exit += trade.cashFlow * share;
      lot.commissions += trade.commission * share;
      lot.trades++;
      if (!lot.closedBy.includes(trade.reason)) lot.closedBy.push(trade.reason);
      if ([...lot.legs.values()].every((l) => l.held === 0)) {
        lot.closeSession = trade.session;
        lot.closeTime = trade.time;
      }
    }
    if (remaining === 0) continue;
    // What is left opens (or adds to) the round trip of this order.
    const share = remaining / trade.quantity;
    let lot = openingOrder?.key === orderKey ? openingOrder.lot : undefined;
    if (lot === undefined || lot.closeSession !== null) {
      lot = {
        id: lots.length + 1,
        orderId: typeof orderKey === 'number' ? orderKey : null,
        ...(trade.tag === undefined ? {} : { tag: trade.tag }),
        legs: new Map(),
        openSession: trade.session,
        openTime: trade.time,
        closeSession: null,
        closeTime: null,
        closedBy: [],
        entry: 0,
        exit: 0,
        commissions: 0,
        trades: 0,
      };
      lots.push(lot);
      openingOrder = { key: orderKey, lot };
    }
    const leg = lot.legs.get(trade.symbol) ?? { opened: 0, held: 0 };
    leg.opened += remaining;
    leg.held += remaining;
    lot.legs.set(trade.symbol, leg);
    lot.entry += trade.cashFlow * share;
    lot.commissions += trade.commission * share;
    lot.trades++;
  }
  return lots.map(roundTripOf);

  /** A split's pair of trades: the old symbol's leg becomes the adjusted one, its quantities scaled. */
  function renameForSplit(out: RoundTripTrade, into: RoundTripTrade): void {
    if (out.quantity === 0) return;
    const ratio = into.quantity / -out.quantity;
    for (const lot of lots) {
      if (lot.closeSession !== null) continue;
      const leg = lot.legs.get(out.symbol);
      if (leg === undefined || leg.held === 0) continue;
      const legs = new Map<string, { opened: number; held: number }>();
      for (const [symbol, value] of lot.legs) {
        legs.set(
          symbol === out.symbol ? into.symbol : symbol,
          symbol === out.symbol ? { opened: value.opened * ratio, held: value.held * ratio } : value,
        );
      }
      lot.legs = legs;
      lot.trades += 2;
    }
  }
}

function roundTripOf(lot: Lot): RoundTrip {
  const closed = lot.closeSession !== null;
  // Shares of a cash flow are summed unrounded and rounded to the cent only here, once.
  const entry = roundCash(lot.entry);
  const exit = roundCash(lot.exit);
  return {
    id: lot.id,
    orderId: lot.orderId,
    legs: [...lot.legs].map(([symbol, leg]) => ({ symbol, quantity: leg.opened })),
    ...(lot.tag === undefined ? {} : { tag: lot.tag }),
    openSession: lot.openSession,
    openTime: lot.openTime,
    closeSession: lot.closeSession,
    closeTime: lot.closeTime,
    status: closed ? 'closed' : 'open',
    closedBy: lot.closedBy,
    entryCashFlow: entry,
    exitCashFlow: exit,
    commissions: roundCash(lot.commissions),
    pnl: closed ? roundCash(lot.entry + lot.exit) : null,
    trades: lot.trades,
  };
}
