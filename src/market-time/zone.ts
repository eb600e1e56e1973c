import { DateTime } from 'luxon';
import { InvalidInputError } from '../errors.js';

/** The market zone; every ET conversion in the project goes through this module. */
export const MARKET_ZONE = 'America/New_York';

const SECONDS_PER_DAY = 86_400;
const EST_OFFSET = 5 * 3600;
const EDT_OFFSET = 4 * 3600;

/** Days since 1970-01-01 of a proleptic Gregorian civil date (month 1..12). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The civil year, month (1..12) and day of a day number. */
export function civilFromDays(dayNumber: number): [number, number, number] {
  const z = dayNumber + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [month <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, month, day];
}

/** Day of week of a day number, 0 = Sunday … 6 = Saturday. */
export function weekdayOf(dayNumber: number): number {
  return (((dayNumber + 4) % 7) + 7) % 7;
}

function daysInMonth(year: number, month: number): number {
  return (
    daysFromCivil(month === 12 ? year + 1 : year, month === 12 ? 1 : month + 1, 1) -
    daysFromCivil(year, month, 1)
  );
}

/** The day number of the n-th (1-based) `weekday` of a month. */
export function nthWeekdayOfMonth(year: number, month: number, weekday: number, n: number): number {
  const first = daysFromCivil(year, month, 1);
  return first + ((weekday - weekdayOf(first) + 7) % 7) + (n - 1) * 7;
}

/** The day number of the last `weekday` of a month. */
export function lastWeekdayOfMonth(year: number, month: number, weekday: number): number {
  const last = daysFromCivil(year, month, daysInMonth(year, month));
  return last - ((weekdayOf(last) - weekday + 7) % 7);
}

function digit(text: string, index: number): number {
  const code = text.charCodeAt(index) - 48;
  return code >= 0 && code <= 9 ? code : Number.NaN;
}

// Day numbers of the first of every month 1900..2199, so parsing a date is two table reads.
const MONTH_TABLE_FIRST_YEAR = 1900;
const MONTH_TABLE_END_YEAR = 2200;
const monthStarts = (() => {
  const table = new Int32Array((MONTH_TABLE_END_YEAR - MONTH_TABLE_FIRST_YEAR) * 12 + 1);
  for (let i = 0; i < table.length; i++) {
    table[i] = daysFromCivil(MONTH_TABLE_FIRST_YEAR + Math.floor(i / 12), (i % 12) + 1, 1);
  }
  return table;
})();

/** The day number of a `YYYY-MM-DD` string, or NaN when the text is not a valid date. */
export function tryDayNumber(date: string): number {
  if (date.length !== 10 || date.charCodeAt(4) !== 45 || date.charCodeAt(7) !== 45) return Number.NaN;
  const year = digit(date, 0) * 1000 + digit(date, 1) * 100 + digit(date, 2) * 10 + digit(date, 3);
  const month = digit(date, 5) * 10 + digit(date, 6);
  const day = digit(date, 8) * 10 + digit(date, 9);
  if (!(month >= 1 && month <= 12 && day >= 1)) return Number.NaN;
  if (year >= MONTH_TABLE_FIRST_YEAR && year < MONTH_TABLE_END_YEAR) {
    const index = (year - MONTH_TABLE_FIRST_YEAR) * 12 + month - 1;
    const first = monthStarts[index];
    const next = monthStarts[index + 1];
    if (first !== undefined && next !== undefined) return day <= next - first ? first + day - 1 : Number.NaN;
  }
  if (!(day <= daysInMonthFast(year, month))) return Number.NaN;
  return daysFromCivil(year, month, day);
}

