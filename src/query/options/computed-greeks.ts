/**
 * Computed IV and Greeks (`greeks: 'computed'`): in place of the vendor's figures, each quote's own, from
 * its bid and ask at its quote time q with the underlying price of the same snapshot, so they are known
 * at q like the quote. Contracts of one expiration quoted in one snapshot share the forward implied by
 * put–call parity (`pricing/`); a lone contract (an option-quotes request) is priced on the spot carried
 * at the default rate. European model for the index roots, American (Bjerksund–Stensland) for the rest.
 */
import { exerciseStyleOf } from '../../market-time/index.js';
import { computeSnapshotGreeks, yearsBetween } from '../../pricing/index.js';
import type { GreeksSource } from '../types.js';
import type { OptionRecord } from './records.js';

export type { GreeksSource };

/** An option record with computed IV and Greeks, and the IVs of its bid and ask. */
export type ComputedRecord = OptionRecord & { readonly ivBid: number | null; readonly ivAsk: number | null };

/**
 * Where snapshots already priced are kept for the next time the same snapshot is priced (a store's
 * cache, `StoreCache.computed`): a sweep's runs and a notebook's reruns ask the same chains again.
 */
export type PricedSnapshots = {
  computed(key: string): unknown;
  keepComputed(key: string, value: unknown, bytes: number): void;
};

/** A snapshot priced: its members' symbols and quotes, which alone decide the figures, and the figures. */
type Priced = {
  readonly symbols: readonly string[];
  readonly bid: readonly (number | null)[];
  readonly ask: readonly (number | null)[];
  readonly columns: Columns;
};

/** About what one member of a kept snapshot costs: seven figures, its quotes, the array slots. */
const PRICED_MEMBER_BYTES = 160;

/**
 * The records with IV and Greeks computed from their quotes, in the same order. Records of one root
 * quoted at one instant on one underlying price are one snapshot, priced together; with `priced`, a
 * snapshot priced before with the same members and quotes takes the figures it got then.
 */
export function withComputedGreeks(
  records: readonly OptionRecord[],
  priced?: PricedSnapshots,
): ComputedRecord[] {
  const snapshots = new Map<string, number[]>();
  records.forEach((record, index) => {
    const key = `${record.group}|${record.quoteTime}|${record.underlyingPrice}`;
    const members = snapshots.get(key);
    if (members === undefined) snapshots.set(key, [index]);
    else members.push(index);
  });
  const out: ComputedRecord[] = new Array(records.length);
  for (const members of snapshots.values()) {
    const first = records[members[0]!]!;
    const spot = first.underlyingPrice;
    if (spot === null || !(spot > 0)) {
      for (const i of members) out[i] = computed(records[i]!, NONE, 0);
      continue;
    }
    const rows = members.map((i) => records[i]!);
    // The snapshot's instant, spot and group, with its size and first member: the members and quotes are
    // compared on a hit (a lone contract's snapshot may share the rest with a chain's).
    const key = `greeks|${first.group}|${first.quoteTime}|${spot}|${rows.length}|${first.optionSymbol}`;
    const kept = priced?.computed(key) as Priced | undefined;
    const greeks =
      kept !== undefined && samePricing(kept, rows) ? kept.columns : priceSnapshot(first, spot, rows);
    if (priced !== undefined && greeks !== kept?.columns) {
      const value: Priced = {
        symbols: rows.map((r) => r.optionSymbol),
        bid: rows.map((r) => r.bid),
        ask: rows.map((r) => r.ask),
        columns: greeks,
      };
      priced.keepComputed(key, value, 256 + rows.length * PRICED_MEMBER_BYTES);
    }
    members.forEach((i, k) => {
      out[i] = computed(records[i]!, greeks, k);
    });
  }
  return out;
}

/** Whether a kept snapshot was priced on these members with these quotes (the figures depend on no more). */
function samePricing(kept: Priced, rows: readonly OptionRecord[]): boolean {
  if (kept.symbols.length !== rows.length) return false;
  for (let k = 0; k < rows.length; k++) {
    const row = rows[k]!;
    if (kept.symbols[k] !== row.optionSymbol || kept.bid[k] !== row.bid || kept.ask[k] !== row.ask)
      return false;
  }
  return true;
}

/** One snapshot's members priced together (their expiration's forward from parity). */
function priceSnapshot(first: OptionRecord, spot: number, rows: readonly OptionRecord[]): Columns {
  return computeSnapshotGreeks({
    spot,
    style: exerciseStyleOf(first.group.slice(0, first.group.indexOf(':'))),
    quoteTime: first.quoteTime,
    contracts: {
      strike: rows.map((r) => r.strike),
      side: rows.map((r) => r.side),
      years: rows.map((r) => yearsBetween(r.quoteTime, r.expiration)),
      bid: rows.map((r) => r.bid),
      ask: rows.map((r) => r.ask),
      expirationKey: rows.map((r) => r.expiration),
    },
  });
}

type Columns = {
  readonly iv: readonly (number | null)[];
  readonly ivBid: readonly (number | null)[];
  readonly ivAsk: readonly (number | null)[];
  readonly delta: readonly (number | null)[];
  readonly gamma: readonly (number | null)[];
  readonly theta: readonly (number | null)[];
  readonly vega: readonly (number | null)[];
};

const NONE: Columns = { iv: [], ivBid: [], ivAsk: [], delta: [], gamma: [], theta: [], vega: [] };

function computed(record: OptionRecord, columns: Columns, k: number): ComputedRecord {
  return {
    ...record,
    iv: columns.iv[k] ?? null,
    delta: columns.delta[k] ?? null,
    gamma: columns.gamma[k] ?? null,
    theta: columns.theta[k] ?? null,
    vega: columns.vega[k] ?? null,
    ivBid: columns.ivBid[k] ?? null,
    ivAsk: columns.ivAsk[k] ?? null,
  };
}
