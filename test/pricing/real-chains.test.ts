import { expect } from 'vitest';
import { sharedPath, withData } from '../helpers/shared-data.js';
import {
  callPutGaps,
  comparable,
  differences,
  priceVendorRows,
  quantile,
  readHistoricalOptionData,
} from '../helpers/vendor-greeks.js';

const SPXW = 'data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv';
const { beforeAll, describe, it } = withData([SPXW]);

describe('computed IV on a real chain (HistoricalOptionData SPXW, 40 sessions of 2018)', () => {
  /** Quotes with a bid, 7 to 60 days from expiration. */
  let priced: ReturnType<typeof priceVendorRows>['rows'];
  beforeAll(async () => {
    const rows = await readHistoricalOptionData(sharedPath(SPXW));
    priced = priceVendorRows(rows).rows.filter(comparable);
  });

  it("agrees with the vendor's IVs within a vol point at the median, and its deltas within 0.01", () => {
    // The vendor repeats one IV over its far strikes (runs of three or more equal values): those are its
    // extrapolation, not a solve of the quotes there, and are left out of the IV comparison.
    const own = differences(priced.filter((row) => !row.vendorFlat));
    expect(own.iv.length).toBeGreaterThan(4000);
    expect(quantile(own.iv, 0.5)).toBeLessThan(1);
    expect(quantile(differences(priced).delta, 0.5)).toBeLessThan(0.01);
  });

  it('gives an IV to nearly every quote with a bid, and one IV to a call and a put at one strike', () => {
    expect(priced.filter((row) => row.iv !== null).length / priced.length).toBeGreaterThan(0.8);
    // With the parity forward the two sides agree; the vendor's own IVs disagree by over a vol point.
    expect(quantile(callPutGaps(priced), 0.5)).toBeLessThan(0.25);
    expect(quantile(callPutGaps(priced, true), 0.5)).toBeGreaterThan(1);
  });
});
