/** Day numbers (days since 1970-01-01) as the store hands dates over cheaply. */

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
