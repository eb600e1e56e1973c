/** Reading a request: its headers whatever their shape, and the parameters its endpoint reads. */
import { UNIVERSAL_KEYS } from './format.js';

/** The parameters an endpoint reads: the query without the universal ones (and `date` once resolved). */
export function endpointParams(
  query: Readonly<Record<string, string>>,
  withoutDate: boolean,
): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(query)) {
    if (!(withoutDate && k === 'date') && !(UNIVERSAL_KEYS as readonly string[]).includes(k)) out[k] = v;
  }
  return out;
}

/**
 * Header names in lower case; values that are not text are left out, and an object that throws when read
 * (a getter, a proxy) gives what was read before (a caller's mistake, not a crash).
 */
export function lowerCaseKeys(headers: unknown): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (headers === null || typeof headers !== 'object') return out;
  try {
    for (const [k, v] of Object.entries(headers)) if (typeof v === 'string') out[k.toLowerCase()] = v;
  } catch {
    // keep what was read
  }
  return out;
}
