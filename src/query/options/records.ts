/**
 * The service's option row computed from a store row: mid, moneyness, dte, `updated`, Greeks, and the
 * known-at instant of every field family beside the values. The one place a store row becomes an API row.
 */
import { dte, etWallToSeconds } from '../../market-time/index.js';
import type { OptionSide } from '../../occ/index.js';
import type { AsOf, CurrentAsOf } from '../../pit/as-of.js';
import { type KnownAtByFamily, knownAtOfColumns, type OptionKnownAt } from '../../pit/known-at.js';
import { DEFAULT_RATE, type GreekColumns, greekColumns, yearsBetween } from '../../pricing/index.js';
import { ColumnBuffer } from './block-columns.js';
import { nullable } from './block-rows.js';
import { dayNumberOfIso, isoDateOfDay } from './days.js';
import type {
  CurrentSnapshotColumns,
  DatedSnapshotColumns,
  SnapshotColumns,
  SnapshotRow,
} from './snapshot-sql.js';

/** The service's option row (chain and option quotes), field for field. */
export type OptionValues = {
  readonly optionSymbol: string;
  readonly underlying: string;
  readonly expiration: number;
  readonly side: OptionSide;
  readonly strike: number;
  readonly firstTraded: number;
  readonly dte: number;
  readonly updated: number;
  readonly bid: number | null;
  readonly bidSize: number | null;
  readonly mid: number | null;
  readonly ask: number | null;
  readonly askSize: number | null;
  readonly last: number | null;
  readonly openInterest: number | null;
  readonly volume: number | null;
  readonly inTheMoney: boolean | null;
  readonly intrinsicValue: number | null;
  readonly extrinsicValue: number | null;
  readonly underlyingPrice: number | null;
  readonly iv: number | null;
  readonly delta: number | null;
  readonly gamma: number | null;
  readonly theta: number | null;
  readonly vega: number | null;
};

/**
 * An option row with what filtering needs (its expiration group `root:date`) and when each family of its
 * values became known ({@link OptionKnownAt}).
 */
export type OptionRecord = OptionValues &
  OptionKnownAt & {
    readonly group: string;
    readonly expirationDate: string;
    /**
     * The snapshot's volume when a current answer withholds it because its stamp is after the cutoff
     * (a 15:45 Cboe snapshot carries the whole session's volume), else null. The API face never serves
     * it; the backtest face's `flag` policy does, and lists it.
     */
    readonly withheldVolume: number | null;
    /** The latest known-at instant of the values served. */
    readonly knownAt: number;
  };

/**
 * Rounds to the cent the way the service does, i.e. the decimal nearest to the binary value, an exact
 * half cent to the even cent: the intrinsic and extrinsic values.
 */
export function roundCents(value: number): number {
  const eighths = value * 8;
  let rounded: number;
  if (Number.isInteger(eighths) && Math.abs(eighths) % 2 === 1) {
    const floor = Math.floor(value * 100);
    rounded = (floor % 2 === 0 ? floor : floor + 1) / 100;
  } else {
    // Away from a half cent, the nearest cent of the product is the nearest cent of the exact value (the
    // product's error is some 1e-14), and k / 100 is the double `toFixed`'s text parses to; near a half
    // cent only the exact decimal value decides.
    const scaled = value * 100;
    const fraction = scaled - Math.floor(scaled);
    rounded = Math.abs(fraction - 0.5) > 1e-6 ? Math.round(scaled) / 100 : nearestCentBesideHalf(value);
  }
  return rounded === 0 ? 0 : rounded;
}

/** Veltkamp's splitter for doubles, 2^27 + 1: `splitter * x` cuts x into two halves of 26 bits. */
const SPLITTER = 134_217_729;

/**
 * The nearest cent of a value within a millionth of a cent of a half cent, by its exact binary value (what
 * `toFixed(2)` decides by, at an eighth of its cost: a mid such as 2.645 makes an extrinsic value beside a
 * half cent on every other row). The sign of |value| · 200 − (2k + 1), the half cent above cent k, is
 * computed exactly: |value| · 25 = p + e with Dekker's exact product (25 has 5 bits, each half of |value|
 * times 25 is exact), and 8p − (2k + 1) is exact (Sterbenz: the two are within a factor of two), so their
 * sum with 8e has the sign of the exact difference. An exact half cent is the caller's (the even cent).
 */
