/** The point-in-time model: the as-of of a question, when each field became known, look-ahead policies. */
export {
  type AsOf,
  asOfKey,
  asOfSession,
  currentAsOf,
  DELAY_SECONDS,
  type FreshMode,
  sessionEndSeconds,
} from './as-of.js';
export {
  type KnownAtByFamily,
  type KnownAtFamily,
  knownAtByFamily,
  OPTION_FIELD_KNOWN_AT,
  type OptionKnownAt,
} from './known-at.js';
export {
  type JudgedColumn,
  judge,
  type LookAheadField,
  type LookAheadPolicy,
  parsePolicy,
  type Verdict,
} from './policy.js';
