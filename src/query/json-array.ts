/**
 * JSON arrays written as bytes: the text `JSON.stringify(values)` prints, with where each value starts.
 * A column of numbers is written digit by digit, without a string per value: a dense chain prints some
 * 150,000 values, and `JSON.stringify` spent 7 ms of a 6,358-row chain's answer on them, most on prices
 * (cents) and on runs of one repeated value (nulls, an underlying price), which are copied here from the
 * value before. Anything else is printed by `JSON.stringify`, which prints texts faster than a loop here.
 */

/** A JSON array's bytes and where each of its values starts (see {@link jsonArrayBytes}). */
export type JsonArrayBytes = {
  readonly bytes: Buffer;
  /**
   * Where each value starts, plus one past the closing bracket: value i spans
   * `[starts[i], starts[i + 1] - 1)` (the byte before the next start is its comma, or the final `]`).
   */
  readonly starts: Uint32Array;
};

const COMMA = 0x2c;
const OPEN = 0x5b;
const CLOSE = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
const MINUS = 0x2d;
const ZERO = 0x30;
const NULL_TEXT = 'null';

/** Below this, a price's cents are its shortest decimal: decimals a cent apart never share a double. */
const CENTS_BELOW = 1e9;
/** Below this, an integer prints as its digits (JavaScript prints integers below 1e21 so). */
const DIGITS_BELOW = 1e15;

/** The most bytes a number or `null` takes (`-1.7976931348623157e+308` is 24). */
const SCALAR_BYTES = 32;

/**
 * `values` as JSON array bytes, exactly the text of `JSON.stringify(values)`: numbers and nulls by
 * {@link jsonNumberArrayBytes}, anything else by `JSON.stringify`.
 */
export function jsonArrayBytes(values: readonly unknown[]): JsonArrayBytes {
  const numbers = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value === 'number') numbers[i] = value;
    // JSON prints null, undefined and NaN as null.
    else if (value === null || value === undefined) numbers[i] = Number.NaN;
    else {
      const bytes = Buffer.from(JSON.stringify(values), 'utf8');
      return { bytes, starts: valueStarts(bytes, values.length) };
    }
  }
  return jsonNumberArrayBytes(numbers);
}

/**
 * Numbers as JSON array bytes, NaN printed as null: exactly `JSON.stringify` of the numbers with null for
 * NaN (which it prints so too). A loop over one typed array, with nothing to ask of each value's type.
 */
export function jsonNumberArrayBytes(numbers: Float64Array): JsonArrayBytes {
  const count = numbers.length;
  let buffer: Buffer = Buffer.allocUnsafe(count * 8 + SCALAR_BYTES + 2);
  let at = 0;
  const starts = new Uint32Array(count + 1);
  buffer[at++] = OPEN;
  let previous = Number.NaN;
  let previousStart = -1;
  let previousEnd = -1;
  for (let i = 0; i < count; i++) {
    if (at + SCALAR_BYTES + 2 > buffer.length) buffer = grown(buffer, at, SCALAR_BYTES + 2);
    if (i > 0) buffer[at++] = COMMA;
    starts[i] = at;
    const value = numbers[i]!;
    // NaN never equals itself: a run of nulls is written, four bytes each.
    if (value === previous) {
      for (let k = previousStart; k < previousEnd; k++) buffer[at++] = buffer[k]!;
      continue;
    }
    previousStart = at;
    at = writeNumber(buffer, at, value);
    previous = value;
    previousEnd = at;
  }
  buffer[at++] = CLOSE;
  starts[count] = at;
  return { bytes: at === buffer.length ? buffer : Buffer.from(buffer.subarray(0, at)), starts };
}

/** The buffer with room for `needed` more bytes after `at`, its first `at` bytes kept. */
function grown(buffer: Buffer, at: number, needed: number): Buffer {
  const next = Buffer.allocUnsafe(Math.max(buffer.length * 2, at + needed));
  buffer.copy(next, 0, 0, at);
  return next;
}

/**
 * A number as JavaScript prints it: the digits of an integer, the shortest decimal of a price in cents,
 * and `String` for the rest (JSON prints NaN and infinities as null). At most {@link SCALAR_BYTES}.
 */
function writeNumber(buffer: Buffer, at: number, value: number): number {
  if (value === 0) {
    buffer[at] = ZERO; // and -0, which JSON prints as 0
    return at + 1;
  }
  if (!Number.isFinite(value)) return writeAscii(buffer, at, NULL_TEXT);
  let magnitude = value;
  if (value < 0) {
    buffer[at++] = MINUS;
    magnitude = -value;
  }
  if (magnitude < DIGITS_BELOW && Number.isInteger(magnitude)) return writeDigits(buffer, at, magnitude);
  if (magnitude < CENTS_BELOW) {
    const cents = Math.round(magnitude * 100);
    if (cents / 100 === magnitude) {
      const whole = Math.floor(cents / 100);
      const fraction = cents - whole * 100;
      at = writeDigits(buffer, at, whole);
      buffer[at++] = DOT;
      const tenths = Math.floor(fraction / 10);
      buffer[at++] = ZERO + tenths;
      if (fraction !== tenths * 10) buffer[at++] = ZERO + fraction - tenths * 10;
      return at;
    }
  }
  return writeAscii(buffer, at, String(magnitude));
}

/** A non-negative integer below 1e15, in decimal digits. */
function writeDigits(buffer: Buffer, at: number, n: number): number {
  let length = 1;
  for (let bound = 10; bound <= n; bound *= 10) length++;
  let digit = at + length - 1;
  let rest = n;
  do {
    const next = Math.floor(rest / 10);
    buffer[digit--] = ZERO + rest - next * 10;
    rest = next;
  } while (rest > 0);
  return at + length;
}

/** ASCII text written byte by byte. */
function writeAscii(buffer: Buffer, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) buffer[at + i] = text.charCodeAt(i);
  return at + text.length;
}

/**
 * Where each value of a JSON array starts, plus one past the closing bracket: value i spans
 * `[starts[i], starts[i + 1] - 1)` (the byte before the next start is its comma, or the final `]`).
 */
export function valueStarts(bytes: Buffer, count: number): Uint32Array {
  const starts = new Uint32Array(count + 1);
  let n = 0;
  if (count > 0) starts[n++] = 1;
  let depth = 0;
  let inString = false;
  const end = bytes.length - 1;
  for (let i = 1; i < end; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN || b === OPEN_OBJECT) depth++;
    else if (b === CLOSE || b === CLOSE_OBJECT) depth--;
    else if (b === COMMA && depth === 0) starts[n++] = i + 1;
  }
  starts[n++] = bytes.length;
  if (n !== count + 1) throw new Error(`JSON column has ${n - 1} values, expected ${count}`);
  return starts;
}
