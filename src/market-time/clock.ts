import { InvalidInputError } from '../errors.js';
/** A source of "now" (clock instant T); injected everywhere so nothing else reads the host clock. */
export type Clock = { nowSeconds(): number };

/** A clock stopped at `tsSeconds` (epoch seconds). */
export function fixedClock(tsSeconds: number): Clock {
  if (!Number.isFinite(tsSeconds)) throw new InvalidInputError(`Invalid clock instant ${tsSeconds}`);
  return { nowSeconds: () => tsSeconds };
}

/** The real-time clock: the only place in the project that reads the host clock. */
export const systemClock: Clock = { nowSeconds: () => Math.floor(Date.now() / 1000) };
