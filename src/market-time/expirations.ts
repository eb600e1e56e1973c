import { InvalidInputError } from '../errors.js';
import {
  CALENDAR_FIRST_YEAR,
  CALENDAR_LAST_YEAR,
  isSessionDay,
  lastSessionOfMonth,
  monthlyExpiration,
  sessionOnOrBefore,
} from './calendar.js';
import {
  civilFromDays,
  dateOfDayNumber,
  dayNumber,
  etWallDaySecondsToSeconds,
  nthWeekdayOfMonth,
  weekdayOf,
} from './zone.js';

/** How an option settles, which fixes the instant of its `expiration` timestamp. */
export type Settlement = 'equity' | 'pm-index' | 'am-index';

/** What kind of expiration a date is within its month. */
export type ExpirationClass = { monthly: boolean; weekly: boolean; quarterly: boolean };

const EXPIRATION_WALL_SECONDS: Record<Settlement, number> = {
  equity: 16 * 3600,
  'pm-index': 16 * 3600 + 15 * 60,
  'am-index': 9 * 3600 + 30 * 60,
};

/** The `expiration` instant of an expiration date: 16:00 ET equity, 16:15 ET PM-settled index, 09:30 ET AM-settled index. */
export function expirationSeconds(expirationDate: string, settlement: Settlement): number {
  const wall = EXPIRATION_WALL_SECONDS[settlement];
  if (wall === undefined) throw new InvalidInputError(`Unknown settlement "${settlement}"`);
  return etWallDaySecondsToSeconds(dayNumber(expirationDate), wall);
}

/**
 * The trading day of an expiration date: a Saturday (how monthlies were dated before 2015) maps to the
 * session before it — the Friday, or the Thursday when that Friday was a holiday; other dates are unchanged.
 */
export function normalizeExpirationDate(date: string): string {
  const day = dayNumber(date);
  if (weekdayOf(day) !== 6) return date;
  const year = civilFromDays(day)[0];
  if (year < CALENDAR_FIRST_YEAR || year > CALENDAR_LAST_YEAR) return dateOfDayNumber(day - 1);
  return dateOfDayNumber(sessionOnOrBefore(day - 1));
}

/** The end-of-quarter expirations of a year: the last session of March, June, September and December. */
export function quarterlyExpirations(year: number): string[] {
  return [3, 6, 9, 12].map((month) => lastSessionOfMonth(year, month));
}

/**
 * The standard monthly VIX expiration: the Wednesday 30 days before the next month's third Friday, moved to
 * the session before that Wednesday when the Wednesday or that Friday is an exchange holiday.
 */
export function vixMonthlyExpiration(year: number, month: number): string {
  monthlyExpiration(year, month); // range check of year and month
  const friday =
    month === 12 ? nthWeekdayOfMonth(year + 1, 1, 5, 3) : nthWeekdayOfMonth(year, month + 1, 5, 3);
  const wednesday = friday - 30;
  if (isSessionDay(wednesday) && isSessionDay(friday)) return dateOfDayNumber(wednesday);
  return dateOfDayNumber(sessionOnOrBefore(wednesday - 1));
}

const UNDERLYING_OF_INDEX_ROOT = new Map<string, string>([
  ['SPX', 'SPX'],
  ['SPXW', 'SPX'],
  ['SPXPM', 'SPX'],
  ['XSP', 'XSP'],
  ['NDX', 'NDX'],
  ['NDXP', 'NDX'],
  ['RUT', 'RUT'],
  ['RUTW', 'RUT'],
  ['VIX', 'VIX'],
  ['VIXW', 'VIX'],
  ['BVZ', 'VIX'],
  ['DJX', 'DJX'],
  ['OEX', 'OEX'],
  ['XEO', 'OEX'],
]);

/** Roots whose standard monthlies settle on the opening print (SOQ); their other expirations settle PM. */
const AM_MONTHLY_ROOTS = new Set(['SPX', 'NDX', 'RUT', 'DJX']);
/** Roots settled on the VIX special opening quotation at every expiration. */
const VIX_ROOTS = new Set(['VIX', 'VIXW', 'BVZ']);

/** Whether an option root is a cash-settled index root (SPX, SPXW, NDX, NDXP, RUT, RUTW, VIX, VIXW, XSP, DJX, OEX, XEO, …). */
export function isIndexRoot(root: string): boolean {
  return UNDERLYING_OF_INDEX_ROOT.has(root);
}

/** How an option may be exercised: only at expiration (European) or on any day before it (American). */
export type ExerciseStyle = 'european' | 'american';

/**
 * The exercise style of an option root: European for the cash-settled index roots except OEX (the S&P 100's
 * American contract; XEO is its European twin), American for every equity and ETF root.
 */
export function exerciseStyleOf(root: string): ExerciseStyle {
  return UNDERLYING_OF_INDEX_ROOT.has(root) && root !== 'OEX' ? 'european' : 'american';
}

/** The cash-settled index roots `isIndexRoot` knows, in no particular order. */
export function indexRoots(): string[] {
  return [...UNDERLYING_OF_INDEX_ROOT.keys()];
}

/** The underlying symbol of an option root: SPXW→SPX, NDXP→NDX, RUTW→RUT, VIXW→VIX; any other root is its own. */
export function underlyingOfRoot(root: string): string {
  const underlying = UNDERLYING_OF_INDEX_ROOT.get(root);
  if (underlying === undefined) return root;
  return underlying === 'OEX' && root === 'XEO' ? 'XEO' : underlying;
}

/**
 * The standard monthly of the month holding `expirationDate` (holiday-shifted; VIX roots use the VIX
 * Wednesday), whether it is that date, and whether the date is the end-of-quarter session instead.
 */
export function classifyExpiration(expirationDate: string, root?: string): ExpirationClass {
  const date = normalizeExpirationDate(expirationDate);
  const [year, month] = civilFromDays(dayNumber(date));
  const standard =
    root !== undefined && VIX_ROOTS.has(root)
      ? vixMonthlyExpiration(year, month)
      : monthlyExpiration(year, month);
  const monthly = date === standard;
  const quarterly = !monthly && month % 3 === 0 && date === lastSessionOfMonth(year, month);
  return { monthly, weekly: !monthly && !quarterly, quarterly };
}

/**
 * How options of `root` expiring on `expirationDate` settle: AM for the standard monthlies of SPX, NDX,
 * RUT and DJX and for every VIX expiration; PM for the other index expirations (SPXW, NDXP, RUTW, XSP,
 * OEX, XEO); equity for everything else.
 */
export function settlementOf(root: string, expirationDate: string): Settlement {
  if (!UNDERLYING_OF_INDEX_ROOT.has(root)) return 'equity';
  if (VIX_ROOTS.has(root)) return 'am-index';
  if (AM_MONTHLY_ROOTS.has(root) && classifyExpiration(expirationDate).monthly) return 'am-index';
  return 'pm-index';
}

/** Calendar days from a session date to an expiration date (0 on expiration day, negative after it). */
export function dte(sessionDate: string, expirationDate: string): number {
  return dayNumber(expirationDate) - dayNumber(sessionDate);
}
