import { FIXED_MESSAGES, InvalidInputError } from '../errors.js';

/** The side of an option contract, spelled as the service spells it. */
export type OptionSide = 'call' | 'put';

/** The parts of an OCC symbol: `expirationDate` is `YYYY-MM-DD` (20YY), `strike` in dollars exact to 1/1000. */
export type OccSymbol = { root: string; expirationDate: string; side: OptionSide; strike: number };

/**
 * A root of 1–6 uppercase letters and digits with at least one letter, written without lookarounds so
 * that RE2 (DuckDB) reads it too: the alternatives place the first letter after 0–5 leading digits.
 * All-digit roots are refused: no listed root is one, and a digit-only prefix is a mangled date or strike.
 */
const ROOT_SOURCE =
  '(?:[A-Z][A-Z0-9]{0,5}|[0-9][A-Z][A-Z0-9]{0,4}|[0-9]{2}[A-Z][A-Z0-9]{0,3}' +
  '|[0-9]{3}[A-Z][A-Z0-9]{0,2}|[0-9]{4}[A-Z][A-Z0-9]?|[0-9]{5}[A-Z])';

const SYMBOL_SOURCE = `(${ROOT_SOURCE})([0-9]{2})([0-9]{2})([0-9]{2})([CP])([0-9]{8})`;

/** The shape of an OCC symbol (`ROOT` + `YYMMDD` + `C|P` + 8-digit strike×1000); dates are checked apart. */
export const OCC_SYMBOL_PATTERN: RegExp = new RegExp(`^${SYMBOL_SOURCE}$`);

/** {@link OCC_SYMBOL_PATTERN} as RE2 text for DuckDB's `regexp_full_match` (bind it as a parameter). */
export const OCC_SYMBOL_SQL_REGEX: string = SYMBOL_SOURCE;

const ROOT_PATTERN = new RegExp(`^${ROOT_SOURCE}$`);
const ISO_DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
const STRIKE_DIGITS = 8;
/** Strikes are carried as integer thousandths; 8 digits hold up to 99,999.999. */
export const MAX_STRIKE_THOUSANDTHS = 99_999_999;

/** The number of days in `month` (1–12) of `year` in the proleptic Gregorian calendar. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** `YYYY-MM-DD` for a real calendar date of 2000–2099 (the years OCC symbology can name), else undefined. */
export function occExpirationDate(year: number, month: number, day: number): string | undefined {
  if (!Number.isInteger(year) || !Number.isInteger(month) || !Number.isInteger(day)) return undefined;
  if (year < 2000 || year > 2099 || month < 1 || month > 12) return undefined;
  if (day < 1 || day > daysInMonth(year, month)) return undefined;
  return `${year}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** Whether `root` is a valid OCC root: 1–6 uppercase letters and digits, at least one a letter. */
export function isOccRoot(root: string): boolean {
  return ROOT_PATTERN.test(root);
}

/** The parts of an OCC symbol, or undefined when the text is not one (wrong shape or impossible date). */
export function tryParseOccSymbol(text: string): OccSymbol | undefined {
  if (typeof text !== 'string') return undefined;
  const match = OCC_SYMBOL_PATTERN.exec(text);
  if (match === null) return undefined;
  const [, root, yy, mm, dd, side, strikeDigits] = match;
  const expirationDate = occExpirationDate(2000 + Number(yy), Number(mm), Number(dd));
  const thousandths = Number(strikeDigits);
  if (expirationDate === undefined || thousandths === 0) return undefined;
  return { root: root!, expirationDate, side: side === 'C' ? 'call' : 'put', strike: thousandths / 1000 };
}

/** The parts of an OCC symbol; throws the service's fixed 400 when the text is not valid OCC symbology. */
export function parseOccSymbol(text: string): OccSymbol {
  const parts = tryParseOccSymbol(text);
  if (parts === undefined) throw new InvalidInputError(FIXED_MESSAGES.invalidOptionSymbol);
  return parts;
}

/** Whether the text is a valid OCC symbol (shape and a real expiration date). */
export function isOccSymbol(text: string): boolean {
  return tryParseOccSymbol(text) !== undefined;
}

/** The strike as integer thousandths of a dollar, or undefined unless it is in (0, 100000) and exact to 1/1000. */
export function strikeThousandths(strike: number): number | undefined {
  if (typeof strike !== 'number' || !Number.isFinite(strike)) return undefined;
  const thousandths = Math.round(strike * 1000);
  if (Math.abs(thousandths / 1000 - strike) > 1e-9) return undefined;
  if (thousandths < 1 || thousandths > MAX_STRIKE_THOUSANDTHS) return undefined;
  return thousandths;
}

/** The OCC symbol of the parts; throws RangeError on a root, date, side or strike that cannot be symbolised. */
export function formatOccSymbol(parts: OccSymbol): string {
  const { root, expirationDate, side, strike } = parts;
  if (typeof root !== 'string' || !isOccRoot(root)) {
    throw new InvalidInputError(
      `OCC root must be 1-6 uppercase letters and digits with a letter: ${String(root)}`,
    );
  }
  const date = typeof expirationDate === 'string' ? ISO_DATE_PATTERN.exec(expirationDate) : null;
  if (date === null || occExpirationDate(Number(date[1]), Number(date[2]), Number(date[3])) === undefined) {
    throw new InvalidInputError(
      `OCC expiration must be a real YYYY-MM-DD date in 2000-2099: ${String(expirationDate)}`,
    );
  }
  if (side !== 'call' && side !== 'put')
    throw new InvalidInputError(`OCC side must be call or put: ${String(side)}`);
  const thousandths = strikeThousandths(strike);
  if (thousandths === undefined) {
    throw new InvalidInputError(
      `OCC strike must be above 0, below 100000 and exact to 1/1000: ${String(strike)}`,
    );
  }
  const yymmdd = `${date[1]!.slice(2)}${date[2]}${date[3]}`;
  return `${root}${yymmdd}${side === 'call' ? 'C' : 'P'}${pad(thousandths, STRIKE_DIGITS)}`;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}
