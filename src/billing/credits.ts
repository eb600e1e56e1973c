/** Credit rules (specification §8, semantics §6), applied to what a response actually contains. */
import type { Billing } from '../query/types.js';

const QUOTE_KEYS = new Set(['bid', 'ask', 'mid', 'last']);

/**
 * Credits for a 200/203 answer with `rows` rows after `limit`/`offset`, keeping `keptKeys` (the API keys
 * left after `columns`). A cached hit is 1 whatever the rule; 204s and errors never reach this function.
 */
export function creditsFor(
  billing: Billing,
  rows: number,
  keptKeys: readonly string[],
  cachedHit: boolean,
): number {
  if (cachedHit) return 1;
  switch (billing) {
    case 'per-row':
      return rows;
    case 'per-1000-rows':
      return Math.max(1, Math.ceil(rows / 1000));
    case 'per-symbol-with-quote':
      return keptKeys.some((k) => QUOTE_KEYS.has(k)) ? rows : 1;
    case 'per-response':
      return 1;
  }
}
