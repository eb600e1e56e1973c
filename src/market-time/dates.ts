import { DateTime } from 'luxon';
import { InvalidInputError } from '../errors.js';
import { previousSession } from './calendar.js';
import type { Clock } from './clock.js';
import { SPREADSHEET_UNIX_EPOCH } from './format.js';
import {
  civilFromDays,
  dateOfDayNumber,
  dayNumber,
  daysFromCivil,
  etDayNumberOf,
  etMidnightSeconds,
  etWallDaySecondsToSeconds,
  MARKET_ZONE,
  toEtDate,
  tryDayNumber,
} from './zone.js';

/** A parsed date input: an ET calendar date or an instant (epoch seconds). */
export type ParsedDate = { kind: 'date'; date: string } | { kind: 'instant'; tsSeconds: number };

/** The units of relative date inputs. */
export type RelativeUnit = 'minutes' | 'hours' | 'days' | 'weeks' | 'months' | 'years';

/**
 * A relative input (`-5 days`), unresolved: `amount` is signed (negative = earlier). The API reads it
 * relative to another parameter (`from=-5 days` relative to `to`); resolve it with `resolveRelative`.
 */
export type RelativeDate = { kind: 'relative'; amount: number; unit: RelativeUnit };

/** Unit names as written (a Map: a prototype name such as `constructor` is not a unit). */
const UNIT_NAMES: ReadonlyMap<string, RelativeUnit> = new Map([
  ['minute', 'minutes'],
  ['minutes', 'minutes'],
  ['min', 'minutes'],
  ['mins', 'minutes'],
  ['hour', 'hours'],
  ['hours', 'hours'],
  ['hr', 'hours'],
  ['hrs', 'hours'],
  ['day', 'days'],
  ['days', 'days'],
  ['week', 'weeks'],
  ['weeks', 'weeks'],
  ['month', 'months'],
  ['months', 'months'],
  ['year', 'years'],
  ['years', 'years'],
]);

const ISO_DATE_TIME =
  /^(\d{4}-\d{2}-\d{2})(?:T|\s+)(\d{1,2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4}|\d{2})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]m)?)?$/i;
const NUMBER = /^\d+(?:\.\d+)?$/;
const AGO = /^(\d+)\s*([a-z]+)\s+ago$/;
const MINUS = /^-\s*(\d+)\s*([a-z]+)$/;

/** Spreadsheet serials below this are days since 1899-12-30; larger numbers are unix seconds. */
const SPREADSHEET_LIMIT = 60_000;

function invalid(text: string): InvalidInputError {
  return new InvalidInputError(`Invalid date input "${text}"`);
}

/** The dates a date input may name: wide enough for any market history, and checked once here. */
const INPUT_RANGE = {
  first: daysFromCivil(1800, 1, 1),
  last: daysFromCivil(2199, 12, 31),
  text: '1800-01-01 and 2199-12-31',
};

/** The dates a relative shift may reach: those `YYYY-MM-DD` can write (and SQL can cast). */
const SHIFT_RANGE = {
  first: daysFromCivil(1, 1, 1),
  last: daysFromCivil(9999, 12, 31),
  text: '0001-01-01 and 9999-12-31',
};

type DayRange = typeof INPUT_RANGE;

/** A date from a day number, refused (NaN included) outside `range`. */
function dateInRange(day: number, range: DayRange, what: () => string): ParsedDate {
  if (!(day >= range.first && day <= range.last)) throw outOfRange(what(), range);
  return { kind: 'date', date: dateOfDayNumber(day) };
}

/** An instant, refused (NaN included) outside `range`; a day of margin keeps its ET date inside too. */
function instantInRange(tsSeconds: number, range: DayRange, what: () => string): ParsedDate {
  const day = Math.floor(tsSeconds / 86_400);
  if (!(day > range.first && day < range.last)) throw outOfRange(what(), range);
  return { kind: 'instant', tsSeconds };
}

function outOfRange(what: string, range: DayRange): InvalidInputError {
  return new InvalidInputError(`Invalid date input ${what}: dates must lie between ${range.text}`);
}

function inRange(parsed: ParsedDate, text: string): ParsedDate {
  const what = () => `"${text}"`;
  return parsed.kind === 'date'
    ? dateInRange(dayNumber(parsed.date), INPUT_RANGE, what)
    : instantInRange(parsed.tsSeconds, INPUT_RANGE, what);
}

