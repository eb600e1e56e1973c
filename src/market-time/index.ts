/**
 * Market time: the NYSE calendar, session instants, option expirations, and the date forms the API
 * accepts and prints. The only module that imports luxon. Session dates are `YYYY-MM-DD` strings in
 * Eastern time (`sessionDate`); instants are UTC epoch seconds (`…Seconds` / `tsSeconds`).
 *
 * CONTRACT (implemented in the files of this folder; names and signatures are relied on elsewhere):
 *
 * Calendar (2000-01-01 .. 2035-12-31; outside → RangeError):
 *   isSession(date: string): boolean
 *   sessionOpenSeconds(date: string): number            // 09:30 ET as epoch seconds; throws if not a session
 *   sessionCloseSeconds(date: string): number           // 16:00 ET, or 13:00 ET on early-close days
 *   isEarlyClose(date: string): boolean
 *   nextSession(date: string): string                   // strictly after `date` (date need not be a session)
 *   previousSession(date: string): string               // strictly before
 *   sessionsBetween(from: string, to: string): string[] // inclusive, ascending
 *   sessionOf(tsSeconds: number): string | undefined    // the session whose calendar date (ET) holds the instant
 *   closureReason(date: string): string | undefined     // holiday / ad-hoc closure name, weekends 'weekend'
 *   indexOptionCloseSeconds(date: string): number       // 16:15 ET (13:15 on early-close days)
 *
 * Expirations:
 *   type Settlement = 'equity' | 'pm-index' | 'am-index'
 *   expirationSeconds(expirationDate: string, settlement: Settlement): number  // 16:00 / 16:15 / 09:30 ET
 *   monthlyExpiration(year: number, month: number): string   // third Friday, moved to the prior session if closed
 *   quarterlyExpirations(year: number): string[]             // last session of Mar/Jun/Sep/Dec (end-of-quarter)
 *   classifyExpiration(expirationDate: string): { monthly: boolean; weekly: boolean; quarterly: boolean }
 *       monthly = the standard monthly of its month (holiday-shifted); quarterly = last session of a quarter
 *       month and not the monthly; weekly = neither. (Saturday dates of pre-2015 monthlies → use the Friday.)
 *   isIndexRoot(root: string): boolean                        // SPX, SPXW, NDX, NDXP, RUT, RUTW, VIX, VIXW, XSP, DJX, OEX, XEO
 *   underlyingOfRoot(root: string): string                    // SPXW→SPX, NDXP→NDX, RUTW→RUT, VIXW→VIX, else root
 *   settlementOf(root: string, expirationDate: string): Settlement
 *       AM for SPX/NDX/RUT/DJX/XEO… standard monthlies and all VIX roots' expirations, PM for weeklies roots
 *       (SPXW, NDXP, RUTW, XSP, VIXW), equity otherwise.
 *   dte(sessionDate: string, expirationDate: string): number  // calendar days, 0 on expiration day
 *
 * Input dates (semantics §1) relative to an injected clock, never the host:
 *   type Clock = { nowSeconds(): number }
 *   fixedClock(tsSeconds: number): Clock;  systemClock: Clock
 *   parseDateInput(text: string, clock: Clock): ParsedDate  // throws RangeError with a message naming the text
 *   type ParsedDate = { kind: 'date'; date: string } | { kind: 'instant'; tsSeconds: number }
 *     ISO `YYYY-MM-DD` → date; `YYYY-MM-DD HH:MM[:SS]` / `T` forms (ET wall time unless an offset is given)
 *     → instant; US `M/D/YYYY`, `M/D/YY` (2000+YY) → date; unix seconds (integer ≥ 60000) → instant;
 *     spreadsheet serials (0 < v < 60000, may have decimals; whole → date, fraction → instant in ET) ;
 *     `now` → instant; `today`, `yesterday` → date in ET of the clock; `N days ago` (also minutes, hours,
 *     weeks, months, years) → instant or date; `last session` → the latest session date < today.
 *   toEtDate(tsSeconds: number): string                       // the ET calendar date of an instant
 *   etWallToSeconds(date: string, time: string): number       // 'YYYY-MM-DD', 'HH:MM[:SS]' in ET → epoch seconds
 *   etMidnightSeconds(date: string): number                   // 00:00 ET of a date
 *
 * Output (dateformat):
 *   type DateFormat = 'unix' | 'timestamp' | 'spreadsheet'
 *   formatInstant(tsSeconds: number, format: DateFormat): number | string
 *     unix → the number; timestamp → '2024-03-15T16:00:00-04:00'; spreadsheet → days since 1899-12-30 in
 *     ET wall time, a number rounded to 5 decimals (44195.66667).
 */
export {};