function nearestCentBesideHalf(value: number): number {
  const magnitude = Math.abs(value);
  // Past 10^12 cents k + 1 may not be exact; toFixed still is (as is NaN's answer).
  if (!(magnitude < 1e10)) return Number(value.toFixed(2));
  const below = Math.floor(magnitude * 100);
  const product = magnitude * 25;
  const split = SPLITTER * magnitude;
  const high = split - (split - magnitude);
  const low = magnitude - high;
  const error = high * 25 - product + low * 25;
  const side = 8 * product - (2 * below + 1) + 8 * error;
  if (side === 0) return Number(value.toFixed(2));
  const cents = side > 0 ? below + 1 : below;
  return (value < 0 ? -cents : cents) / 100;
}

/**
 * `mid` as the service prints it (semantics §3.1): (bid + ask) / 2 rounded half-up to the cent on the
 * exact decimal value (110.375 → 110.38, 0.185 → 0.19), never through binary floating point. Prices are
 * taken as exact to 1/10,000 of a dollar, which every store column is.
 */
export function midOf(bid: number, ask: number): number {
  const sum = Math.round(bid * 10_000) + Math.round(ask * 10_000);
  const cents = Math.floor((sum + 100) / 200);
  return cents === 0 ? 0 : cents / 100;
}

/** The service's rows from the store's at an as-of (see {@link recordMaker}). */
export function toRecords(rows: readonly SnapshotRow[], asOf: AsOf): OptionRecord[] {
  return rows.map(recordMaker(asOf));
}

/**
 * The row-to-record conversion, remembering date conversions across rows. `updated` is the snapshot's
 * true quote time and `dte` counts from the snapshot's own session, so both describe the snapshot the
 * prices come from (§3.1). Dated rows: Greeks and IV null. Current rows: volume only when its stamp is
 * known at the cutoff (else withheld), vendor Greeks or Black–Scholes ones.
 */
export function recordMaker(asOf: AsOf): (row: SnapshotRow) => OptionRecord {
  const current = asOf.kind === 'current' ? asOf : undefined;
  const openingSeconds = memoized((date: string) => etWallToSeconds(date, '09:30'));
  const daysTo = memoized((pair: string) => dte(pair.slice(0, 10), pair.slice(11)));
  // A chain's rows come by expiration, all of one session: the last row's texts serve most of the next.
  let last: { session: string; expiration: string; root: string; dte: number; group: string } | undefined;
  return (row) => {
    if (
      last === undefined ||
      last.session !== row.session_date ||
      last.expiration !== row.expiration ||
      last.root !== row.root
    ) {
      last = {
        session: row.session_date,
        expiration: row.expiration,
        root: row.root,
        dte: daysTo(`${row.session_date}|${row.expiration}`),
        group: `${row.root}:${row.expiration}`,
      };
    }
    return new RowRecord(row, current, openingSeconds(row.first_traded), last.dte, last.group);
  };
}

/**
 * What one record holds in memory beyond the strings it shares with its answer's fields: measured as the
 * heap a year of the sample's kept SPY chains let go when their records went (571 bytes a record, dated
 * and whole chains alike). What the response cache counts for a kept option answer's records
 * (`estimateBytes`); a field added to the record adds to it.
 */
export const OPTION_RECORD_BYTES = 576;

/**
 * A record made by `new`, not as an object literal: V8 moves an object literal's allocation to the old
 * generation once most of the objects it made have outlived a young collection (the response cache and a
 * loop's held answers keep records), and from then on each record cost some 2.5 µs instead of 0.4 (an
 * intraday minute's 150 records: 0.35 ms). Objects made by a constructor are always made young.
 *
 * Its fields are the record's, declared by merging with the interface below, and assigned as `this.field`:
 * V8 sizes an object made by a constructor by the `this.field =` assignments it counts in it. Assigned
 * through an alias of `this`, a record held 10 fields in itself and 23 in an array grown, and so copied,
 * three fields at a time.
 */
