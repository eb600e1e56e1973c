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
 * The records with IV and Greeks computed from their quotes, in the same order. Records of one root
 * quoted at one instant on one underlying price are one snapshot, priced together.
 */
export function withComputedGreeks(records: readonly OptionRecord[]): ComputedRecord[] {
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
    const greeks = computeSnapshotGreeks({
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
    members.forEach((i, k) => {
      out[i] = computed(records[i]!, greeks, k);
    });
  }
  return out;
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
