/**
 * JSON arrays written as bytes: the text `JSON.stringify(values)` prints, with where each value starts,
 * without a string per value. A dense chain prints some 150,000 values; `JSON.stringify` spent 7 ms of
 * a 6,358-row chain's answer on them, most on prices (cents) and on columns of one repeated value (the
 * underlying, a side, nulls), which are written here digit by digit or copied from the value before.
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

/** The most bytes a number, `null`, `true` or `false` takes (`-1.7976931348623157e+308` is 24). */
const SCALAR_BYTES = 32;

/**
 * `values` as JSON array bytes, exactly the text of `JSON.stringify(values)`. One function over a local
 * buffer and position: the per-value work is a few byte stores, and a call or a field per byte doubled it.
 */
export function jsonArrayBytes(values: readonly unknown[]): JsonArrayBytes {
  const count = values.length;
  let buffer: Buffer = Buffer.allocUnsafe(count * 8 + SCALAR_BYTES + 2);
  let at = 0;
  const starts = new Uint32Array(count + 1);
  buffer[at++] = OPEN;
  // The value before and where its text was written: a repeated value's bytes are copied.
  let previous: unknown;
  let previousStart = -1;
  let previousEnd = -1;
  for (let i = 0; i < count; i++) {
    const value = values[i];
    const repeated = previousStart !== -1 && value === previous;
    const most = repeated
      ? previousEnd - previousStart
      : typeof value === 'string'
        ? value.length * 6 + 2
        : SCALAR_BYTES;
    if (at + most + 2 > buffer.length) buffer = grown(buffer, at, most + 2);
    if (i > 0) buffer[at++] = COMMA;
    starts[i] = at;
    if (repeated) {
      for (let k = previousStart; k < previousEnd; k++) buffer[at++] = buffer[k]!;
      continue;
    }
    previous = value;
    previousStart = at;
    if (typeof value === 'number') at = writeNumber(buffer, at, value);
    else if (value === null || value === undefined) at = writeAscii(buffer, at, NULL_TEXT);
    else if (typeof value === 'string') at = writeString(buffer, at, value);
    else if (value === true) at = writeAscii(buffer, at, 'true');
    else if (value === false) at = writeAscii(buffer, at, 'false');
    else {
      // Anything else (an array of values, an object) as JSON.stringify prints it in an array.
      const text = JSON.stringify(value) ?? NULL_TEXT;
      const bytes = Buffer.byteLength(text, 'utf8');
      if (at + bytes + 2 > buffer.length) buffer = grown(buffer, at, bytes + 2);
      at += buffer.write(text, at, 'utf8');
      previousStart = -1; // not copied: only scalars and strings are
    }
    previousEnd = at;
  }
  buffer[at++] = CLOSE;
  starts[count] = at;
  return { bytes: at === buffer.length ? buffer : Buffer.from(buffer.subarray(0, at)), starts };
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

/** `values` as JSON array text, exactly `JSON.stringify(values)`. */
export function jsonArrayText(values: readonly unknown[]): string {
  return jsonArrayBytes(values).bytes.toString('utf8');
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

/**
 * A string as JSON prints it: written as it is when nothing in it needs escaping, else as JSON.stringify
 * prints it (room for `length * 6 + 2` bytes is made before: an escape takes at most 6 bytes a UTF-16
 * unit, UTF-8 at most 3).
 */
function writeString(buffer: Buffer, at: number, value: string): number {
  const length = value.length;
  buffer[at] = QUOTE;
  for (let i = 0; i < length; i++) {
    const code = value.charCodeAt(i);
    // Control characters, the quote, the backslash and anything past ASCII: printed by JSON.stringify.
    if (code < 0x20 || code === QUOTE || code === BACKSLASH || code > 0x7e) {
      return at + buffer.write(JSON.stringify(value), at, 'utf8');
    }
    buffer[at + 1 + i] = code;
  }
  buffer[at + 1 + length] = QUOTE;
  return at + length + 2;
}

/** ASCII text written byte by byte. */
function writeAscii(buffer: Buffer, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) buffer[at + i] = text.charCodeAt(i);
  return at + text.length;
}