// biome-ignore lint/correctness/noUnusedVariables: merged with the class below, whose fields it declares.
interface RowRecord extends WritableRecord {}

/** An option record's fields, assignable (by `RowRecord`'s constructor). */
type WritableRecord = { -readonly [K in keyof OptionRecord]: OptionRecord[K] };

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every field of the interface.
class RowRecord {
  constructor(
    row: SnapshotRow,
    current: CurrentAsOf | undefined,
    listedAt: number,
    dte: number,
    group: string,
  ) {
    const spot = row.underlying_price;
    const strike = Number(row.strike);
    const isCall = row.side === 'call';
    const mid = row.bid === null || row.ask === null ? null : midOf(row.bid, row.ask);
    const intrinsicValue = spot === null ? null : intrinsicOf(isCall, spot, strike);
    const volumeTime = row.volume === null ? null : (row.volume_time ?? row.quote_time);
    const volumeKnown = current === undefined || volumeTime === null || volumeTime <= current.cutoffSeconds;
    const volume = volumeKnown ? row.volume : null;
    const openInterest = row.open_interest;
    const oiPublishedAt = openInterest === null ? null : (row.oi_published_at ?? row.quote_time);
    // The vendor's figures, or Black–Scholes ones in the gaps when any is missing and there is a spot. In
    // locals, not objects: three objects of five numbers a record were an eighth of what a minute loop's
    // records allocated.
    let iv: number | null = null;
    let delta: number | null = null;
    let gamma: number | null = null;
    let theta: number | null = null;
    let vega: number | null = null;
    if (current !== undefined) {
      iv = row.iv;
      delta = row.delta;
      gamma = row.gamma;
      theta = row.theta;
      vega = row.vega;
      if (
        (iv === null || delta === null || gamma === null || theta === null || vega === null) &&
        spot !== null
      ) {
        const computed = greeksInGaps(
          row.side,
          spot,
          strike,
          row.quote_time,
          row.expiration_time,
          row.iv,
          row.bid,
          row.ask,
        );
        iv ??= computed.iv;
        delta ??= computed.delta;
        gamma ??= computed.gamma;
        theta ??= computed.theta;
        vega ??= computed.vega;
      }
    }
    // Assigned in one order, so that every record has the same fast shape.
    this.optionSymbol = row.option_symbol;
    this.underlying = row.underlying;
    this.expiration = row.expiration_time;
    this.side = row.side;
    this.strike = strike;
    this.firstTraded = listedAt;
    this.dte = dte;
    this.updated = row.quote_time;
    this.bid = row.bid;
    this.bidSize = row.bid_size;
    this.mid = mid;
    this.ask = row.ask;
    this.askSize = row.ask_size;
    this.last = row.last;
    this.openInterest = openInterest;
    this.volume = volume;
    this.inTheMoney = spot === null ? null : inTheMoneyOf(isCall, spot, strike);
    this.intrinsicValue = intrinsicValue;
    this.extrinsicValue = mid === null || intrinsicValue === null ? null : extrinsicOf(mid, intrinsicValue);
    this.underlyingPrice = spot;
    this.iv = iv;
    this.delta = delta;
    this.gamma = gamma;
    this.theta = theta;
    this.vega = vega;
    this.quoteTime = row.quote_time;
    this.volumeTime = volumeTime;
    this.oiPublishedAt = oiPublishedAt;
    this.listedAt = listedAt;
    this.group = group;
    this.expirationDate = row.expiration;
    this.withheldVolume = volumeKnown ? null : row.volume;
    this.knownAt = knownAtOf(row.quote_time, volume === null ? null : volumeTime, oiPublishedAt);
  }
}

/** Whether a contract is in the money at the underlying price `spot`. */
function inTheMoneyOf(isCall: boolean, spot: number, strike: number): boolean {
  return isCall ? spot > strike : strike > spot;
}

/** The intrinsic value at `spot`, rounded as the service prints it. */
function intrinsicOf(isCall: boolean, spot: number, strike: number): number {
  return roundCents(Math.max(0, isCall ? spot - strike : strike - spot));
}

