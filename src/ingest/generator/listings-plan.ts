/**
 * The generator's listings: per underlying its volatility state, its expirations by listing style, and
 * the contracts of each expiration's strike ladder with the sessions they trade, as work-table columns.
 */
import { UsageError } from '../../errors.js';
import { expirationSeconds } from '../../market-time/index.js';
import { formatOccSymbol } from '../../occ/index.js';
import {
  buildLadder,
  dayNumber,
  type LadderInputs,
  type ScheduledExpiration,
  scheduleExpirations,
} from './listings.js';
import {
  DEFAULT_LISTING,
  DEFAULT_PRICING,
  EWMA_DECAY,
  type ListingPlan,
  type PricingParams,
  volatilityNow,
} from './model.js';
import type { GeneratorOptions } from './options.js';
import { createRandom, type Random } from './random.js';
import type { DailyBar } from './series.js';
import { SIZES } from './statements.js';
import type { Timeline, TimelinePlan } from './timeline.js';
import { type ColumnData, type Columns, columns, push, type WorkTable } from './work-tables.js';

/** The listings and contracts, with the work tables they fill, and the splits to record. */
export type ListingsPlan = {
  expirationCount: number;
  /** Distinct option symbols listed. */
  symbolCount: number;
  splits: { symbol: string; exDate: string; ratio: number }[];
  tables: Partial<Record<WorkTable, ColumnData>>;
};

/**
 * The rest of the JS half: each underlying's state (closes, volatility), its expirations and strike
 * ladders, and the contracts (with their open-interest levels) in the work tables' shape.
 */
export function planListings(options: GeneratorOptions, timeline: TimelinePlan): ListingsPlan {
  const { dates, indexOf, fromIndex, toIndex, from, to, timelineStart, pidOf, barsByPid, intradayShare } =
    timeline;
  const sid = (index: number) => index - fromIndex + 1;
  const tables = {
    udays: columns(10),
    underlyings: columns(13),
    expirations: columns(8),
    contracts: contractRows(),
  };
  const rate = options.rate ?? 0.015;
  const splitRows: ListingsPlan['splits'] = [];
  const counters = { eid: 0, cid: 0 };
  const days = Int32Array.from(dates, dayNumber);
  options.underlyings.forEach((spec, uid) => {
    const pricing: PricingParams = { ...DEFAULT_PRICING[spec.style], ...spec.pricing };
    const plan: ListingPlan = { ...DEFAULT_LISTING[spec.style], ...spec.listing };
    const derived = spec.series.kind === 'derived' ? spec.series : undefined;
    const sourceSymbol = derived?.from ?? spec.symbol;
    const pid = pidOf.get(sourceSymbol)!;
    const factor = derived?.factor ?? 1;
    const splitSpecs = options.underlyings.find((u) => u.symbol === sourceSymbol)?.splits ?? [];
    const splits = new Map<number, number>();
    for (const split of splitSpecs) {
      const index = indexOf.get(split.exDate);
      if (index === undefined) {
        if (split.exDate >= timelineStart && split.exDate <= to) {
          throw new UsageError(`split of ${sourceSymbol} on ${split.exDate}: not a session`);
        }
        continue;
      }
      if (index > 0) splits.set(index, split.ratio);
      if (split.exDate >= from && !derived) splitRows.push({ symbol: spec.symbol, ...split });
    }

    const { close, previousClose, variance, previousVol } = underlyingState(
      barsByPid[pid]!,
      factor,
      splits,
      pricing,
    );
    const emit = spec.style !== 'index';
    for (let index = fromIndex - 1; index <= toIndex; index++) {
      push(
        tables.udays,
        uid,
        sid(index),
        pid,
        spec.symbol,
        emit,
        factor,
        close[index],
        previousClose[index],
        index === 0 ? pricing.longRunVol ** 2 : variance[index - 1],
        intradayShare.get(index) ?? 0.9,
      );
    }
    push(
      tables.underlyings,
      uid,
      spec.symbol,
      rate,
      pricing.dividendYield,
      pricing.longRunVol,
      pricing.skew,
      pricing.curvature,
      pricing.tickBelow3Cents,
      pricing.tickAbove3Cents,
      pricing.spreadAbs,
      pricing.spreadRel,
      pricing.volumeBase,
      SIZES.findIndex((size) => size >= 2 * pricing.sizeBase) + 1 || SIZES.length,
    );

    const random = createRandom(options.seed, 'open-interest', spec.symbol);
    const ladderInputs: LadderInputs = {
      style: spec.style,
      plan,
      days,
      previousClose,
      previousVol,
      splits,
      longRunVol: pricing.longRunVol,
    };
    const weeklyRoot = spec.style === 'index' ? (spec.weeklyRoot ?? `${spec.symbol}W`) : spec.symbol;
    for (const expiration of scheduleExpirations(spec.style, spec.symbol, weeklyRoot, plan, from, to)) {
      listContracts(timeline, tables, counters, { uid, expiration, ladderInputs, pricing, random });
    }
  });
  // A symbol is its expiration's stem and a strike: a call and a put per distinct pair.
  const pairs = new Set<number>();
  const { eid, strikeK } = tables.contracts;
  for (let i = 0; i < eid.length; i++) pairs.add(eid[i]! * 1e8 + strikeK[i]!);
  return {
    expirationCount: counters.eid,
    symbolCount: 2 * pairs.size,
    splits: splitRows,
    tables: { ...tables, contracts: Object.values(tables.contracts) },
  };
}