function clockToday(clock: Clock): string {
  return dateOfDayNumber(etDayNumberOf(clock.nowSeconds()));
}

function parseIsoDateTime(text: string, match: RegExpExecArray): ParsedDate {
  const [, datePart, hh, mm, ss, fraction, offset] = match;
  const day = tryDayNumber(datePart!);
  const hours = Number(hh);
  const minutes = Number(mm);
  const seconds = ss === undefined ? 0 : Number(ss);
  if (Number.isNaN(day) || hours > 23 || minutes > 59 || seconds > 59) throw invalid(text);
  const wall = hours * 3600 + minutes * 60 + seconds;
  const fractionSeconds = fraction === undefined ? 0 : Number(fraction);
  if (offset === undefined) {
    return { kind: 'instant', tsSeconds: etWallDaySecondsToSeconds(day, wall) + fractionSeconds };
  }
  let offsetSeconds = 0;
  if (offset.toUpperCase() !== 'Z') {
    const digits = offset.slice(1).replace(':', '');
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMinutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (offsetHours > 23 || offsetMinutes > 59) throw invalid(text);
    offsetSeconds = (offset[0] === '-' ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60);
  }
  return { kind: 'instant', tsSeconds: day * 86_400 + wall - offsetSeconds + fractionSeconds };
}

function parseUsDate(text: string, match: RegExpExecArray): ParsedDate {
  const [, mo, da, yr, hh, mm, ss, meridiem] = match;
  const year = yr!.length === 2 ? 2000 + Number(yr) : Number(yr);
  const month = Number(mo);
  const dayOfMonth = Number(da);
  const day = tryDayNumber(
    `${year}-${String(month).padStart(2, '0')}-${String(dayOfMonth).padStart(2, '0')}`,
  );
  if (Number.isNaN(day)) throw invalid(text);
  if (hh === undefined) return { kind: 'date', date: dateOfDayNumber(day) };
  let hours = Number(hh);
  const minutes = Number(mm);
  const seconds = ss === undefined ? 0 : Number(ss);
  if (meridiem !== undefined) {
    if (hours < 1 || hours > 12) throw invalid(text);
    hours = (hours % 12) + (meridiem.toLowerCase() === 'pm' ? 12 : 0);
  }
  if (hours > 23 || minutes > 59 || seconds > 59) throw invalid(text);
  return {
    kind: 'instant',
    tsSeconds: etWallDaySecondsToSeconds(day, hours * 3600 + minutes * 60 + seconds),
  };
}

function parseNumber(text: string, value: number): ParsedDate {
  if (!(value > 0)) throw invalid(text);
  if (value >= SPREADSHEET_LIMIT) return { kind: 'instant', tsSeconds: value };
  const serialDay = Math.floor(value);
  if (serialDay === value) return { kind: 'date', date: dateOfDayNumber(serialDay - SPREADSHEET_UNIX_EPOCH) };
  // Serials carry ~1e-5 day of noise (44195.66667 is 16:00:00.29): round to the second.
  const wallSeconds = Math.round((value - serialDay) * 86_400);
  const day = serialDay - SPREADSHEET_UNIX_EPOCH + Math.floor(wallSeconds / 86_400);
  return { kind: 'instant', tsSeconds: etWallDaySecondsToSeconds(day, wallSeconds % 86_400) };
}

function unitOf(text: string, name: string): RelativeUnit {
  const unit = UNIT_NAMES.get(name);
  if (unit === undefined) throw invalid(text);
  return unit;
}

/**
 * Parses a date input (semantics §1, api-reference §9) and leaves a relative `-N unit` form unresolved.
 * Throws InvalidInputError naming the text when it is not a date or lies outside 1800–2199.
 */
export function parseDateInputOrRelative(text: string, clock: Clock): ParsedDate | RelativeDate {
  const parsed = parseUnchecked(text, clock);
  return parsed.kind === 'relative' ? parsed : inRange(parsed, text);
}