/**
 * The extrinsic value from the printed mid and intrinsic value. The service prints it unsigned: its deep
 * in-the-money puts quoted under parity show mid 69.75, intrinsic 69.87, extrinsic 0.12.
 */
function extrinsicOf(mid: number, intrinsicValue: number): number {
  return roundCents(Math.abs(mid - intrinsicValue));
}

/** The latest known-at instant of a row's served values: its quote, its volume's stamp, its open interest's. */
function knownAtOf(quoteTime: number, servedVolumeTime: number | null, oiPublishedAt: number | null): number {
  return Math.max(quoteTime, servedVolumeTime ?? quoteTime, oiPublishedAt ?? quoteTime);
}

/**
 * The service's option row as columns, one per field, in {@link compareRecords} order: numbers as a
 * `Float64Array` with NaN for null (what a number field holds: see `NumberColumn`), the rest as arrays.
 */
export type OptionValueColumns = {
  readonly [K in keyof OptionValues]: OptionValues[K] extends number | null
    ? Float64Array
    : OptionValues[K][];
};

/** The number columns `quoteValueColumns` takes from its `ColumnBuffer`. */
const QUOTE_NUMBER_COLUMNS = 13;

/**
 * The columns a dated and a current answer make alike from the store's columns, in the service's order
 * (`order`): the contract's terms, the quote, and what is derived from the quote by the records' rules.
 * Each answer adds `dte`, open interest, volume and the Greeks by its own.
 */
function quoteValueColumns(rows: SnapshotColumns, order: Int32Array, numbers: ColumnBuffer) {
  const count = order.length;
  const openingOf = openingByDay();
  /** A store column in the service's order (NaN stays NaN: null). */
  const ordered = (column: Float64Array) => numbers.gathered(column, order);
  const strike = ordered(rows.strike);
  const bid = ordered(rows.bid);
  const ask = ordered(rows.ask);
  const underlyingPrice = ordered(rows.underlyingPrice);
  const firstTraded = numbers.take();
  const mid = numbers.take();
  const intrinsicValue = numbers.take();
  const extrinsicValue = numbers.take();
  const optionSymbol = new Array<string>(count);
  const side = new Array<OptionSide>(count);
  const inTheMoney = new Array<boolean | null>(count);
  for (let k = 0; k < count; k++) {
    const i = order[k]!;
    const isCall = rows.isCall[i] === 1;
    const spot = underlyingPrice[k]!;
    const hasSpot = !Number.isNaN(spot);
    const midValue = Number.isNaN(bid[k]!) || Number.isNaN(ask[k]!) ? Number.NaN : midOf(bid[k]!, ask[k]!);
    const intrinsic = hasSpot ? intrinsicOf(isCall, spot, strike[k]!) : Number.NaN;
    optionSymbol[k] = rows.symbolAt(i);
    side[k] = isCall ? 'call' : 'put';
    firstTraded[k] = openingOf(rows.firstTradedDay[i]!);
    mid[k] = midValue;
    inTheMoney[k] = hasSpot ? inTheMoneyOf(isCall, spot, strike[k]!) : null;
    intrinsicValue[k] = intrinsic;
    extrinsicValue[k] =
      Number.isNaN(midValue) || Number.isNaN(intrinsic) ? Number.NaN : extrinsicOf(midValue, intrinsic);
  }
  return {
    ordered,
    columns: {
      optionSymbol,
      underlying: new Array<string>(count).fill(rows.underlying),
      expiration: ordered(rows.expirationTime),
      side,
      strike,
      firstTraded,
      updated: ordered(rows.quoteTime),
      bid,
      bidSize: ordered(rows.bidSize),
      mid,
      ask,
      askSize: ordered(rows.askSize),
      last: ordered(rows.last),
      inTheMoney,
      intrinsicValue,
      extrinsicValue,
      underlyingPrice,
    },
  };
}

/** The columns of the quote (`quoteValueColumns`). */
type QuoteValueColumns = ReturnType<typeof quoteValueColumns>['columns'];

/** The columns a dated or a current answer makes by its own rules. */
type OwnValueColumns = Pick<
  OptionValueColumns,
  'dte' | 'openInterest' | 'volume' | 'iv' | 'delta' | 'gamma' | 'theta' | 'vega'
