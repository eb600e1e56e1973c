/** Clock instants a request names: `now` of a request, and `maxage` of a cached one. */
import { MarketDataError } from '../errors.js';
import { type Clock, fixedClock, parseDateInput, systemClock } from '../market-time/index.js';

/** The latest instant the clock accepts: the calendar ends in 2035; beyond this no answer means anything. */
const MAX_INSTANT_SECONDS = 4_102_444_800; // 2100-01-01

/**
 * Reads a clock instant: epoch seconds, a Date, or an instant in any input form. A bare date, NaN,
 * ±Infinity, an instant outside 1970–2100 or anything else gives undefined.
 */
export function readInstant(now: unknown, clock: Clock = systemClock): number | undefined {
  let seconds: number | undefined;
  if (typeof now === 'number') seconds = now;
  else if (now instanceof Date) seconds = now.getTime() / 1000;
  else if (typeof now === 'string') {
    try {
      const parsed = parseDateInput(now, clock);
      if (parsed.kind === 'instant') seconds = parsed.tsSeconds;
    } catch {
      seconds = undefined;
    }
  }
  if (seconds === undefined || !Number.isFinite(seconds)) return undefined;
  return seconds >= 0 && seconds < MAX_INSTANT_SECONDS ? seconds : undefined;
}

/** The message of the 400 for a clock instant that cannot be read (a caller's mistake in `now`). */
export function invalidNowMessage(now: unknown): string {
  const shown =
    typeof now === 'string'
      ? `'${now.slice(0, 40)}'`
      : typeof now === 'number' || typeof now === 'bigint' || typeof now === 'boolean' || now === null
        ? String(now).slice(0, 40)
        : now instanceof Date
          ? 'Invalid Date'
          : `of type ${typeof now}`; // an object's own text could throw: never ask it
  return `Invalid clock instant ${shown}: give epoch seconds, a Date, or a date and time such as 2020-03-16T15:45:00-04:00.`;
}

const RELATIVE_AGE = /^(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?)$/i;

/** The oldest snapshot instant `maxage` accepts: relative (`30s`, `5min`, `1h`, `2d`) or an absolute instant. */
export function parseMaxAge(text: string | undefined, nowSeconds: number): number {
  if (text === undefined || text === '') return Number.NEGATIVE_INFINITY;
  const relative = RELATIVE_AGE.exec(text.trim());
  if (relative !== null) {
    const unit = relative[2]!.toLowerCase();
    const seconds = unit.startsWith('s')
      ? 1
      : unit.startsWith('m')
        ? 60
        : unit.startsWith('h')
          ? 3600
          : 86_400;
    return nowSeconds - Number(relative[1]) * seconds;
  }
  try {
    const parsed = parseDateInput(text, fixedClock(nowSeconds));
    if (parsed.kind === 'instant') return parsed.tsSeconds;
  } catch {
    // fall through to the 400 below
  }
  throw new MarketDataError(
    400,
    `Invalid maxage '${text}'. Use a duration such as 30s, 5min, 1h or 2d, or a date and time.`,
  );
}
