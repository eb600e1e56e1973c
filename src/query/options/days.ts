/** Day numbers (days since 1970-01-01) as the store hands dates over cheaply, and steps between sessions. */
import { nextSession } from '../../market-time/index.js';

const DAY_MS = 86_400_000;
const isoDates = new Map<number, string>();

/** `YYYY-MM-DD` of a day number (days since 1970-01-01), remembered: a chain has few distinct dates. */
export function isoDateOfDay(day: number): string {
  let text = isoDates.get(day);
  if (text === undefined) {
    text = new Date(day * DAY_MS).toISOString().slice(0, 10);
    isoDates.set(day, text);
  }
  return text;
}

/** The day number of `YYYY-MM-DD`. */
export function dayNumberOfIso(date: string): number {
  return Date.parse(`${date}T00:00:00Z`) / DAY_MS;
}

/** The session after `date`, or undefined past the calendar's end. */
export function tryNextSession(date: string): string | undefined {
  try {
    return nextSession(date);
  } catch {
    return undefined;
  }
}

/** Sessions after `from` up to `to` (0 when `to` is not after it). */
export function sessionCount(from: string, to: string): number {
  let count = 0;
  for (let at = tryNextSession(from); at !== undefined && at <= to; at = tryNextSession(at)) count++;
  return count;
}