>;

/**
 * The quote's columns and an answer's own as one, every field named: a spread of the quote's columns into
 * the answer's was a sixth of `currentValueColumns`' own time in a minute loop.
 */
function valueColumns(quote: QuoteValueColumns, own: OwnValueColumns): OptionValueColumns {
  return {
    optionSymbol: quote.optionSymbol,
    underlying: quote.underlying,
    expiration: quote.expiration,
    side: quote.side,
    strike: quote.strike,
    firstTraded: quote.firstTraded,
    dte: own.dte,
    updated: quote.updated,
    bid: quote.bid,
    bidSize: quote.bidSize,
    mid: quote.mid,
    ask: quote.ask,
    askSize: quote.askSize,
    last: quote.last,
    openInterest: own.openInterest,
    volume: own.volume,
    inTheMoney: quote.inTheMoney,
    intrinsicValue: quote.intrinsicValue,
    extrinsicValue: quote.extrinsicValue,
    underlyingPrice: quote.underlyingPrice,
    iv: own.iv,
    delta: own.delta,
    gamma: own.gamma,
    theta: own.theta,
    vega: own.vega,
  };
}

/**
 * The values the records of a dated answer would hold (of the rows at `indices`, all without), made as
 * columns straight from the store's columns, in the service's order, with the latest known-at instant
 * among them: the records' rules (`RowRecord` with no current cutoff: no Greeks, volume always served)
 * without an object per row, and numbers without a JavaScript number each. A whole chain of thousands of
 * rows made each a row object and a record that the collector then copied: most of such an answer's
 * CPU. The differential tests hold these columns to the records' fields.
 */
export function datedValueColumns(
  rows: DatedSnapshotColumns,
  indices?: Int32Array,
): {
  columns: OptionValueColumns;
  knownAt: number | null;
} {
  const order = serviceOrder(rows, indices);
  const count = order.length;
  const sessionDay = dayNumberOfIso(rows.session);
  // The answer's number columns, kept with it, in one buffer (see `ColumnBuffer`): the quote's, then
  // volume, open interest's publication and value, dte and the one column of null Greeks.
  const numbers = new ColumnBuffer(count, QUOTE_NUMBER_COLUMNS + 5);
  const { ordered, columns: quote } = quoteValueColumns(rows, order, numbers);
  const quoteTime = quote.updated;
  const volume = ordered(rows.volume);
  const oiPublishedAt = ordered(rows.oiPublishedAt);
  const openInterest = ordered(rows.openInterest);
  const dte = numbers.take();
  let knownAt: number | null = null;
  for (let k = 0; k < count; k++) {
    const i = order[k]!;
    dte[k] = rows.expirationDay[i]! - sessionDay;
    // Open interest only where a settlement was read for the contract (its publication is known).
    const published = nullable(oiPublishedAt[k]!);
    if (published === null) openInterest[k] = Number.NaN;
    const volumeTime = Number.isNaN(volume[k]!) ? null : (nullable(rows.volumeTime[i]!) ?? quoteTime[k]!);
    const rowKnownAt = knownAtOf(quoteTime[k]!, volumeTime, published);
    if (knownAt === null || rowKnownAt > knownAt) knownAt = rowKnownAt;
  }
  // Dated answers have no Greeks: one column of nulls serves the five.
  const noGreeks = numbers.take().fill(Number.NaN);
  const columns = valueColumns(quote, {
    dte,
    openInterest,
    volume,
    iv: noGreeks,
    delta: noGreeks,
    gamma: noGreeks,
    theta: noGreeks,
    vega: noGreeks,
  });
  return { columns, knownAt };
}

/**
 * What an option answer's rows say beyond their values, as a judge reads them: the known-at instants of
 * each field family, and the volume of each row whether served or withheld.
 */
export type AnswerKnownAt = {
  readonly families: KnownAtByFamily;
  /** Per row, the volume served or, when withheld by the cutoff, the withheld one (null: none). */
  readonly volumeOrWithheld: readonly (number | null)[];
};

