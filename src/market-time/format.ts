import { InvalidInputError } from '../errors.js';
import { dateOfDayNumber, etOffsetSeconds } from './zone.js';

/** The `dateformat` values of the API. */
export type DateFormat = 'unix' | 'timestamp' | 'spreadsheet';

/** Serial number of 1970-01-01 in the spreadsheet epoch (days since 1899-12-30). */
export const SPREADSHEET_UNIX_EPOCH = 25_569;

function pad2(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/** ISO-8601 with the ET offset of the instant: `2024-03-15T16:00:00-04:00`. */
export function formatEtTimestamp(tsSeconds: number): string {
  const whole = Math.floor(tsSeconds);
  const offset = etOffsetSeconds(whole);
  const local = whole - offset;
  const day = Math.floor(local / 86_400);
  const secondsOfDay = local - day * 86_400;
  const offsetHours = Math.floor(offset / 3600);
  const offsetMinutes = Math.floor(offset / 60) % 60;
  return (
    `${dateOfDayNumber(day)}T${pad2(Math.floor(secondsOfDay / 3600))}:${pad2(Math.floor(secondsOfDay / 60) % 60)}:` +
    `${pad2(secondsOfDay % 60)}-${pad2(offsetHours)}:${pad2(offsetMinutes)}`
  );
}

/** Days since 1899-12-30 in ET wall time, rounded to 5 decimals (`44195.66667` for 2020-12-30 16:00 ET). */
export function toSpreadsheetSerial(tsSeconds: number): number {
  const local = tsSeconds - etOffsetSeconds(tsSeconds);
  return Math.round((local / 86_400 + SPREADSHEET_UNIX_EPOCH) * 100_000) / 100_000;
}

/** An instant as the API prints it for a `dateformat`: unix seconds, an ET ISO timestamp or a spreadsheet serial. */
export function formatInstant(tsSeconds: number, format: DateFormat): number | string {
  if (!Number.isFinite(tsSeconds)) throw new InvalidInputError(`Invalid instant ${tsSeconds}`);
  switch (format) {
    case 'unix':
      return tsSeconds;
    case 'timestamp':
      return formatEtTimestamp(tsSeconds);
    case 'spreadsheet':
      return toSpreadsheetSerial(tsSeconds);
    default:
      throw new InvalidInputError(`Unknown dateformat "${String(format)}"`);
  }
}
