/**
 * The check the differential tests make of an answer printed from its rows' columns, without records
 * (`ScopeAnswer.columnsOf`): its fields, its latest known-at instant and, for a current answer, its
 * known-at columns are those of the records the query's rows make.
 */
import { expect } from 'vitest';
import type { AsOf } from '../../../src/pit/as-of.js';
import { knownAtByFamily } from '../../../src/pit/known-at.js';
import { dataAsOf, optionFields } from '../../../src/query/options/columns.js';
import type { OptionRecord } from '../../../src/query/options/records.js';
import { assemble } from '../../../src/query/options/scope-answer.js';
import type { RowSource } from '../../../src/query/options/snapshot-sql.js';

/**
 * Checks that `rows`' answer at `asOf`, printed from columns for all its groups and for its first group
 * alone, says what `expected` (the query's records, in the service's order) says.
 */
export function expectColumnsAsRecords(
  asOf: AsOf,
  rows: RowSource,
  expected: readonly OptionRecord[],
  where: string,
): void {
  const answer = assemble(asOf, rows);
  const firstGroup = answer.groups[0];
  const choices = firstGroup === undefined ? [answer.groups] : [answer.groups, [firstGroup]];
  for (const groups of choices) {
    const chosen = new Set(groups);
    const made = answer.columnsOf(chosen);
    const label = `${where}, ${groups.length} of ${answer.groups.length} groups`;
    expect(made, label).toBeDefined();
    const records =
      groups.length === answer.groups.length
        ? expected
        : expected.filter((record) => record.group === `${firstGroup!.root}:${firstGroup!.expiration}`);
    expect(made!.rows, label).toBe(records.length);
    expect(made!.dataAsOf, label).toBe(dataAsOf(records));
    expect(
      made!.fields.map((f) => [f.key, f.kind, f.values]),
      label,
    ).toEqual(optionFields(records).map((f) => [f.key, f.kind, f.values]));
    if (asOf.kind === 'current') {
      expect(made!.known?.families, label).toEqual(knownAtByFamily(records));
      expect(made!.known?.volumeOrWithheld, label).toEqual(
        records.map((record) => record.volume ?? record.withheldVolume),
      );
    }
  }
}
