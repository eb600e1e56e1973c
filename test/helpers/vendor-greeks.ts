/**
 * The pricing module against vendor files: each snapshot of a real chain priced with
 * `computeSnapshotGreeks`, its IV and delta set beside the vendor's. Shared by the accuracy benchmark
 * and the pricing suite's real-data test.
 */
import { readFile } from 'node:fs/promises';
import { columnIndex, readCsvHeader, splitCsvLine } from '../../src/ingest/csv-source.js';
import { dte, etWallToSeconds, exerciseStyleOf } from '../../src/market-time/index.js';
import type { OptionSide } from '../../src/occ/index.js';
import {
  blackScholes,
  computeSnapshotGreeks,
  impliedVolatility,
  type RateInput,
  yearsBetween,
} from '../../src/pricing/index.js';

/** One vendor row, parsed: its snapshot, terms, quote and (where the file has them) the vendor's IV and delta. */
export type VendorRow = {
  readonly snapshot: string;
  readonly root: string;
  readonly expiration: string;
  readonly side: OptionSide;
  readonly strike: number;
  readonly spot: number;
  readonly quoteTime: number;
  readonly expirationTime: number;
  readonly dte: number;
  readonly bid: number;
  readonly ask: number;
  readonly vendorIv: number | null;
  readonly vendorDelta: number | null;
};

/** A vendor row with our values beside it. */
export type PricedRow = VendorRow & {
  readonly iv: number | null;
  readonly delta: number | null;
  /** The vendor's IV repeats over three or more neighbouring strikes: its extrapolated wings, not a solve. */
  readonly vendorFlat: boolean;
};

/** The forward of one snapshot's expiration beside the snapshot's spot. */
export type PricedForward = {
  readonly snapshot: string;
  readonly expiration: string;
  readonly dte: number;
  readonly spot: number;
  readonly forward: number;
  readonly source: 'parity' | 'carry';
};

/** A whole file priced. */
export type PricedFile = { readonly rows: PricedRow[]; readonly forwards: PricedForward[] };

const usDate = (text: string) => {
  const [month, day, year] = text.trim().split('/');
  return `${year}-${month!.padStart(2, '0')}-${day!.padStart(2, '0')}`;
};

async function readRows(
  file: string,
): Promise<{ get: (row: string[], name: string) => string; rows: string[][] }> {
  const header = await readCsvHeader(file);
  const index = columnIndex(file, header);
  const text = (await readFile(file, 'utf8')).replace(/^\uFEFF/, '');
  const rows = text
    .split('\n')
    .slice(header.line)
    .map((line) => line.replace(/\r$/, ''))
    .filter((line) => line.trim() !== '')
    .map((line) => splitCsvLine(line));
  return {
    rows,
    get: (row, name) => {
      const i = index.get(name);
      if (i === undefined) throw new Error(`${file}: no column ${name}`);
      return row[i]!;
    },
  };
}

const optional = (text: string) => (text.trim() === '' ? null : Number(text));

/**
 * A HistoricalOptionData file (L2 `underlying_last…impliedvol,delta` or L3 `UnderlyingPrice…IVMean,Delta`):
 * end-of-day rows, quoted at 16:00 ET of the quote date and expiring at 16:00 ET of the expiration date
 * (the SPXW PM settlement and equity expirations alike).
 */
export async function readHistoricalOptionData(file: string): Promise<VendorRow[]> {
  const { rows, get } = await readRows(file);
  const l3 = (await readCsvHeader(file)).names.includes('IVMean');
  return rows.map((row) => {
    const field = (l2: string, l3Name: string) => get(row, l3 ? l3Name : l2);
    const snapshot = usDate(field('quotedate', 'DataDate'));
    const expiration = usDate(field('expiration', 'Expiration'));
    const symbol = field('optionroot', 'OptionSymbol');
    return {
      snapshot,
      root: symbol.slice(0, symbol.length - 15),
      expiration,
      side: field('type', 'Type') === 'call' ? 'call' : 'put',
      strike: Number(field('strike', 'Strike')),
      spot: Number(field('underlying_last', 'UnderlyingPrice')),
      quoteTime: etWallToSeconds(snapshot, '16:00'),
      expirationTime: etWallToSeconds(expiration, '16:00'),
      dte: dte(snapshot, expiration),
      bid: Number(field('bid', 'Bid')),
      ask: Number(field('ask', 'Ask')),
      vendorIv: optional(field('impliedvol', 'IVMean')),
      vendorDelta: optional(field('delta', 'Delta')),
    };
  });
}