function parseUnchecked(text: string, clock: Clock): ParsedDate | RelativeDate {
  const trimmed = text.trim();
  const lower = trimmed.toLowerCase().replace(/\s+/g, ' ');
  if (/^\d{4}-\d{2}-\d{2}$/.test(trimmed)) {
    const day = tryDayNumber(trimmed);
    if (Number.isNaN(day)) throw invalid(text);
    return { kind: 'date', date: trimmed };
  }
  const iso = ISO_DATE_TIME.exec(trimmed);
  if (iso !== null) return parseIsoDateTime(text, iso);
  const us = US_DATE.exec(trimmed);
  if (us !== null) return parseUsDate(text, us);
  if (NUMBER.test(trimmed)) return parseNumber(text, Number(trimmed));
  switch (lower) {
    case 'now':
      return { kind: 'instant', tsSeconds: clock.nowSeconds() };
    case 'today':
      return { kind: 'date', date: clockToday(clock) };
    case 'yesterday':
      return { kind: 'date', date: dateOfDayNumber(dayNumber(clockToday(clock)) - 1) };
    case 'last session':
      return { kind: 'date', date: previousSession(clockToday(clock)) };
  }
  const ago = AGO.exec(lower);
  if (ago !== null) {
    const unit = unitOf(text, ago[2]!);
    return resolveRelative({ kind: 'relative', amount: -Number(ago[1]), unit }, clockAnchor(clock, unit));
  }
  const minus = MINUS.exec(lower);
  if (minus !== null) return { kind: 'relative', amount: -Number(minus[1]), unit: unitOf(text, minus[2]!) };
  throw invalid(text);
}

/** The anchor of `N unit ago`: now for minutes and hours, today's ET date for days and longer. */
function clockAnchor(clock: Clock, unit: RelativeUnit): ParsedDate {
  return unit === 'minutes' || unit === 'hours'
    ? { kind: 'instant', tsSeconds: clock.nowSeconds() }
    : { kind: 'date', date: clockToday(clock) };
}

/**
 * Shifts an anchor by a relative amount. A date stays a date for days and longer (months clamp to the
 * month's end: 03-31 minus 1 month → 02-29); minutes and hours count from 00:00 ET of a date anchor. An
 * instant anchor moves in ET wall time for days and longer (so 1 day across a DST change keeps the clock time).
 * A result outside 0001–9999 is an InvalidInputError.
 */
export function resolveRelative(relative: RelativeDate, anchor: ParsedDate): ParsedDate {
  const { amount, unit } = relative;
  const what = () =>
    `${amount} ${unit} from ${anchor.kind === 'date' ? anchor.date : new Date(anchor.tsSeconds * 1000).toISOString()}`;
  if (unit === 'minutes' || unit === 'hours') {
    const base = anchor.kind === 'date' ? etMidnightSeconds(anchor.date) : anchor.tsSeconds;
    return instantInRange(base + amount * (unit === 'minutes' ? 60 : 3600), SHIFT_RANGE, what);
  }
  if (anchor.kind === 'date') {
    if (unit === 'days' || unit === 'weeks') {
      return dateInRange(dayNumber(anchor.date) + amount * (unit === 'weeks' ? 7 : 1), SHIFT_RANGE, what);
    }
    const [year, month, day] = civilFromDays(dayNumber(anchor.date));
    const shifted = DateTime.fromObject({ year, month, day }, { zone: 'UTC' }).plus({ [unit]: amount });
    // An invalid DateTime (a shift past luxon's range) has NaN parts: refused as out of range.
    return dateInRange(daysFromCivil(shifted.year, shifted.month, shifted.day), SHIFT_RANGE, what);
  }
  const shifted = DateTime.fromSeconds(anchor.tsSeconds, { zone: MARKET_ZONE }).plus({ [unit]: amount });
  return instantInRange(shifted.toMillis() / 1000, SHIFT_RANGE, what);
}

/**
 * Whether `text` is a calendar date written `YYYY-MM-DD` (a real day: not `2021-02-30`): the one check
 * for the flags, files and keys that take a plain date.
 */
export function isIsoDate(text: string): boolean {
  return !Number.isNaN(tryDayNumber(text));
}

/** The Eastern calendar date of a parsed input: the date itself, or the ET date of an instant. */
export function etDateOf(parsed: ParsedDate): string {
  return parsed.kind === 'date' ? parsed.date : toEtDate(parsed.tsSeconds);
}

/**
 * Parses a date input relative to the injected clock (never the host clock or zone). A relative `-N unit`
 * is read against `anchor` when given (the API's `to` for a `from`), else against the clock like `N unit ago`.
 */
export function parseDateInput(text: string, clock: Clock, anchor?: ParsedDate): ParsedDate {
  const parsed = parseDateInputOrRelative(text, clock);
  if (parsed.kind !== 'relative') return parsed;
  return resolveRelative(parsed, anchor ?? clockAnchor(clock, parsed.unit));
}
