/**
 * What the option endpoints (chain, option quotes) answer beyond the generic contract of `../types.ts`: the
 * records behind the fields, which the backtest face judges field family by field family.
 */
import type { AnswerKnownAt, OptionRecord } from '../options/records.js';
import type { Answer } from '../types.js';

/** An option answer: its fields, and the records behind them in the same order. */
export type OptionAnswer = Answer & {
  /** The records with the known-at instants of every field family and any withheld value. */
  readonly optionRecords: readonly OptionRecord[];
  /**
   * While the records are still to be made, when first read (a dated chain printed from its columns),
   * the bytes of the rows kept to make them, when their source knows them; undefined otherwise. The
   * response cache counts these bytes in the records' place until the records are made.
   */
  readonly heldBytes?: number | undefined;
  /**
   * The records' known-at columns, when the answer was made from columns and they came with it (a current
   * chain): a judge reads them without making the records. Undefined: read the records.
   */
  readonly knownAtColumns?: AnswerKnownAt | undefined;
};

/**
 * Whether an answer is an option answer (it carries its records, as a field or, made when first read,
 * as a getter of its class).
 */
export function isOptionAnswer(answer: Answer): answer is OptionAnswer {
  return 'optionRecords' in answer;
}
