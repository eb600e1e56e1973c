/**
 * Computed IV and Greeks against reality (`npm run bench -- accuracy`): real end-of-day chains priced by
 * `computeSnapshotGreeks` beside the vendor's own IV and delta, over contracts with a bid and 7–60 days to
 * expiration. The baseline is the computation the answers used before pricing/ (Black–Scholes on the spot,
 * r = 0, each contract alone), measured on the same rows in the same run.
 *
 * - HistoricalOptionData SPXW, 40 sessions of 2018 (L2: `impliedvol`, `delta`; EOD quotes at 16:00 ET,
 *   PM-settled expirations at 16:00 ET). The vendor prints, beyond a few strikes either side, one IV
 *   repeated over every further strike (its extrapolated wings, not a solve of those quotes); rows are
 *   reported all together and without those runs ("vendor's own"). Beside the vendor, a check that needs
 *   no vendor: a call and a put at one strike must share one IV when the forward is right.
 * - HistoricalOptionData A (Agilent, American, one session of 2016, L3: `IVMean`, `Delta`).
 * - Cboe DataShop VIX, 2016-06-01 15:45: the layout has no IV or Greek at all, so what is reported is how
 *   many contracts get an IV and each expiration's parity forward beside the VIX spot (VIX options price
 *   off its futures, in contango that day).
 */
import {
  callPutGaps,
  comparable,
  differences,
  type PricedRow,
  priceVendorRows,
  priceVendorRowsOnSpot,
  quantile,
  readCboeDatashop,
  readHistoricalOptionData,
  type VendorRow,
} from '../test/helpers/vendor-greeks.js';
import { type BenchRow, defineBenchmark, ratioRow } from './lib.js';

const VOL_POINTS = 'volpts';

function accuracyRows(label: string, ours: readonly PricedRow[], baseline: readonly PricedRow[]): BenchRow[] {
  const a = differences(ours.filter(comparable));
  const b = differences(baseline.filter(comparable));
  const rows: BenchRow[] = [
    ratioRow({
      name: `${label} IV |Δ| median`,
      ours: quantile(a.iv, 0.5),
      baseline: quantile(b.iv, 0.5),
      unit: VOL_POINTS,
      target: `< 1 ${VOL_POINTS}`,
      note: `${a.iv.length} rows with both IVs (baseline ${b.iv.length})`,
    }),
    ratioRow({
      name: `${label} IV |Δ| p90`,
      ours: quantile(a.iv, 0.9),
      baseline: quantile(b.iv, 0.9),
      unit: VOL_POINTS,
      target: '≤ 1× baseline',
    }),
    ratioRow({
      name: `${label} delta |Δ| median`,
      ours: quantile(a.delta, 0.5),
      baseline: quantile(b.delta, 0.5),
      unit: 'delta',
      target: '≤ 1× baseline',
    }),
    ratioRow({
      name: `${label} delta |Δ| p90`,
      ours: quantile(a.delta, 0.9),
      baseline: quantile(b.delta, 0.9),
      unit: 'delta',
      target: '≤ 1× baseline',
    }),
  ];
  return rows;
}

/** The 1-month Treasury bill rate over January–February 2018, about 1.4 %. */
const BILL_RATE_PERCENT = 1.4;

/**
 * The rate each snapshot's quotes imply: C − P = e^{−rT}(F − K), so a least-squares line of the call and
 * put mids' difference on the strike (strikes within 5 % of the spot, both sides bid, each weighted by the
 * inverse of the two spreads) has slope −e^{−rT}.
 */
function boxSpreadRates(rows: readonly VendorRow[]): number[] {
  const pairs = new Map<string, { calls: Map<number, VendorRow>; puts: VendorRow[] }>();
  for (const row of rows) {
    if (row.dte < 7 || !(row.bid > 0) || Math.abs(row.strike / row.spot - 1) > 0.05) continue;
    const key = `${row.snapshot}|${row.expiration}`;
    let entry = pairs.get(key);
    if (entry === undefined) {
      entry = { calls: new Map(), puts: [] };
      pairs.set(key, entry);
    }
    if (row.side === 'call') entry.calls.set(row.strike, row);
    else entry.puts.push(row);
  }
  const rates: number[] = [];
  for (const { calls, puts } of pairs.values()) {
    let [sw, sx, sy, sxx, sxy] = [0, 0, 0, 0, 0];
    let years = 0;
    for (const put of puts) {
      const call = calls.get(put.strike);
      if (call === undefined) continue;
      const w = 1 / (call.ask - call.bid + put.ask - put.bid);
      const y = 0.5 * (call.bid + call.ask) - 0.5 * (put.bid + put.ask);
      sw += w;
      sx += w * put.strike;
      sy += w * y;
      sxx += w * put.strike * put.strike;
      sxy += w * put.strike * y;
      years = (put.expirationTime - put.quoteTime) / (365 * 86_400);
    }
    const slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
    if (slope < 0 && years > 0) rates.push(-Math.log(-slope) / years);
  }
  return rates;
}

