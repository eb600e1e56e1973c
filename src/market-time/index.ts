/**
 * Market time: the NYSE calendar, session instants, option expirations, and the date forms the API
 * accepts and prints. The only module that imports luxon. Session dates are `YYYY-MM-DD` strings in
 * Eastern time (`sessionDate`); instants are UTC epoch seconds (`…Seconds` / `tsSeconds`).
 *
 * CONTRACT (implemented in the files of this folder; names and signatures are relied on elsewhere):
 *
 * Calendar (1990-01-01 .. 2035-12-31, checked against exchange_calendars for 1990..2030; outside → RangeError):
 *   isSession(date: string): boolean
 *   sessionOpenSeconds(date: string): number            // 09:30 ET as epoch seconds; throws if not a session
 *   sessionCloseSeconds(date: string): number           // 16:00 ET, or 13:00 ET on early-close days (14:00 before 1993)
 *   isEarlyClose(date: string): boolean
 *   nextSession(date: string): string                   // strictly after `date` (date need not be a session)
 *   previousSession(date: string): string               // strictly before
 *   sessionsBetween(from: string, to: string): string[] // inclusive, ascending
 *   sessionOf(tsSeconds: number): string | undefined    // the session whose calendar date (ET) holds the instant
 *   latestSessionAt(tsSeconds: number): string          // that session, or the last one before a closed day
 *   closureReason(date: string): string | undefined     // holiday / ad-hoc closure name, weekends 'weekend'
 *   indexOptionCloseSeconds(date: string): number       // 16:15 ET (13:15 on early-close days)
 *   lastSessionOfMonth(year: number, month: number): string
 *   CALENDAR_FIRST_YEAR = 1990, CALENDAR_LAST_YEAR = 2035
 *
 * Expirations:
 *   type Settlement = 'equity' | 'pm-index' | 'am-index'
 *   expirationSeconds(expirationDate: string, settlement: Settlement): number  // 16:00 / 16:15 / 09:30 ET
 *   monthlyExpiration(year: number, month: number): string   // third Friday, moved to the prior session if closed
 *   quarterlyExpirations(year: number): string[]             // last session of Mar/Jun/Sep/Dec (end-of-quarter)
 *   classifyExpiration(expirationDate: string, root?: string): ExpirationClass
 *       ExpirationClass = { monthly: boolean; weekly: boolean; quarterly: boolean }
 *       monthly = the standard monthly of its month (holiday-shifted; for VIX roots the VIX Wednesday);
 *       quarterly = last session of a quarter month and not the monthly; weekly = neither. Saturday dates of
 *       pre-2015 monthlies are read through normalizeExpirationDate.
 *   normalizeExpirationDate(date: string): string  // a Saturday → the session before it (Friday, or Thursday
 *       when that Friday was a holiday); any other date unchanged
 *   vixMonthlyExpiration(year: number, month: number): string // Wednesday 30 days before next month's 3rd Friday
 *   isIndexRoot(root: string): boolean                        // SPX, SPXW, SPXPM, NDX, NDXP, RUT, RUTW, VIX, VIXW, BVZ, XSP, DJX, OEX, XEO
 *   underlyingOfRoot(root: string): string                    // SPXW/SPXPM→SPX, NDXP→NDX, RUTW→RUT, VIXW/BVZ→VIX, else root
 *   exerciseStyleOf(root: string): ExerciseStyle              // 'european' for the index roots but OEX, else 'american'
 *   settlementOf(root: string, expirationDate: string): Settlement
 *       AM for SPX/NDX/RUT/DJX standard monthlies and every expiration of the VIX roots (VIX, VIXW, BVZ);
 *       PM for the other index expirations (SPXW, SPXPM, NDXP, RUTW, XSP, OEX, XEO, and non-monthly
 *       SPX/NDX/RUT/DJX dates); equity for any root that is not an index root.
 *   dte(sessionDate: string, expirationDate: string): number  // calendar days, 0 on expiration day
 *   An equity expiration stays at 16:00 ET even on an early-close day (semantics §1 fixes the time).
 *
 * Input dates (semantics §1) relative to an injected clock, never the host:
 *   type Clock = { nowSeconds(): number }
 *   fixedClock(tsSeconds: number): Clock;  systemClock: Clock
 *   parseDateInput(text: string, clock: Clock, anchor?: ParsedDate): ParsedDate  // RangeError naming the text
 *   type ParsedDate = { kind: 'date'; date: string } | { kind: 'instant'; tsSeconds: number }
 *     ISO `YYYY-MM-DD` → date; `YYYY-MM-DD HH:MM[:SS]` / `T` forms (ET wall time unless an offset is given)
 *     → instant; US `M/D/YYYY`, `M/D/YY` (2000+YY) → date; unix seconds (≥ 60000, fraction kept) → instant;
 *     spreadsheet serials (0 < v < 60000, may have decimals; whole → date, fraction → instant in ET) ;
 *     `now` → instant; `today`, `yesterday` → date in ET of the clock; `N days ago` (also minutes, hours,
 *     weeks, months, years) → instant or date; `last session` → the latest session date < today.
 *     `N minutes|hours ago` → instant (now − N); `N days|weeks|months|years ago` → date (today − N, months
 *     clamped to the month's end). `-N unit` is relative to `anchor` (the API reads `from` against `to`),
 *     else to the clock like `N unit ago`. ISO times in the skipped spring hour read forward (2024-03-10 02:30
 *     → 03:30 EDT); in the repeated autumn hour the first occurrence (EDT). `0` and negatives are refused.
 *   parseDateInputOrRelative(text, clock): ParsedDate | RelativeDate   // leaves `-N unit` unresolved
 *   type RelativeDate = { kind: 'relative'; amount: number; unit: RelativeUnit }  // amount signed
 *   type RelativeUnit = 'minutes' | 'hours' | 'days' | 'weeks' | 'months' | 'years'
 *   resolveRelative(relative: RelativeDate, anchor: ParsedDate): ParsedDate
 *   etDateOf(parsed: ParsedDate): string                      // a date itself, or the ET date of an instant
 *   isIsoDate(text: string): boolean                          // a real calendar date written YYYY-MM-DD
 *   toEtDate(tsSeconds: number): string                       // the ET calendar date of an instant
 *   etWallToSeconds(date: string, time: string): number       // 'YYYY-MM-DD', 'HH:MM[:SS]' in ET → epoch seconds
 *   etMidnightSeconds(date: string): number                   // 00:00 ET of a date
 *   etSecondsOfDayToSeconds(date: string, secondsOfDay: number): number  // ET wall time as seconds after midnight
 *   etOffsetSeconds(tsSeconds: number): number               // UTC − ET at an instant: 14400 (EDT) or 18000 (EST)
 *   MARKET_ZONE = 'America/New_York'
 *   These, the calendar and `dte` use precomputed tables (no luxon) for 1967..2199.
 *
 * Output (dateformat):
 *   type DateFormat = 'unix' | 'timestamp' | 'spreadsheet'
 *   formatInstant(tsSeconds: number, format: DateFormat): number | string
 *     unix → the number; timestamp → '2024-03-15T16:00:00-04:00'; spreadsheet → days since 1899-12-30 in
 *     ET wall time, a number rounded to 5 decimals (44195.66667).
 *   formatEtTimestamp(tsSeconds): string;  toSpreadsheetSerial(tsSeconds): number   // the two parts of it
 */

