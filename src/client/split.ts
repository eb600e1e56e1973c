/**
 * How one call becomes several requests, as the service's limits require (market-data-api §8):
 * multi-symbol requests in batches of at most 500 symbols whose request line stays within 4,094 bytes
 * (L1, L2), and intraday candle ranges in chunks of less than one year (L3) that meet end to end.
 */
import { MAX_REQUEST_LINE_BYTES } from './transport.js';

/** The recommended largest batch of a multi-symbol request (L2). */
export const MAX_BATCH_SYMBOLS = 500;

/** A query value as it goes on the wire: percent-encoded, commas of lists kept (each costs one byte, not three). */
export function encodeQueryValue(value: string): string {
  return encodeURIComponent(value).replaceAll('%2C', ',');
}

/**
 * Splits `symbols` into batches for a request whose line, with the symbols' value empty, is `emptyLineBytes`
 * long: each batch holds at most `maxSymbols` symbols and its line at most `maxLineBytes` bytes. A symbol
 * too long to fit even alone gets a batch of its own (the service then answers its 400).
 */
export function symbolBatches(
  symbols: readonly string[],
  emptyLineBytes: number,
  maxSymbols = MAX_BATCH_SYMBOLS,
  maxLineBytes = MAX_REQUEST_LINE_BYTES,
): string[][] {
  const batches: string[][] = [];
  let batch: string[] = [];
  let bytes = emptyLineBytes;
  for (const symbol of symbols) {
    // Percent-encoded text is ASCII: one byte per character.
    const length = encodeQueryValue(symbol).length;
    if (batch.length > 0 && (batch.length >= maxSymbols || bytes + 1 + length > maxLineBytes)) {
      batches.push(batch);
      batch = [];
      bytes = emptyLineBytes;
    }
    bytes += length + (batch.length > 0 ? 1 : 0);
    batch.push(symbol);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** Whether a candle resolution is intraday (minutes or hours), whose ranges the service limits to under a year. */
export function isIntraday(resolution: string): boolean {
  return !/^(daily|weekly|monthly|yearly|\d*[DWMY])$/i.test(resolution.trim());
}

/** One end of a candle range as the client can split it: an Eastern date, or epoch seconds. */
type RangeEnd =
  | { readonly kind: 'date'; readonly day: number }
  | { readonly kind: 'seconds'; readonly value: number };

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function readEnd(value: unknown): RangeEnd | undefined {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return undefined;
    return { kind: 'date', day: Math.floor(value.getTime() / DAY_MS) };
  }
  const text =
    typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  if (text === undefined) return undefined;
  const date = DATE.exec(text);
  if (date !== null) {
    const ms = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
    return Number.isNaN(ms) ? undefined : { kind: 'date', day: ms / DAY_MS };
  }
  // Epoch seconds (spreadsheet serials, below 1e6, are left to the service).
  if (/^\d{7,}$/.test(text)) return { kind: 'seconds', value: Number(text) };
  return undefined;
}

function dateText(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The chunks of an intraday range `from`…`to` (both inclusive, as the service reads them): each spans
 * less than one year and each starts where the one before ended, with no gap and no overlap. Dates give
 * chunks of 365 calendar days (a date `to` covers its whole day: `from` + 364 days ends a second before
 * `from` + 365 days, under a year even across a leap day); epoch seconds give chunks of 365 days minus one
 * second. Undefined when the range cannot be split here (other date forms, or the two ends in different
 * forms): the call then goes as one request.
 */
export function candleChunks(from: unknown, to: unknown): { from: string; to: string }[] | undefined {
  const start = readEnd(from);
  const end = readEnd(to);
  if (start === undefined || end === undefined || start.kind !== end.kind) return undefined;
  const chunks: { from: string; to: string }[] = [];
  if (start.kind === 'date' && end.kind === 'date') {
    for (let day = start.day; day <= end.day; day += 365) {
      chunks.push({ from: dateText(day), to: dateText(Math.min(day + 364, end.day)) });
    }
  } else if (start.kind === 'seconds' && end.kind === 'seconds') {
    const span = 365 * 86_400;
    for (let at = start.value; at <= end.value; at += span) {
      chunks.push({ from: String(at), to: String(Math.min(at + span - 1, end.value)) });
    }
  }
  return chunks.length === 0 ? undefined : chunks;
}
