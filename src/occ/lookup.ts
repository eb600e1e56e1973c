import { InvalidInputError } from '../errors.js';
import {
  isOccRoot,
  MAX_STRIKE_THOUSANDTHS,
  type OccSymbol,
  type OptionSide,
  occExpirationDate,
} from './symbol.js';

const US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{2}|\d{4})$/;
const ISO_DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
/** Thousands separators are accepted only in their proper places (`1,234.5`, not `12,34`). */
const STRIKE = /^\$?(\d{1,3}(?:,\d{3})+|\d*)(?:\.(\d+))?$/;
const SIDES: Readonly<Record<string, OptionSide>> = {
  c: 'call',
  call: 'call',
  calls: 'call',
  p: 'put',
  put: 'put',
  puts: 'put',
};
/** Echoed input is cut short so that an error body stays small whatever the caller sent. */
const ECHO_LIMIT = 40;

/**
 * The contract named by human lookup text: underlying, expiration date, strike and side separated by
 * spaces (`AAPL 7/28/23 $200 Call`), URL-encoded or not; throws InvalidInputError naming the unreadable part.
 *
 * Dates are `M/D/YY`, `M/D/YYYY` or `YYYY-M-D` (years 2000–2099, a real calendar date); the strike may carry
 * `$`, thousands separators and up to three significant decimals; the side is `c`, `call`, `calls`, `p`,
 * `put` or `puts` in any case; the underlying is upper-cased and must be a valid OCC root.
 */
export function parseLookupText(text: string): OccSymbol {
  const parts = decode(text).trim().split(/\s+/);
  if (parts.length !== 4) {
    throw lookupError('expected underlying, expiration date, strike and side separated by spaces');
  }
  const [underlying, date, strike, side] = parts as [string, string, string, string];
  const root = underlying.toUpperCase();
  if (!isOccRoot(root)) throw lookupError(`could not read the underlying '${echo(underlying)}'`);
  const expirationDate = readDate(date);
  if (expirationDate === undefined) throw lookupError(`could not read the expiration date '${echo(date)}'`);
  const thousandths = readStrikeThousandths(strike);
  if (thousandths === undefined) throw lookupError(`could not read the strike '${echo(strike)}'`);
  const optionSide = Object.hasOwn(SIDES, side.toLowerCase()) ? SIDES[side.toLowerCase()] : undefined;
  if (optionSide === undefined)
    throw lookupError(`could not read the side '${echo(side)}' (use call or put)`);
  return { root, expirationDate, side: optionSide, strike: thousandths / 1000 };
}

/** Decodes `+` and `%xx` once; text that was already decoded holds neither in any readable lookup. */
function decode(text: string): string {
  if (typeof text !== 'string') {
    throw lookupError('expected underlying, expiration date, strike and side separated by spaces');
  }
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch (cause) {
    throw lookupError(`could not decode the URL escapes in '${echo(text)}'`, cause);
  }
}

function readDate(token: string): string | undefined {
  const us = US_DATE.exec(token);
  if (us !== null) {
    const year = us[3]!.length === 2 ? 2000 + Number(us[3]) : Number(us[3]);
    return occExpirationDate(year, Number(us[1]), Number(us[2]));
  }
  const iso = ISO_DATE.exec(token);
  if (iso !== null) return occExpirationDate(Number(iso[1]), Number(iso[2]), Number(iso[3]));
  return undefined;
}

/** Reads the strike digit by digit so that `1234.567` is exactly 1234567 thousandths, never a float product. */
function readStrikeThousandths(token: string): number | undefined {
  const match = STRIKE.exec(token);
  if (match === null) return undefined;
  const whole = match[1]!.replace(/,/g, '').replace(/^0+/, '');
  const fraction = match[2] ?? '';
  if (whole.length > 5 || /[^0]/.test(fraction.slice(3))) return undefined;
  const thousandths = Number(whole || '0') * 1000 + Number(fraction.slice(0, 3).padEnd(3, '0'));
  return thousandths >= 1 && thousandths <= MAX_STRIKE_THOUSANDTHS ? thousandths : undefined;
}

function echo(part: string): string {
  return part.length > ECHO_LIMIT ? `${part.slice(0, ECHO_LIMIT)}…` : part;
}

function lookupError(reason: string, cause?: unknown): InvalidInputError {
  return new InvalidInputError(
    `Invalid lookup text: ${reason}.`,
    cause === undefined ? undefined : { cause },
  );
}