/**
 * The values the records of a current answer would hold (of the rows at `indices`, all without), made as
 * columns straight from the store's columns, in the service's order, with the latest known-at instant
 * among them and each family's known-at column: `RowRecord`'s rules at the cutoff (volume withheld when
 * stamped after it, `dte` from each snapshot's own session, the vendor's Greeks, or Black–Scholes ones in
 * the gaps where the vendor gives some but not all) without an object per row. A whole SPY chain at a
 * random instant of the 26 M-row bench store went from 73 to 45 ms of CPU (p50); small answers stay
 * records (the chain endpoint's `CURRENT_COLUMNS_ROWS`). The differential tests hold these columns to the
 * records' fields.
 */
export function currentValueColumns(
  rows: CurrentSnapshotColumns,
  cutoffSeconds: number,
  indices?: Int32Array,
): {
  columns: OptionValueColumns;
  knownAt: number | null;
  known: AnswerKnownAt;
} {
  const order = serviceOrder(rows, indices);
  const count = order.length;
  // The answer's number columns, kept with it, in one buffer (see `ColumnBuffer`): the quote's, then
  // open interest, volume, dte and the five Greeks.
  const numbers = new ColumnBuffer(count, QUOTE_NUMBER_COLUMNS + 8);
  const { ordered, columns: quote } = quoteValueColumns(rows, order, numbers);
  const { updated: quoteTime, expiration, strike, side, bid, ask, underlyingPrice } = quote;
  const openInterest = ordered(rows.openInterest);
  const volume = numbers.take();
  const dte = numbers.take();
  const iv = ordered(rows.iv);
  const delta = ordered(rows.delta);
  const gamma = ordered(rows.gamma);
  const theta = ordered(rows.theta);
  const vega = ordered(rows.vega);
  // The known-at families as the judge reads them: arrays of numbers, filled here (`Array.from` of a
  // typed array goes through its iterator).
  const quoteKnown = new Array<number>(count);
  const listingKnown = new Array<number>(count);
  const volumeTimes = new Array<number | null>(count);
  const published = new Array<number | null>(count);
  const volumeOrWithheld = new Array<number | null>(count);
  let knownAt: number | null = null;
  for (let k = 0; k < count; k++) {
    const i = order[k]!;
    quoteKnown[k] = quoteTime[k]!;
    listingKnown[k] = quote.firstTraded[k]!;
    dte[k] = rows.expirationDay[i]! - rows.sessionDay[i]!;
    // Volume: served when its stamp is known at the cutoff, else withheld (the backtest face lists it).
    const rowVolume = nullable(rows.volume[i]!);
    const volumeTime = rowVolume === null ? null : (nullable(rows.volumeTime[i]!) ?? quoteTime[k]!);
    const served = volumeTime === null || volumeTime <= cutoffSeconds ? rowVolume : null;
    volume[k] = served ?? Number.NaN;
    volumeTimes[k] = volumeTime;
    volumeOrWithheld[k] = rowVolume;
    // Open interest's publication where the row has open interest.
    const oiPublishedAt = Number.isNaN(openInterest[k]!) ? null : rows.oiPublishedAt[i]!;
    published[k] = oiPublishedAt;
    const rowKnownAt = knownAtOf(quoteTime[k]!, served === null ? null : volumeTime, oiPublishedAt);
    if (knownAt === null || rowKnownAt > knownAt) knownAt = rowKnownAt;
    // The vendor's figures, or Black–Scholes ones in the gaps when any is missing and there is a spot.
    const spot = nullable(underlyingPrice[k]!);
    // Each Greek named, not looked up by name: a lookup per name and row was about half of this
    // function's own time in a minute loop.
    const gap =
      Number.isNaN(iv[k]!) ||
      Number.isNaN(delta[k]!) ||
      Number.isNaN(gamma[k]!) ||
      Number.isNaN(theta[k]!) ||
      Number.isNaN(vega[k]!);
    if (spot !== null && gap) {
      const computed = greeksInGaps(
        side[k]!,
        spot,
        strike[k]!,
        quoteTime[k]!,
        expiration[k]!,
        nullable(iv[k]!),
        nullable(bid[k]!),
        nullable(ask[k]!),
      );
      if (Number.isNaN(iv[k]!)) iv[k] = computed.iv ?? Number.NaN;
      if (Number.isNaN(delta[k]!)) delta[k] = computed.delta ?? Number.NaN;
      if (Number.isNaN(gamma[k]!)) gamma[k] = computed.gamma ?? Number.NaN;
      if (Number.isNaN(theta[k]!)) theta[k] = computed.theta ?? Number.NaN;
      if (Number.isNaN(vega[k]!)) vega[k] = computed.vega ?? Number.NaN;
    }
  }
  const columns = valueColumns(quote, { dte, openInterest, volume, iv, delta, gamma, theta, vega });
  const families = knownAtOfColumns({
    quote: quoteKnown,
    volume: volumeTimes,
    openInterest: published,
    listing: listingKnown,
  });
  return { columns, knownAt, known: { families, volumeOrWithheld } };
}

