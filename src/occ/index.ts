/**
 * OCC option symbology and the human-readable lookup text. Pure: no I/O, no luxon.
 *
 * CONTRACT (names relied on elsewhere):
 *   type OptionSide = 'call' | 'put'
 *   type OccSymbol = { root: string; expirationDate: string; side: OptionSide; strike: number }
 *       expirationDate 'YYYY-MM-DD' (20YY), strike in dollars (32.5), exact to 1/1000.
 *   parseOccSymbol(text: string): OccSymbol       // throws InvalidInputError(FIXED_MESSAGES.invalidOptionSymbol)
 *   tryParseOccSymbol(text: string): OccSymbol | undefined
 *   formatOccSymbol(parts: OccSymbol): string     // throws RangeError on parts that cannot be symbolised
 *   isOccSymbol(text: string): boolean
 *   OCC_SYMBOL_PATTERN: RegExp                    // ^[A-Z0-9]{1,6}\d{6}[CP]\d{8}$ shape (dates checked separately)
 *   OCC_SYMBOL_SQL_REGEX: string                  // the same shape for DuckDB regexp_full_match
 *   parseLookupText(text: string): OccSymbol      // "AAPL 7/28/23 $200 Call" …; throws InvalidInputError(msg
 *                                                 // naming the part that could not be read)
 *
 * Roots must hold at least one letter (all-digit roots are refused), so the two patterns are that shape
 * narrowed by this rule; they use no lookarounds, so JavaScript and RE2 read them alike.
 */
export { parseLookupText } from './lookup.js';
export type { OccSymbol, OptionSide } from './symbol.js';
export {
  formatOccSymbol,
  isOccRoot,
  isOccSymbol,
  OCC_SYMBOL_PATTERN,
  OCC_SYMBOL_SQL_REGEX,
  parseOccSymbol,
  strikeThousandths,
  tryParseOccSymbol,
} from './symbol.js';
