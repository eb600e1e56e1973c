/**
 * Which contracts exist when: the expiration schedule of each listing style, and the strike ladder of
 * each expiration, which grows as the underlying moves (strikes are never delisted). Works on session
 * indexes of one timeline; the SQL side turns the result into rows.
 */
import {
  classifyExpiration,
  isSession,
  lastSessionOfMonth,
  monthlyExpiration,
  nextSession,
  previousSession,
  quarterlyExpirations,
  type Settlement,
  settlementOf,
} from '../../market-time/index.js';
import { type ListingPlan, type ListingStyle, MIDWEEK_START, strikeSteps, termVol } from './model.js';

/** One expiration of one root, with the sessions on which it is quoted. */
export type ScheduledExpiration = {
  root: string;
  expiration: string;
  settlement: Settlement;
  monthly: boolean;
  quarterly: boolean;
  /** The first session it is listed. */
  listDate: string;
  /** The last session it is quoted: the expiration date, or the session before for AM settlement. */
  lastQuoteDate: string;
};

const DAY_MS = 86_400_000;

const dayNumbers = new Map<string, number>();

/** Days since 1970-01-01 of a `YYYY-MM-DD` date. */
export function dayNumber(date: string): number {
  let day = dayNumbers.get(date);
  if (day === undefined) {
    day = Date.parse(`${date}T00:00:00Z`) / DAY_MS;
    dayNumbers.set(date, day);
  }
  return day;
}

const dates = new Map<number, string>();

function dateOf(day: number): string {
  let date = dates.get(day);
  if (date === undefined) {
    date = new Date(day * DAY_MS).toISOString().slice(0, 10);
    dates.set(day, date);
  }
  return date;
}