/**
 * A Cboe DataShop option EOD summary: its 15:45 snapshot (quotes and the underlying's bid and ask), which
 * the layout prints without any IV or Greek. VIX-family roots settle on the 09:30 ET opening quotation.
 */
export async function readCboeDatashop(file: string): Promise<VendorRow[]> {
  const { rows, get } = await readRows(file);
  return rows.map((row) => {
    const snapshot = get(row, 'quote_date');
    const expiration = get(row, 'expiration');
    const spot = 0.5 * (Number(get(row, 'underlying_bid_1545')) + Number(get(row, 'underlying_ask_1545')));
    return {
      snapshot,
      root: get(row, 'root'),
      expiration,
      side: get(row, 'option_type') === 'C' ? 'call' : 'put',
      strike: Number(get(row, 'strike')),
      spot,
      quoteTime: etWallToSeconds(snapshot, '15:45'),
      expirationTime: etWallToSeconds(expiration, '09:30'),
      dte: dte(snapshot, expiration),
      bid: Number(get(row, 'bid_1545')),
      ask: Number(get(row, 'ask_1545')),
      vendorIv: null,
      vendorDelta: null,
    };
  });
}

/**
 * Prices every snapshot of `rows` (one call per snapshot and root, the contracts of each expiration
 * sharing its parity forward), unrounded; `rate` as `computeSnapshotGreeks` takes it.
 */
export function priceVendorRows(rows: readonly VendorRow[], options: { rate?: RateInput } = {}): PricedFile {
  const snapshots = new Map<string, VendorRow[]>();
  for (const row of rows) {
    const key = `${row.snapshot}|${row.root}`;
    const list = snapshots.get(key);
    if (list === undefined) snapshots.set(key, [row]);
    else list.push(row);
  }
  const priced: PricedRow[] = [];
  const forwards: PricedForward[] = [];
  for (const list of snapshots.values()) {
    const first = list[0]!;
    const result = computeSnapshotGreeks({
      spot: first.spot,
      style: exerciseStyleOf(first.root),
      quoteTime: first.quoteTime,
      rounding: 'none',
      ...(options.rate === undefined ? {} : { rate: options.rate }),
      contracts: {
        strike: list.map((row) => row.strike),
        side: list.map((row) => row.side),
        years: list.map((row) => yearsBetween(row.quoteTime, row.expirationTime)),
        bid: list.map((row) => row.bid),
        ask: list.map((row) => row.ask),
        expirationKey: list.map((row) => row.expiration),
      },
    });
    const flat = vendorFlat(list);
    list.forEach((row, i) => {
      priced.push({ ...row, iv: result.iv[i]!, delta: result.delta[i]!, vendorFlat: flat[i]! });
    });
    for (const [expiration, forward] of result.forwards) {
      forwards.push({
        snapshot: first.snapshot,
        expiration: String(expiration),
        dte: dte(first.snapshot, String(expiration)),
        spot: first.spot,
        forward: forward.forward,
        source: forward.source,
      });
    }
  }
  return { rows: priced, forwards };
}

/**
 * The rows priced as the service's answers were before pricing/: European Black–Scholes on the spot at
 * r = 0, each contract alone, IV from the mid. The baseline the accuracy benchmark compares against.
 */