function daysInMonthFast(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** The day number of a `YYYY-MM-DD` string; RangeError when it is not a valid date. */
export function dayNumber(date: string): number {
  const n = tryDayNumber(date);
  if (Number.isNaN(n)) throw new InvalidInputError(`Invalid date "${date}": expected YYYY-MM-DD`);
  return n;
}

// 1900-01-01 .. 2199-12-31: the strings are built once per day and shared, so hot paths do not allocate.
const STRING_BASE = daysFromCivil(1900, 1, 1);
const STRING_END = daysFromCivil(2200, 1, 1);
const dateStrings: (string | undefined)[] = new Array(STRING_END - STRING_BASE);

function pad2(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

function buildDateString(dayNumber: number): string {
  const [y, m, d] = civilFromDays(dayNumber);
  if (y < 0 || y > 9999) throw new InvalidInputError(`Date out of range: day ${dayNumber}`);
  return `${String(y).padStart(4, '0')}-${pad2(m)}-${pad2(d)}`;
}

/** The `YYYY-MM-DD` string of a day number. */
export function dateOfDayNumber(dayNumber: number): string {
  if (dayNumber >= STRING_BASE && dayNumber < STRING_END) {
    const index = dayNumber - STRING_BASE;
    const cached = dateStrings[index];
    if (cached !== undefined) return cached;
    const built = buildDateString(dayNumber);
    dateStrings[index] = built;
    return built;
  }
  return buildDateString(dayNumber);
}

/**
 * US daylight-saving start and end dates (local day numbers) of a year; transitions happen at 02:00 local.
 * Years before 1967 (no uniform federal rule) are left to luxon's time-zone database.
 */
function dstDays(year: number): [number, number] {
  if (year >= 2007) return [nthWeekdayOfMonth(year, 3, 0, 2), nthWeekdayOfMonth(year, 11, 0, 1)];
  if (year >= 1987) return [nthWeekdayOfMonth(year, 4, 0, 1), lastWeekdayOfMonth(year, 10, 0)];
  // 1974 and 1975 were the energy-crisis years of early daylight time.
  const start =
    year === 1974
      ? daysFromCivil(1974, 1, 6)
      : year === 1975
        ? daysFromCivil(1975, 2, 23)
        : lastWeekdayOfMonth(year, 4, 0);
  return [start, lastWeekdayOfMonth(year, 10, 0)];
}

const STANDARD_DAY = 0;
const DAYLIGHT_DAY = 1;
const START_DAY = 2;
const END_DAY = 3;
const RULE_BASE = daysFromCivil(1967, 1, 1);
const RULE_END = daysFromCivil(2200, 1, 1);

/** One byte per local day: standard, daylight, or the day of a transition (so lookups never touch luxon). */
const dayKinds = (() => {
  const kinds = new Uint8Array(RULE_END - RULE_BASE);
  for (let year = 1967; year < 2200; year++) {
    const [start, end] = dstDays(year);
    kinds.fill(DAYLIGHT_DAY, start - RULE_BASE, end - RULE_BASE);
    kinds[start - RULE_BASE] = START_DAY;
    kinds[end - RULE_BASE] = END_DAY;
  }
  return kinds;
})();

/** UTC minus ET wall time at an instant, in seconds (18000 in EST, 14400 in EDT). */
export function etOffsetSeconds(tsSeconds: number): number {
  // The EST day holding the instant decides: a transition is always at 02:00 local of its own day.
  const estDay = Math.floor((tsSeconds - EST_OFFSET) / SECONDS_PER_DAY);
  if (estDay < RULE_BASE || estDay >= RULE_END) {
    return -DateTime.fromSeconds(tsSeconds, { zone: MARKET_ZONE }).offset * 60;
  }
  const kind = dayKinds[estDay - RULE_BASE];
  if (kind === STANDARD_DAY) return EST_OFFSET;
  if (kind === DAYLIGHT_DAY) return EDT_OFFSET;
  const secondsIntoDay = tsSeconds - estDay * SECONDS_PER_DAY;
  if (kind === START_DAY) return secondsIntoDay >= 2 * 3600 + EST_OFFSET ? EDT_OFFSET : EST_OFFSET;
  return secondsIntoDay < 2 * 3600 + EDT_OFFSET ? EDT_OFFSET : EST_OFFSET;
}

/**
 * Epoch seconds of an ET wall time given as a day number and seconds since midnight. In the hour skipped
 * by the spring transition the wall time is read with the offset in force before it (02:30 → 03:30 EDT,
 * as luxon and Temporal's "compatible" rule do); in the repeated autumn hour the first occurrence (EDT).
 */
export function etWallDaySecondsToSeconds(dayNumber: number, secondsOfDay: number): number {
  if (dayNumber < RULE_BASE || dayNumber >= RULE_END) {
    const [y, m, d] = civilFromDays(dayNumber);
    const wall = DateTime.fromObject(
      {
        year: y,
        month: m,
        day: d,
        hour: Math.floor(secondsOfDay / 3600),
        minute: Math.floor(secondsOfDay / 60) % 60,
        second: secondsOfDay % 60,
      },
      { zone: MARKET_ZONE },
    );
    return wall.toSeconds();
  }
  const kind = dayKinds[dayNumber - RULE_BASE];
  let offset: number;
  if (kind === STANDARD_DAY) offset = EST_OFFSET;
  else if (kind === DAYLIGHT_DAY) offset = EDT_OFFSET;
  else if (kind === START_DAY) offset = secondsOfDay < 3 * 3600 ? EST_OFFSET : EDT_OFFSET;
  else offset = secondsOfDay < 2 * 3600 ? EDT_OFFSET : EST_OFFSET;
  return dayNumber * SECONDS_PER_DAY + secondsOfDay + offset;
}

/** Seconds since midnight of `HH:MM` or `HH:MM:SS` (00:00 .. 23:59:59); NaN when malformed. */
export function tryTimeOfDaySeconds(time: string): number {
  const length = time.length;
  if ((length !== 5 && length !== 8) || time.charCodeAt(2) !== 58) return Number.NaN;
  const hours = digit(time, 0) * 10 + digit(time, 1);
  const minutes = digit(time, 3) * 10 + digit(time, 4);
  let seconds = 0;
  if (length === 8) {
    if (time.charCodeAt(5) !== 58) return Number.NaN;
    seconds = digit(time, 6) * 10 + digit(time, 7);
  }
  if (!(hours <= 23 && minutes <= 59 && seconds <= 59)) return Number.NaN;
  return hours * 3600 + minutes * 60 + seconds;
}

/** Epoch seconds of an ET wall time: `etWallToSeconds('2024-03-15', '16:00')` → 1710532800. */
export function etWallToSeconds(date: string, time: string): number {
  const seconds = tryTimeOfDaySeconds(time);
  if (Number.isNaN(seconds))
    throw new InvalidInputError(`Invalid time "${time}": expected HH:MM or HH:MM:SS`);
  return etWallDaySecondsToSeconds(dayNumber(date), seconds);
}

/** Epoch seconds of an ET wall time given as seconds since midnight (e.g. minute bars stamped that way). */
export function etSecondsOfDayToSeconds(date: string, secondsOfDay: number): number {
  return etWallDaySecondsToSeconds(dayNumber(date), secondsOfDay);
}

/** Epoch seconds of 00:00 ET of a date (the `t` of a daily candle). */
export function etMidnightSeconds(date: string): number {
  return etWallDaySecondsToSeconds(dayNumber(date), 0);
}

/** The ET day number holding an instant. */
export function etDayNumberOf(tsSeconds: number): number {
  return Math.floor((tsSeconds - etOffsetSeconds(tsSeconds)) / SECONDS_PER_DAY);
}

/** The ET calendar date (`YYYY-MM-DD`) of an instant. */
export function toEtDate(tsSeconds: number): string {
  if (!Number.isFinite(tsSeconds)) throw new InvalidInputError(`Invalid instant ${tsSeconds}`);
  return dateOfDayNumber(etDayNumberOf(tsSeconds));
}