export {
  CALENDAR_FIRST_YEAR,
  CALENDAR_LAST_YEAR,
  closureReason,
  indexOptionCloseSeconds,
  isEarlyClose,
  isSession,
  lastSessionOfMonth,
  latestSessionAt,
  monthlyExpiration,
  nextSession,
  previousSession,
  sessionCloseSeconds,
  sessionOf,
  sessionOpenSeconds,
  sessionsBetween,
} from './calendar.js';
export { type Clock, fixedClock, systemClock } from './clock.js';
export {
  etDateOf,
  isIsoDate,
  type ParsedDate,
  parseDateInput,
  parseDateInputOrRelative,
  type RelativeDate,
  type RelativeUnit,
  resolveRelative,
} from './dates.js';
export {
  classifyExpiration,
  dte,
  type ExerciseStyle,
  type ExpirationClass,
  exerciseStyleOf,
  expirationSeconds,
  indexRoots,
  isIndexRoot,
  normalizeExpirationDate,
  quarterlyExpirations,
  type Settlement,
  settlementOf,
  underlyingOfRoot,
  vixMonthlyExpiration,
} from './expirations.js';
export { type DateFormat, formatEtTimestamp, formatInstant, toSpreadsheetSerial } from './format.js';
export {
  etMidnightSeconds,
  etOffsetSeconds,
  etSecondsOfDayToSeconds,
  etWallToSeconds,
  MARKET_ZONE,
  toEtDate,
} from './zone.js';
