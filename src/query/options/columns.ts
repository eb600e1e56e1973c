/** The option row's output columns: keys, human keys and kinds in the service's order, and their values. */
import type { Field, FieldKind } from '../types.js';
import type { OptionRecord, OptionValues } from './records.js';

/** Keys, human keys (api-reference §7) and kinds of the option row, in the service's order. */
export const OPTION_COLUMNS: readonly { key: keyof OptionValues; human: string; kind: FieldKind }[] = [
  { key: 'optionSymbol', human: 'Symbol', kind: 'string' },
  { key: 'underlying', human: 'Underlying', kind: 'string' },
  { key: 'expiration', human: 'Expiration Date', kind: 'instant' },
  { key: 'side', human: 'Option Side', kind: 'string' },
  { key: 'strike', human: 'Strike', kind: 'number' },
  { key: 'firstTraded', human: 'First Traded', kind: 'instant' },
  { key: 'dte', human: 'Days To Expiration', kind: 'integer' },
  { key: 'updated', human: 'Date', kind: 'instant' },
  { key: 'bid', human: 'Bid', kind: 'number' },
  { key: 'bidSize', human: 'Bid Size', kind: 'integer' },
  { key: 'mid', human: 'Mid', kind: 'number' },
  { key: 'ask', human: 'Ask', kind: 'number' },
  { key: 'askSize', human: 'Ask Size', kind: 'integer' },
  { key: 'last', human: 'Last', kind: 'number' },
  { key: 'openInterest', human: 'Open Interest', kind: 'integer' },
  { key: 'volume', human: 'Volume', kind: 'integer' },
  { key: 'inTheMoney', human: 'In The Money', kind: 'boolean' },
  { key: 'intrinsicValue', human: 'Intrinsic Value', kind: 'number' },
  { key: 'extrinsicValue', human: 'Extrinsic Value', kind: 'number' },
  { key: 'underlyingPrice', human: 'Underlying Price', kind: 'number' },
  { key: 'iv', human: 'IV', kind: 'number' },
  { key: 'delta', human: 'Delta', kind: 'number' },
  { key: 'gamma', human: 'Gamma', kind: 'number' },
  { key: 'theta', human: 'Theta', kind: 'number' },
  { key: 'vega', human: 'Vega', kind: 'number' },
];

/** The option row fields of the records, in the service's key order. */
export function optionFields(records: readonly OptionRecord[]): Field[] {
  // One pass with static property reads, into packed arrays (which JSON.stringify writes faster than
  // preallocated, holey ones): a chain can hold ten thousand rows of 25 fields.
  const out: Record<keyof OptionValues, unknown[]> = {
    optionSymbol: [],
    underlying: [],
    expiration: [],
    side: [],
    strike: [],
    firstTraded: [],
    dte: [],
    updated: [],
    bid: [],
    bidSize: [],
    mid: [],
    ask: [],
    askSize: [],
    last: [],
    openInterest: [],
    volume: [],
    inTheMoney: [],
    intrinsicValue: [],
    extrinsicValue: [],
    underlyingPrice: [],
    iv: [],
    delta: [],
    gamma: [],
    theta: [],
    vega: [],
  };
  for (const r of records) {
    out.optionSymbol.push(r.optionSymbol);
    out.underlying.push(r.underlying);
    out.expiration.push(r.expiration);
    out.side.push(r.side);
    out.strike.push(r.strike);
    out.firstTraded.push(r.firstTraded);
    out.dte.push(r.dte);
    out.updated.push(r.updated);
    out.bid.push(r.bid);
    out.bidSize.push(r.bidSize);
    out.mid.push(r.mid);
    out.ask.push(r.ask);
    out.askSize.push(r.askSize);
    out.last.push(r.last);
    out.openInterest.push(r.openInterest);
    out.volume.push(r.volume);
    out.inTheMoney.push(r.inTheMoney);
    out.intrinsicValue.push(r.intrinsicValue);
    out.extrinsicValue.push(r.extrinsicValue);
    out.underlyingPrice.push(r.underlyingPrice);
    out.iv.push(r.iv);
    out.delta.push(r.delta);
    out.gamma.push(r.gamma);
    out.theta.push(r.theta);
    out.vega.push(r.vega);
  }
  return OPTION_COLUMNS.map(({ key, human, kind }) => ({ key, human, kind, values: out[key] }));
}

/** The latest known-at instant of the records' values, or null for none. */
export function dataAsOf(records: readonly OptionRecord[]): number | null {
  let latest: number | null = null;
  for (const record of records) if (latest === null || record.knownAt > latest) latest = record.knownAt;
  return latest;
}