export function priceVendorRowsOnSpot(rows: readonly VendorRow[]): PricedRow[] {
  const flat = vendorFlatBySnapshot(rows);
  return rows.map((row, i) => {
    const terms = {
      side: row.side,
      spot: row.spot,
      strike: row.strike,
      years: yearsBetween(row.quoteTime, row.expirationTime),
      rate: 0,
    };
    const iv = row.bid > 0 && row.ask >= row.bid ? impliedVolatility(terms, 0.5 * (row.bid + row.ask)) : null;
    return { ...row, iv, delta: iv === null ? null : blackScholes(terms, iv).delta, vendorFlat: flat[i]! };
  });
}

function vendorFlatBySnapshot(rows: readonly VendorRow[]): boolean[] {
  const flat = rows.map(() => false);
  const snapshots = new Map<string, number[]>();
  rows.forEach((row, i) => {
    const key = `${row.snapshot}|${row.root}`;
    const list = snapshots.get(key);
    if (list === undefined) snapshots.set(key, [i]);
    else list.push(i);
  });
  for (const indices of snapshots.values()) {
    const marks = vendorFlat(indices.map((i) => rows[i]!));
    indices.forEach((i, k) => {
      flat[i] = marks[k]!;
    });
  }
  return flat;
}

/** Whether each row's vendor IV is one of a run of three or more equal values over neighbouring strikes. */
function vendorFlat(list: readonly VendorRow[]): boolean[] {
  const flat = list.map(() => false);
  const sides = new Map<string, number[]>();
  list.forEach((row, i) => {
    const key = `${row.expiration}|${row.side}`;
    const indices = sides.get(key);
    if (indices === undefined) sides.set(key, [i]);
    else indices.push(i);
  });
  for (const indices of sides.values()) {
    indices.sort((a, b) => list[a]!.strike - list[b]!.strike);
    let start = 0;
    for (let k = 1; k <= indices.length; k++) {
      const same = k < indices.length && list[indices[k]!]!.vendorIv === list[indices[start]!]!.vendorIv;
      if (same) continue;
      if (k - start >= 3) for (let j = start; j < k; j++) flat[indices[j]!] = true;
      start = k;
    }
  }
  return flat;
}

/** The rows the accuracy check compares: a bid, and 7 to 60 calendar days to expiration. */
export function comparable(row: PricedRow): boolean {
  return row.bid > 0 && row.dte >= 7 && row.dte <= 60;
}

/** The value at quantile `q` (nearest rank) of `values`; NaN for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/** Absolute IV differences in volatility points and delta differences, over rows where both sides have one. */
export function differences(rows: readonly PricedRow[]): { iv: number[]; delta: number[] } {
  const iv: number[] = [];
  const delta: number[] = [];
  for (const row of rows) {
    if (row.iv !== null && row.vendorIv !== null) iv.push(100 * Math.abs(row.iv - row.vendorIv));
    if (row.delta !== null && row.vendorDelta !== null) delta.push(Math.abs(row.delta - row.vendorDelta));
  }
  return { iv, delta };
}

/**
 * |IV(call) − IV(put)| in volatility points at each strike within 5 % of the spot where both sides have a
 * bid and 7–60 days: European options at one strike share one volatility when their forward is right,
 * so the gap measures the forward. `vendor` reads the vendor's IVs instead of ours.
 */
export function callPutGaps(rows: readonly PricedRow[], vendor = false): number[] {
  const pairs = new Map<string, PricedRow[]>();
  for (const row of rows) {
    if (!comparable(row) || Math.abs(row.strike / row.spot - 1) > 0.05) continue;
    const key = `${row.snapshot}|${row.root}|${row.expiration}|${row.strike}`;
    const pair = pairs.get(key);
    if (pair === undefined) pairs.set(key, [row]);
    else pair.push(row);
  }
  const gaps: number[] = [];
  for (const pair of pairs.values()) {
    if (pair.length !== 2) continue;
    const [a, b] = pair.map((row) => (vendor ? row.vendorIv : row.iv));
    if (a != null && b != null) gaps.push(100 * Math.abs(a - b));
  }
  return gaps;
}
