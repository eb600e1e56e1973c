import { InvalidInputError } from '../errors.js';
import {
  dateOfDayNumber,
  dayNumber,
  daysFromCivil,
  etDayNumberOf,
  etWallDaySecondsToSeconds,
  lastWeekdayOfMonth,
  nthWeekdayOfMonth,
  toEtDate,
  weekdayOf,
} from './zone.js';

/** First and last year the calendar answers for. */
export const CALENDAR_FIRST_YEAR = 1990;
export const CALENDAR_LAST_YEAR = 2035;

const OPEN_SECONDS = 9 * 3600 + 30 * 60;
const CLOSE_SECONDS = 16 * 3600;
const EARLY_CLOSE_SECONDS = 13 * 3600;
const EARLY_CLOSE_BEFORE_1993_SECONDS = 14 * 3600;
const INDEX_OPTION_EXTRA_SECONDS = 15 * 60;

const WEEKEND = 0;
const CLOSED = 1;
const SESSION = 2;
const EARLY_CLOSE = 3;

// The table spans one year either side of the public range so that next/previous from its edges resolve.
const TABLE_FIRST = daysFromCivil(CALENDAR_FIRST_YEAR - 1, 1, 1);
const TABLE_END = daysFromCivil(CALENDAR_LAST_YEAR + 2, 1, 1);
const RANGE_FIRST = daysFromCivil(CALENDAR_FIRST_YEAR, 1, 1);
const RANGE_END = daysFromCivil(CALENDAR_LAST_YEAR + 1, 1, 1);

const status = new Uint8Array(TABLE_END - TABLE_FIRST);
const openSeconds = new Float64Array(TABLE_END - TABLE_FIRST);
const closeSeconds = new Float64Array(TABLE_END - TABLE_FIRST);
const closureNames = new Map<number, string>();

/** Ad-hoc full-day closures of the exchange (not derivable from rules). */
const AD_HOC_CLOSURES: ReadonlyArray<readonly [string, string]> = [
  ['1994-04-27', 'National Day of Mourning (Richard Nixon)'],
  ['2001-09-11', 'September 11 attacks closure'],
  ['2001-09-12', 'September 11 attacks closure'],
  ['2001-09-13', 'September 11 attacks closure'],
  ['2001-09-14', 'September 11 attacks closure'],
  ['2004-06-11', 'National Day of Mourning (Ronald Reagan)'],
  ['2007-01-02', 'National Day of Mourning (Gerald Ford)'],
  ['2012-10-29', 'Hurricane Sandy closure'],
  ['2012-10-30', 'Hurricane Sandy closure'],
  ['2018-12-05', 'National Day of Mourning (George H.W. Bush)'],
  ['2025-01-09', 'National Day of Mourning (Jimmy Carter)'],
];

/** Ad-hoc 13:00 closes not covered by the rules below. */
const AD_HOC_EARLY_CLOSES: readonly string[] = ['1997-12-26', '1999-12-31', '2003-12-26'];

/** Easter Sunday (anonymous Gregorian algorithm) as a day number. */
export function easterSunday(year: number): number {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return daysFromCivil(year, month, day);
}

/** A fixed-date holiday moved to Friday when on Saturday and to Monday when on Sunday. */
function observed(day: number): number {
  const weekday = weekdayOf(day);
  return weekday === 6 ? day - 1 : weekday === 0 ? day + 1 : day;
}

function holidaysOf(year: number): Array<[number, string]> {
  const list: Array<[number, string]> = [];
  // NYSE rule 7.2: no Friday observance when New Year's Day falls on a Saturday.
  const newYear = daysFromCivil(year, 1, 1);
  if (weekdayOf(newYear) !== 6) list.push([observed(newYear), "New Year's Day"]);
  if (year >= 1998) list.push([nthWeekdayOfMonth(year, 1, 1, 3), 'Dr. Martin Luther King Jr. Day']);
  list.push([nthWeekdayOfMonth(year, 2, 1, 3), "President's Day"]);
  list.push([easterSunday(year) - 2, 'Good Friday']);
  list.push([lastWeekdayOfMonth(year, 5, 1), 'Memorial Day']);
  if (year >= 2022) list.push([observed(daysFromCivil(year, 6, 19)), 'Juneteenth National Independence Day']);
  list.push([observed(daysFromCivil(year, 7, 4)), 'July 4th']);
  list.push([nthWeekdayOfMonth(year, 9, 1, 1), 'Labor Day']);
  list.push([nthWeekdayOfMonth(year, 11, 4, 4), 'Thanksgiving']);
  list.push([observed(daysFromCivil(year, 12, 25)), 'Christmas']);
  return list;
}

