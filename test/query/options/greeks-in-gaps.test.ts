/**
 * A current record's Greeks: the vendor's where it gives them, Black–Scholes ones in the gaps where it
 * gives some but not all and there is a spot, priced from the vendor's IV when it gives one (else from the
 * mid). The columns made without records follow the same rule (the differential tests hold them to these).
 */
import { describe, expect, it } from 'vitest';
import { etWallToSeconds } from '../../../src/market-time/index.js';
import { currentAsOf } from '../../../src/pit/as-of.js';
import { DEFAULT_RATE, greekColumns, yearsBetween } from '../../../src/pricing/index.js';
import { toRecords } from '../../../src/query/options/records.js';
import type { SnapshotRow } from '../../../src/query/options/snapshot-sql.js';

const QUOTED = etWallToSeconds('2021-03-10', '15:45');
const EXPIRES = etWallToSeconds('2021-04-16', '16:00');

/** A call 10 dollars out of the money, quoted at 15:45, with the vendor's figures as `vendor` gives them. */
function row(vendor: Partial<Pick<SnapshotRow, 'iv' | 'delta' | 'gamma' | 'theta' | 'vega'>>): SnapshotRow {
  return {
    option_symbol: 'XYZ210416C00110000',
    underlying: 'XYZ',
    root: 'XYZ',
    expiration: '2021-04-16',
    expiration_time: EXPIRES,
    side: 'call',
    strike: 110,
    settlement: 'PM',
    monthly: true,
    weekly: false,
    quarterly: false,
    nonstandard: false,
    first_traded: '2021-01-04',
    session_date: '2021-03-10',
    quote_time: QUOTED,
    // A mid of 4.00: far richer than a 20 % volatility prices this call.
    bid: 3.9,
    ask: 4.1,
    bid_size: 10,
    ask_size: 10,
    last: null,
    volume: null,
    volume_time: null,
    underlying_price: 100,
    iv: null,
    delta: null,
    gamma: null,
    theta: null,
    vega: null,
    open_interest: null,
    oi_published_at: null,
    ...vendor,
  };
}

const asOf = currentAsOf('live', QUOTED + 60);
const terms = {
  side: 'call' as const,
  spot: 100,
  strike: 110,
  years: yearsBetween(QUOTED, EXPIRES),
  rate: DEFAULT_RATE,
};

describe('Greeks in the gaps of a current record', () => {
  it("prices the missing ones from the vendor's IV, not from the mid, and keeps those the vendor gives", () => {
    const [record] = toRecords([row({ iv: 0.2, gamma: 0.5 })], asOf);
    const atVendorIv = greekColumns(terms, 0.2, null);
    const atMid = greekColumns(terms, null, 4);
    expect(atMid.delta).not.toBe(atVendorIv.delta);
    expect(record).toMatchObject({
      iv: 0.2,
      delta: atVendorIv.delta,
      gamma: 0.5,
      theta: atVendorIv.theta,
      vega: atVendorIv.vega,
    });
  });

  it('solves the IV from the mid when the vendor gives none', () => {
    const [record] = toRecords([row({ delta: 0.3 })], asOf);
    const atMid = greekColumns(terms, null, 4);
    expect(record).toMatchObject({ iv: atMid.iv, delta: 0.3, gamma: atMid.gamma });
  });

  it("serves the vendor's five figures as given, and computes none without a spot", () => {
    const vendor = { iv: 0.31, delta: 0.25, gamma: 0.02, theta: -0.03, vega: 0.11 };
    expect(toRecords([row(vendor)], asOf)[0]).toMatchObject(vendor);
    const [spotless] = toRecords([{ ...row({ iv: 0.2 }), underlying_price: null }], asOf);
    expect(spotless).toMatchObject({ iv: 0.2, delta: null, gamma: null, theta: null, vega: null });
  });
});