/** The contracts work table column by column, in its order (one push site per column keeps them fast). */
type ContractRows = ReturnType<typeof contractRows>;

function contractRows() {
  return {
    kid: [] as number[],
    cid: [] as number[],
    eid: [] as number[],
    strikeK: [] as number[],
    strike: [] as number[],
    lnK: [] as number[],
    firstSid: [] as number[],
    lastSid: [] as number[],
    listDay: [] as number[],
    levelC: [] as number[],
    levelP: [] as number[],
    oiMult: [] as number[],
    openEnd: [] as boolean[],
  };
}

/**
 * Lists one expiration's contracts (a call and a put per strike, one row per split segment) and the
 * expiration itself into the work tables, numbering them from `counters`.
 */
function listContracts(
  timeline: Timeline,
  tables: { expirations: Columns; contracts: ContractRows },
  counters: { eid: number; cid: number },
  item: {
    uid: number;
    expiration: ScheduledExpiration;
    ladderInputs: LadderInputs;
    pricing: PricingParams;
    random: Random;
  },
): void {
  const { dates, indexOf, fromIndex, toIndex, to } = timeline;
  const { uid, expiration, ladderInputs, pricing, random } = item;
  const { previousClose, splits } = ladderInputs;
  const sid = (index: number) => index - fromIndex + 1;
  const startIndex = Math.max(1, firstIndexOnOrAfter(dates, expiration.listDate));
  const trailing = expiration.lastQuoteDate > to;
  const endIndex = trailing ? toIndex : indexOf.get(expiration.lastQuoteDate)!;
  const ladder = buildLadder(ladderInputs, expiration.expiration, startIndex, endIndex);
  const contracts = tables.contracts;
  const rowsBefore = contracts.kid.length;
  let firstSidOfExpiration = Number.POSITIVE_INFINITY;
  // Root and date are checked once; the strikes come from the ladder as whole thousandths.
  const stem = formatOccSymbol({
    root: expiration.root,
    expirationDate: expiration.expiration,
    side: 'call',
    strike: 1,
  }).slice(0, -9);
  for (const strike of ladder) {
    const firstQuote = Math.max(strike.listedIndex, fromIndex);
    if (firstQuote > endIndex) continue;
    const listedOn = strike.listedIndex === startIndex ? expiration.listDate : dates[strike.listedIndex]!;
    // Open interest gathers at round strikes and at strikes near the money when they were listed.
    const listingSpot = previousClose[strike.listedIndex]!;
    const listingYears = Math.max(dayNumber(expiration.expiration) - dayNumber(listedOn), 30) / 365;
    const moneyness =
      Math.log(strike.segments[0]!.strikeThousandths / 1000 / listingSpot) /
      (pricing.longRunVol * Math.sqrt(listingYears));
    const weight =
      (strike.segments[0]!.strikeThousandths % 10_000 === 0 ? 1.5 : 1) *
      Math.exp(-0.5 * moneyness * moneyness);
    const callLevel = weight * (0.4 + 1.2 * random.next());
    const putLevel = weight * (0.4 + 1.2 * random.next());
    for (let j = 0; j < strike.segments.length; j++) {
      const segment = strike.segments[j]!;
      const next = strike.segments[j + 1];
      const segmentStart = Math.max(segment.fromIndex, firstQuote);
      const segmentEnd = next === undefined ? endIndex : next.fromIndex - 1;
      if (segmentStart > segmentEnd) continue;
      let multiplier = 1;
      for (let k = j + 1; k < strike.segments.length; k++) {
        multiplier *= splits.get(strike.segments[k]!.fromIndex) ?? 1;
      }
      firstSidOfExpiration = Math.min(firstSidOfExpiration, sid(segmentStart));
      const strikeDollars = segment.strikeThousandths / 1000;
      contracts.kid.push(contracts.kid.length);
      contracts.cid.push(counters.cid);
      contracts.eid.push(counters.eid);
      contracts.strikeK.push(segment.strikeThousandths);
      contracts.strike.push(strikeDollars);
      contracts.lnK.push(Math.log(strikeDollars));
      contracts.firstSid.push(sid(segmentStart));
      contracts.lastSid.push(sid(segmentEnd));
      contracts.listDay.push(dayNumber(listedOn));
      contracts.levelC.push(callLevel);
      contracts.levelP.push(putLevel);
      contracts.oiMult.push(multiplier);
      contracts.openEnd.push(trailing && next === undefined);
    }
    counters.cid++;
  }
  if (contracts.kid.length === rowsBefore) return;
  push(
    tables.expirations,
    counters.eid,
    uid,
    stem,
    dayNumber(expiration.expiration),
    expirationSeconds(expiration.expiration, expiration.settlement),
    expiration.monthly ? 1.5 : expiration.quarterly ? 0.8 : 1,
    firstSidOfExpiration,
    sid(endIndex),
  );
  counters.eid++;
}