/** The rule-based early closes of a year with their close (seconds after midnight ET). */
function earlyClosesOf(year: number): Array<[number, number]> {
  const list: Array<[number, number]> = [];
  const close = year >= 1993 ? EARLY_CLOSE_SECONDS : EARLY_CLOSE_BEFORE_1993_SECONDS;
  if (year >= 1992) list.push([nthWeekdayOfMonth(year, 11, 4, 4) + 1, close]);
  const christmasEve = daysFromCivil(year, 12, 24);
  const eveWeekday = weekdayOf(christmasEve);
  if (eveWeekday >= 1 && eveWeekday <= 4) list.push([christmasEve, close]);
  const july3 = daysFromCivil(year, 7, 3);
  const july3Weekday = weekdayOf(july3);
  // Wednesday 3 July became an early close in 2013; before that a Thursday Fourth shortened Friday the 5th.
  if (
    year >= 1995 &&
    (july3Weekday === 1 || july3Weekday === 2 || july3Weekday === 4 || (july3Weekday === 3 && year >= 2013))
  ) {
    list.push([july3, EARLY_CLOSE_SECONDS]);
  }
  if (year >= 1996 && year < 2013 && july3Weekday === 3) list.push([july3 + 2, EARLY_CLOSE_SECONDS]);
  return list;
}

function buildTable(): void {
  for (let day = TABLE_FIRST; day < TABLE_END; day++) {
    const weekday = weekdayOf(day);
    status[day - TABLE_FIRST] = weekday === 0 || weekday === 6 ? WEEKEND : SESSION;
  }
  const earlyCloses = new Map<number, number>();
  for (let year = CALENDAR_FIRST_YEAR - 1; year <= CALENDAR_LAST_YEAR + 1; year++) {
    for (const [day, close] of earlyClosesOf(year)) {
      if (day >= TABLE_FIRST && day < TABLE_END && status[day - TABLE_FIRST] === SESSION) {
        status[day - TABLE_FIRST] = EARLY_CLOSE;
        earlyCloses.set(day, close);
      }
    }
  }
  for (const date of AD_HOC_EARLY_CLOSES) {
    status[dayNumber(date) - TABLE_FIRST] = EARLY_CLOSE;
    earlyCloses.set(dayNumber(date), EARLY_CLOSE_SECONDS);
  }
  for (let year = CALENDAR_FIRST_YEAR - 1; year <= CALENDAR_LAST_YEAR + 1; year++) {
    for (const [day, name] of holidaysOf(year)) {
      if (day < TABLE_FIRST || day >= TABLE_END || status[day - TABLE_FIRST] === WEEKEND) continue;
      status[day - TABLE_FIRST] = CLOSED;
      closureNames.set(day, name);
    }
  }
  for (const [date, name] of AD_HOC_CLOSURES) {
    const day = dayNumber(date);
    status[day - TABLE_FIRST] = CLOSED;
    closureNames.set(day, name);
  }
  for (const [index, kind] of status.entries()) {
    if (kind < SESSION) continue;
    const day = TABLE_FIRST + index;
    openSeconds[index] = etWallDaySecondsToSeconds(day, OPEN_SECONDS);
    closeSeconds[index] = etWallDaySecondsToSeconds(day, earlyCloses.get(day) ?? CLOSE_SECONDS);
  }
}

buildTable();

/**
 * The entry of a table at `index`. Callers index from range-checked dates, and the table's margin year
 * holds sessions on both sides for the walks to stop at, so a miss is a caller's bug, not a closed day.
 */
function entry(table: Uint8Array | Float64Array, index: number): number {
  const value = table[index];
  if (value === undefined)
    throw new RangeError(`${dateOfDayNumber(TABLE_FIRST + index)} is outside the calendar table`);
  return value;
}

/** The table index of a date inside the public range; RangeError otherwise. */
function indexOf(date: string): number {
  const day = dayNumber(date);
  if (day < RANGE_FIRST || day >= RANGE_END) {
    throw new InvalidInputError(
      `Date ${date} is outside the calendar (${CALENDAR_FIRST_YEAR}..${CALENDAR_LAST_YEAR})`,
    );
  }
  return day - TABLE_FIRST;
}

function sessionIndexOf(date: string): number {
  const index = indexOf(date);
  if (entry(status, index) < SESSION) throw new InvalidInputError(`${date} is not a trading session`);
  return index;
}

/** Whether the NYSE holds a regular session on `date` (`YYYY-MM-DD`). */
export function isSession(date: string): boolean {
  return entry(status, indexOf(date)) >= SESSION;
}

/** Whether `date` is a session that closes early (13:00 ET; 14:00 before 1993). */
export function isEarlyClose(date: string): boolean {
  return entry(status, indexOf(date)) === EARLY_CLOSE;
}