export default defineBenchmark({
  name: 'greeks-accuracy',
  description: 'computed IV and delta against vendor values on real SPXW, A and VIX chains',
  async run(ctx) {
    const file = (name: string) => ctx.sharedFile(`data/options/${name}`);
    const rows: BenchRow[] = [];

    const spxw = await readHistoricalOptionData(file('hod_SPXW_2018-01-02_to_2018-02-28.csv'));
    const spxwOurs = priceVendorRows(spxw).rows;
    const spxwBaseline = priceVendorRowsOnSpot(spxw);
    const compared = spxwOurs.filter(comparable);
    ctx.log(
      `SPXW: ${spxw.length} rows, ${compared.length} with a bid and 7–60 days, ` +
        `${compared.filter((row) => row.vendorFlat).length} of them in the vendor's flat wings`,
    );
    rows.push(...accuracyRows('SPXW all', spxwOurs, spxwBaseline));
    const own = (list: readonly PricedRow[]) => list.filter((row) => !row.vendorFlat);
    rows.push(...accuracyRows("SPXW vendor's own", own(spxwOurs), own(spxwBaseline)));
    rows.push(
      ratioRow({
        name: 'SPXW rows given an IV',
        ours: compared.filter((row) => row.iv !== null).length,
        baseline: spxwBaseline.filter(comparable).filter((row) => row.iv !== null).length,
        unit: 'rows',
        target: '≥ 0.8× baseline',
        note: `of ${compared.length}; the rest are quotes at or under parity's intrinsic value`,
      }),
    );
    const gaps = callPutGaps(spxwOurs);
    const baselineGaps = callPutGaps(spxwBaseline);
    const vendorGaps = callPutGaps(spxwOurs, true);
    rows.push(
      ratioRow({
        name: 'SPXW call−put IV gap, same strike, median',
        ours: quantile(gaps, 0.5),
        baseline: quantile(baselineGaps, 0.5),
        unit: VOL_POINTS,
        target: '≤ 1× baseline',
        note: `within 5 % of spot, ${gaps.length} strikes; the vendor's own gap: ${quantile(vendorGaps, 0.5).toFixed(2)}`,
      }),
      ratioRow({
        name: 'SPXW call−put IV gap, same strike, p90',
        ours: quantile(gaps, 0.9),
        baseline: quantile(baselineGaps, 0.9),
        unit: VOL_POINTS,
        target: '≤ 1× baseline',
        note: `the vendor's own gap: ${quantile(vendorGaps, 0.9).toFixed(2)}`,
      }),
    );
    // The rate, measured: a constant 1.4 % (the T-bill rate of these sessions) against r = 0.
    const stated = priceVendorRows(spxw, { rate: 0.014 }).rows;
    const common = (list: readonly PricedRow[]) =>
      list.filter((row, i) => comparable(row) && row.iv !== null && spxwOurs[i]!.iv !== null);
    rows.push(
      ratioRow({
        name: 'SPXW IV |Δ| median, r = 1.4 % vs r = 0',
        ours: quantile(differences(common(stated)).iv, 0.5),
        baseline: quantile(differences(common(spxwOurs)).iv, 0.5),
        unit: VOL_POINTS,
        target: '≤ 1.05× baseline',
        note: 'rows both rates give an IV',
      }),
    );

    // The rate the chain implies, a box-spread regression per snapshot, against the bills' 1.4 %.
    const boxRates = boxSpreadRates(spxw);
    ctx.log(`SPXW box-spread rates: ${boxRates.map((r) => (100 * r).toFixed(1)).join(' ')} %`);
    rows.push(
      ratioRow({
        name: 'SPXW box-spread rate, median',
        ours: 100 * quantile(boxRates, 0.5),
        baseline: BILL_RATE_PERCENT,
        unit: '%',
        target: '≤ 2× baseline',
        note: `${boxRates.length} snapshots 7+ days out, strikes within 5 % of spot; baseline: 1-month bills`,
      }),
      ratioRow({
        name: 'SPXW box-spread rate, max − min',
        ours: 100 * (Math.max(...boxRates) - Math.min(...boxRates)),
        baseline: BILL_RATE_PERCENT,
        unit: '%',
        target: '≤ 1× baseline',
        note: `from ${(100 * Math.min(...boxRates)).toFixed(1)} to ${(100 * Math.max(...boxRates)).toFixed(1)} %: why the default rate is 0`,
      }),
    );

    const agilent = await readHistoricalOptionData(file('hod_L3_A_2016-01-05.csv'));
    rows.push(...accuracyRows('A (American)', priceVendorRows(agilent).rows, priceVendorRowsOnSpot(agilent)));

    const vix = await readCboeDatashop(file('cboe_datashop_VIX_2016-06-01.csv'));
    const vixPriced = priceVendorRows(vix);
    const vixCompared = vixPriced.rows.filter(comparable);
    rows.push(
      ratioRow({
        name: 'VIX 15:45 rows given an IV',
        ours: vixCompared.filter((row) => row.iv !== null).length,
        baseline: vixCompared.length,
        unit: 'rows',
        target: '≥ 0.8× baseline',
        note: 'baseline: rows with a bid and 7–60 days; the file has no vendor IV or Greeks to compare',
      }),
    );
    for (const forward of vixPriced.forwards) {
      if (forward.source !== 'parity' || forward.dte < 7 || forward.dte > 60) continue;
      rows.push(
        ratioRow({
          name: `VIX forward ${forward.expiration} vs spot`,
          ours: forward.forward,
          baseline: forward.spot,
          unit: 'VIX',
          target: '≥ 1× baseline',
          note: 'parity forward vs the 15:45 VIX mid; contango is the check',
        }),
      );
    }
    return rows;
  },
});