/**
 * An underlying's closes on the timeline (× factor), the previous close in each session's units (divided
 * by the split ratio on an ex-date), the EWMA variance of split-adjusted returns through each session,
 * and the at-the-money volatility at the previous close.
 */
function underlyingState(
  bars: readonly DailyBar[],
  factor: number,
  splits: ReadonlyMap<number, number>,
  pricing: PricingParams,
): { close: Float64Array; previousClose: Float64Array; variance: Float64Array; previousVol: Float64Array } {
  const n = bars.length;
  const close = new Float64Array(n);
  const previousClose = new Float64Array(n);
  const variance = new Float64Array(n);
  const previousVol = new Float64Array(n);
  for (let index = 0; index < n; index++) {
    close[index] = bars[index]!.close * factor;
    previousClose[index] =
      index === 0 ? bars[0]!.open * factor : close[index - 1]! / (splits.get(index) ?? 1);
    const priorVariance = index === 0 ? pricing.longRunVol ** 2 : variance[index - 1]!;
    const r = Math.log(close[index]! / previousClose[index]!);
    variance[index] = EWMA_DECAY * priorVariance + (1 - EWMA_DECAY) * 252 * r * r;
    previousVol[index] = volatilityNow(priorVariance, pricing.longRunVol);
  }
  return { close, previousClose, variance, previousVol };
}

function firstIndexOnOrAfter(dates: readonly string[], date: string): number {
  let low = 0;
  let high = dates.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (dates[mid]! < date) low = mid + 1;
    else high = mid;
  }
  return low;
}