/** 09:30 ET of a session as epoch seconds; RangeError when `date` is not a session. */
export function sessionOpenSeconds(date: string): number {
  return entry(openSeconds, sessionIndexOf(date));
}

/** The close of a session (16:00 ET, 13:00 on early-close days, 14:00 before 1993) as epoch seconds; RangeError when not a session. */
export function sessionCloseSeconds(date: string): number {
  return entry(closeSeconds, sessionIndexOf(date));
}

/** The close of index options (SPX, NDX, RUT, VIX, …) on a session: 16:15 ET, 13:15 on early-close days. */
export function indexOptionCloseSeconds(date: string): number {
  return entry(closeSeconds, sessionIndexOf(date)) + INDEX_OPTION_EXTRA_SECONDS;
}

/** The first session strictly after `date` (which need not be a session). */
export function nextSession(date: string): string {
  let index = indexOf(date) + 1;
  while (entry(status, index) < SESSION) index++;
  return dateOfDayNumber(TABLE_FIRST + index);
}

/**
 * The session an instant belongs to for a backtest: its Eastern calendar date when that is a session,
 * else the last session before it (a weekend or holiday instant belongs to the Friday before).
 */
export function latestSessionAt(tsSeconds: number): string {
  const date = toEtDate(tsSeconds);
  return isSession(date) ? date : previousSession(date);
}

/** The last session strictly before `date` (which need not be a session). */
export function previousSession(date: string): string {
  let index = indexOf(date) - 1;
  while (entry(status, index) < SESSION) index--;
  return dateOfDayNumber(TABLE_FIRST + index);
}

/** The sessions from `from` to `to`, both inclusive, ascending (empty when `from` is after `to`). */
export function sessionsBetween(from: string, to: string): string[] {
  const first = indexOf(from);
  const last = indexOf(to);
  const sessions: string[] = [];
  for (let index = first; index <= last; index++) {
    if (entry(status, index) >= SESSION) sessions.push(dateOfDayNumber(TABLE_FIRST + index));
  }
  return sessions;
}

/** The session whose ET calendar date holds the instant, or undefined when that date is not a session. */
export function sessionOf(tsSeconds: number): string | undefined {
  const day = etDayNumberOf(tsSeconds);
  if (day < RANGE_FIRST || day >= RANGE_END) {
    throw new InvalidInputError(
      `Instant ${tsSeconds} is outside the calendar (${CALENDAR_FIRST_YEAR}..${CALENDAR_LAST_YEAR})`,
    );
  }
  return entry(status, day - TABLE_FIRST) >= SESSION ? dateOfDayNumber(day) : undefined;
}

/** Why the exchange is closed on `date`: the holiday or closure name, `'weekend'`, or undefined for a session. */
export function closureReason(date: string): string | undefined {
  const index = indexOf(date);
  const kind = entry(status, index);
  if (kind === WEEKEND) return 'weekend';
  if (kind === CLOSED) return closureNames.get(TABLE_FIRST + index);
  return undefined;
}

function checkYear(year: number): void {
  if (!Number.isInteger(year) || year < CALENDAR_FIRST_YEAR || year > CALENDAR_LAST_YEAR) {
    throw new InvalidInputError(
      `Year ${year} is outside the calendar (${CALENDAR_FIRST_YEAR}..${CALENDAR_LAST_YEAR})`,
    );
  }
}

function checkMonth(month: number): void {
  if (!Number.isInteger(month) || month < 1 || month > 12)
    throw new InvalidInputError(`Invalid month ${month}`);
}

/** The session on or before a day number (inside the table), as a day number. */
export function sessionOnOrBefore(day: number): number {
  let index = day - TABLE_FIRST;
  while (entry(status, index) < SESSION) index--;
  return TABLE_FIRST + index;
}

/** Whether a day number (inside the table) is a session; no range check, for callers that already made one. */
export function isSessionDay(day: number): boolean {
  return entry(status, day - TABLE_FIRST) >= SESSION;
}

/** The last session of a calendar month. */
export function lastSessionOfMonth(year: number, month: number): string {
  checkYear(year);
  checkMonth(month);
  const nextMonthFirst = month === 12 ? daysFromCivil(year + 1, 1, 1) : daysFromCivil(year, month + 1, 1);
  return dateOfDayNumber(sessionOnOrBefore(nextMonthFirst - 1));
}

/** The standard monthly expiration: the third Friday, moved to the prior session when the exchange is closed. */
export function monthlyExpiration(year: number, month: number): string {
  checkYear(year);
  checkMonth(month);
  return dateOfDayNumber(sessionOnOrBefore(nthWeekdayOfMonth(year, month, 5, 3)));
}