function weekday(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/** The first session on or after `date`. */
function sessionOnOrAfter(date: string): string {
  return isSession(date) ? date : nextSession(date);
}

/**
 * The expirations of an underlying quoted on at least one session of [from, to]: standard monthlies
 * (AM-settled under the index root for an index), LEAPS, end-of-quarter, index end-of-month, Friday
 * weeklies and, from their launch dates, Monday/Wednesday weeklies and Tuesday/Thursday dailies.
 */
export function scheduleExpirations(
  style: ListingStyle,
  root: string,
  weeklyRoot: string,
  plan: ListingPlan,
  from: string,
  to: string,
): ScheduledExpiration[] {
  const first = dayNumber(from);
  const horizonDays = Math.ceil(
    Math.max(
      plan.leapsYears * 365.25,
      plan.quarterlyMonths * 30.44,
      plan.monthlyMonths * 30.44,
      plan.weeklyDays,
    ),
  );
  const last = dayNumber(to) + horizonDays + 7;
  const seen = new Set<string>();
  const result: ScheduledExpiration[] = [];
  const add = (optionRoot: string, expiration: string, aheadDays: number) => {
    const key = `${optionRoot} ${expiration}`;
    if (aheadDays <= 0 || seen.has(key)) return;
    seen.add(key);
    const settlement = settlementOf(optionRoot, expiration);
    const lastQuoteDate = settlement === 'am-index' ? previousSession(expiration) : expiration;
    const listDate = sessionOnOrAfter(dateOf(dayNumber(expiration) - Math.round(aheadDays)));
    if (lastQuoteDate < from || listDate > to || listDate > lastQuoteDate) return;
    const kind = classifyExpiration(expiration);
    result.push({
      root: optionRoot,
      expiration,
      settlement,
      monthly: kind.monthly,
      quarterly: kind.quarterly,
      listDate,
      lastQuoteDate,
    });
  };
  const months = (n: number) => n * 30.44;
  const firstYear = Number(from.slice(0, 4));
  const lastYear = Number(dateOf(last).slice(0, 4));
  const quarterRoot = style === 'index' ? weeklyRoot : root;
  for (let year = firstYear; year <= lastYear; year++) {
    for (let month = 1; month <= 12; month++) {
      const monthly = monthlyExpiration(year, month);
      const leapsMonth = style === 'index' ? 12 : 1;
      const quarterMonth = month % 3 === 0;
      let ahead = months(plan.monthlyMonths);
      if (quarterMonth) ahead = Math.max(ahead, months(plan.quarterlyMonths));
      if (month === leapsMonth) ahead = Math.max(ahead, plan.leapsYears * 365.25);
      add(root, monthly, ahead);
    }
    if (style !== 'stock') {
      for (const quarterly of quarterlyExpirations(year))
        add(quarterRoot, quarterly, months(plan.quarterlyMonths));
    }
    if (style === 'index') {
      for (let month = 1; month <= 12; month++)
        add(weeklyRoot, lastSessionOfMonth(year, month), months(plan.monthlyMonths));
    }
  }
  const starts = MIDWEEK_START[style];
  for (let day = first; day <= last; day++) {
    const date = dateOf(day);
    const wd = weekday(day);
    if (wd === 5) {
      const expiration = isSession(date) ? date : previousSession(date);
      const [year, month] = [Number(expiration.slice(0, 4)), Number(expiration.slice(5, 7))];
      if (expiration !== monthlyExpiration(year, month)) add(weeklyRoot, expiration, plan.weeklyDays);
    } else if (isSession(date)) {
      const start =
        wd === 1
          ? starts.monday
          : wd === 3
            ? starts.wednesday
            : wd === 2 || wd === 4
              ? starts.tuesdayThursday
              : undefined;
      if (start !== undefined && date >= start) add(weeklyRoot, date, plan.midweekDays);
    }
  }
  return result.sort((a, b) =>
    a.expiration === b.expiration ? (a.root < b.root ? -1 : 1) : a.expiration < b.expiration ? -1 : 1,
  );
}

/** Per-session state of an underlying that the strike ladder follows. */
export type LadderInputs = {
  style: ListingStyle;
  plan: ListingPlan;
  /** Day numbers (days since 1970-01-01) of the timeline's sessions. */
  days: Int32Array;
  /** The previous session's close, in the units of this session (split-adjusted on an ex-date). */
  previousClose: Float64Array;
  /** At-the-money volatility at the previous session's close. */
  previousVol: Float64Array;
  /** Split ratio by timeline index of the ex-date. */
  splits: ReadonlyMap<number, number>;
  /** The long-run volatility the term structure reverts to. */
  longRunVol: number;
};

/** Strikes are listed at most this far above / below the money (log-moneyness). */
const MAX_UP = Math.log(2);
const MAX_DOWN = Math.log(4);

/** One strike of an expiration: when it was listed, and its strike (thousandths) from each index on. */
export type LadderStrike = {
  listedIndex: number;
  segments: { fromIndex: number; strikeThousandths: number }[];
};

/**
 * The strikes of one expiration over timeline indexes [startIndex, endIndex]: each session lists the fine
 * and coarse grid points inside bands of nearSd/farSd·σ√T around the previous close (wider on the put
 * side); strikes listed earlier stay. On a split's ex-date existing strikes are divided by the ratio.
 * Returned sorted by their latest strike.
 */
export function buildLadder(
  inputs: LadderInputs,
  expiration: string,
  startIndex: number,
  endIndex: number,
): LadderStrike[] {
  const { style, plan, days, previousClose, previousVol, splits, longRunVol } = inputs;
  let ladder = new Map<number, LadderStrike>();
  // The thousandths already covered per grid step: a band that reaches past them lists the strikes in
  // between too, so each grid stays contiguous and each session only visits new strikes.
  let covered = new Map<number, { low: number; high: number }>();
  const expirationDay = dayNumber(expiration);
  const add = (index: number, step: number, from: number, to: number) => {
    for (let k = from; k <= to; k++) {
      const strike = k * step;
      if (!ladder.has(strike)) {
        ladder.set(strike, {
          listedIndex: index,
          segments: [{ fromIndex: index, strikeThousandths: strike }],
        });
      }
    }
  };
  const list = (index: number, step: number, spot: number, up: number, down: number) => {
    const low = Math.max(Math.ceil((spot * Math.exp(-down) * 1000) / step), 1);
    const high = Math.floor((spot * Math.exp(up) * 1000) / step);
    if (low > high) return;
    const range = covered.get(step);
    if (range === undefined) {
      add(index, step, low, high);
      covered.set(step, { low, high });
    } else {
      if (low < range.low) add(index, step, low, range.low - 1);
      if (high > range.high) add(index, step, range.high + 1, high);
      range.low = Math.min(range.low, low);
      range.high = Math.max(range.high, high);
    }
  };
  for (let index = startIndex; index <= endIndex; index++) {
    const ratio = splits.get(index);
    if (ratio !== undefined && index > startIndex) {
      const adjusted = new Map<number, LadderStrike>();
      for (const [strike, entry] of ladder) {
        const next = Math.round(strike / ratio);
        if (next < 1 || adjusted.has(next)) continue;
        entry.segments.push({ fromIndex: index, strikeThousandths: next });
        adjusted.set(next, entry);
      }
      ladder = adjusted;
      covered = new Map();
    }
    const spot = previousClose[index]!;
    const years = Math.max(expirationDay - days[index]!, 1) / 365;
    const width = termVol(previousVol[index]!, longRunVol, years) * Math.sqrt(years);
    const steps = strikeSteps(style, spot);
    const near = years > 0.5 ? steps.far : steps.near;
    const minimum = (2.5 * near) / (spot * 1000);
    const nearUp = Math.min(Math.max(plan.nearSd * width, minimum), MAX_UP);
    const nearDown = Math.min(Math.max(1.25 * plan.nearSd * width, minimum), MAX_DOWN);
    list(index, near, spot, nearUp, nearDown);
    list(
      index,
      steps.far,
      spot,
      Math.min(Math.max(plan.farSd * width, nearUp), MAX_UP),
      Math.min(Math.max(1.25 * plan.farSd * width, nearDown), MAX_DOWN),
    );
  }
  return [...ladder.entries()].sort((a, b) => a[0] - b[0]).map(([, entry]) => entry);
}