/**
 * The Black–Scholes figures that fill a current snapshot's gaps, where the vendor gives some Greeks but not
 * all and there is a spot: priced at the snapshot's quote time to its expiration, from the vendor's IV
 * when it gives one, else solved from the unrounded mid. `RowRecord` and `currentValueColumns` both fill
 * only the figures the vendor left out.
 */
function greeksInGaps(
  side: OptionSide,
  spot: number,
  strike: number,
  quoteTime: number,
  expirationTime: number,
  vendorIv: number | null,
  bid: number | null,
  ask: number | null,
): GreekColumns {
  const rawMid = bid === null || ask === null ? null : (bid + ask) / 2;
  const years = yearsBetween(quoteTime, expirationTime);
  return greekColumns({ side, spot, strike, years, rate: DEFAULT_RATE }, vendorIv, rawMid);
}

/** 09:30 ET of a day number, remembered per day (a chain's contracts share a few first traded days). */
function openingByDay(): (day: number) => number {
  const opening = new Map<number, number>();
  return (day) => {
    let seconds = opening.get(day);
    if (seconds === undefined) {
      seconds = etWallToSeconds(isoDateOfDay(day), '09:30');
      opening.set(day, seconds);
    }
    return seconds;
  };
}

/**
 * The rows' indices (those given, or all) in the service's order ({@link compareRecords}), compared over
 * the columns.
 */
function serviceOrder(rows: SnapshotColumns, indices: Int32Array | undefined): Int32Array {
  const { expirationTime, isCall, strike } = rows;
  let order: Int32Array;
  if (indices === undefined) {
    order = new Int32Array(rows.length);
    for (let i = 0; i < order.length; i++) order[i] = i;
  } else order = Int32Array.from(indices);
  const compare = (a: number, b: number) => {
    const by = expirationTime[a]! - expirationTime[b]! || isCall[b]! - isCall[a]! || strike[a]! - strike[b]!;
    if (by !== 0) return by;
    const symbolA = rows.symbolAt(a);
    const symbolB = rows.symbolAt(b);
    return symbolA < symbolB ? -1 : symbolA > symbolB ? 1 : 0;
  };
  // Rows in symbol order are in this order already when one root's (its dates, then calls, then strikes).
  let sorted = true;
  for (let k = 1; k < order.length && sorted; k++) sorted = compare(order[k - 1]!, order[k]!) < 0;
  return sorted ? order : order.sort(compare);
}

/** A one-argument function remembered per argument (dates repeat across a chain's rows). */
function memoized<T>(compute: (key: string) => T): (key: string) => T {
  const seen = new Map<string, T>();
  return (key) => {
    let value = seen.get(key);
    if (value === undefined) {
      value = compute(key);
      seen.set(key, value);
    }
    return value;
  };
}

/** The service's order: expiration instant, calls before puts, strike (then symbol, for equal keys). */
export function compareRecords(a: OptionRecord, b: OptionRecord): number {
  return (
    a.expiration - b.expiration ||
    (a.side === b.side ? 0 : a.side === 'call' ? -1 : 1) ||
    a.strike - b.strike ||
    (a.optionSymbol < b.optionSymbol ? -1 : a.optionSymbol > b.optionSymbol ? 1 : 0)
  );
}
