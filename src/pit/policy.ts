/**
 * Look-ahead policies of the backtest face (semantics §4): what happens to a value asked for at decision
 * instant T that was not yet known at T. `strict` refuses the request, `mask` nulls the value and lists
 * it, `flag` keeps it and lists it.
 */
import { LookAheadError, UsageError } from '../errors.js';

/** What the backtest face does with values not known at its decision instant. */
export type LookAheadPolicy = 'strict' | 'mask' | 'flag';

/** A field whose value was not known at T, with its known-at instant (the first such row's). */
export type LookAheadField = {
  readonly field: string;
  readonly knownAt: number;
  /** The contract of the first such row, for option answers. */
  readonly optionSymbol?: string;
  /** How many values of the field were not known at T. */
  readonly count: number;
};

/** One column to judge: its values and, per value, the instant it became known (null: no value). */
export type JudgedColumn = {
  readonly field: string;
  readonly values: readonly unknown[];
  readonly knownAt: ArrayLike<number | null>;
  /**
   * The latest of `knownAt`, when the caller knows it: a column known by T is then kept without reading
   * its values (a minute loop's answers are all known by their T, a few hundred values to each field).
   */
  readonly latest?: number | null;
};

/** The verdict on an answer: its columns after the policy, and what was not known at T. */
export type Verdict = {
  readonly columns: ReadonlyMap<string, readonly unknown[]>;
  readonly lookAhead: readonly LookAheadField[];
};

/** Parses a policy name; anything else is the caller's `UsageError` (exit 2 on the command line). */
export function parsePolicy(value: unknown): LookAheadPolicy {
  if (value === undefined) return 'strict';
  if (value === 'strict' || value === 'mask' || value === 'flag') return value;
  throw new UsageError(`Unknown look-ahead policy ${JSON.stringify(value)}: use strict, mask or flag.`);
}

/**
 * Judges columns at decision instant T under a policy. `strict` throws `LookAheadError` naming every
 * field with a value known after T; `mask` returns those values as null; `flag` returns them unchanged.
 * A value that is null is never look-ahead. `symbols` names the rows for the error and the listing.
 */
export function judge(
  asOfSeconds: number,
  policy: LookAheadPolicy,
  columns: readonly JudgedColumn[],
  symbols?: readonly string[],
): Verdict {
  const lookAhead: LookAheadField[] = [];
  const out = new Map<string, readonly unknown[]>();
  for (const column of columns) {
    if (column.latest !== undefined && (column.latest === null || column.latest <= asOfSeconds)) {
      out.set(column.field, column.values);
      continue;
    }
    let first = -1;
    let count = 0;
    let masked: unknown[] | undefined;
    for (let i = 0; i < column.values.length; i++) {
      const knownAt = column.knownAt[i];
      if (knownAt === null || knownAt === undefined || knownAt <= asOfSeconds) continue;
      if (column.values[i] === null) continue;
      if (first < 0) first = i;
      count++;
      if (policy === 'mask') {
        masked ??= column.values.slice();
        masked[i] = null;
      }
    }
    out.set(column.field, masked ?? column.values);
    if (first >= 0) {
      const symbol = symbols?.[first];
      lookAhead.push({
        field: column.field,
        knownAt: column.knownAt[first] as number,
        ...(symbol === undefined ? {} : { optionSymbol: symbol }),
        count,
      });
    }
  }
  if (policy === 'strict' && lookAhead.length > 0) throw new LookAheadError(asOfSeconds, lookAhead);
  return { columns: out, lookAhead };
}
