/**
 * The known-at table (`pit/known-at.ts`) and the option fields (`query/options/columns.ts`) name the same
 * fields: a field in one and not the other would never be judged, or judged by no family. `columns.ts`
 * types the table over the fields (a missing field is a type error there); the type assertion here makes
 * `npm run typecheck` refuse an extra one too, and the run checks the order the docs list them in. Then
 * the family columns and their latest instants (`knownAtByFamily`), and a judge given those instants.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { knownAtByFamily, knownAtOfColumns, OPTION_FIELD_KNOWN_AT } from '../../src/pit/known-at.js';
import { judge } from '../../src/pit/policy.js';
import { OPTION_FIELDS, type OptionField } from '../../src/query/options/columns.js';

describe('OPTION_FIELD_KNOWN_AT', () => {
  it('gives a family to exactly the option fields, in the service order', () => {
    expectTypeOf<keyof typeof OPTION_FIELD_KNOWN_AT>().toEqualTypeOf<OptionField>();
    expect(Object.keys(OPTION_FIELD_KNOWN_AT)).toEqual(Object.keys(OPTION_FIELDS));
  });
});

describe('knownAtByFamily', () => {
  it('gives each family its column and its latest instant, nulls left out', () => {
    const families = knownAtByFamily([
      { quoteTime: 300, volumeTime: null, oiPublishedAt: 100, listedAt: 50 },
      { quoteTime: 200, volumeTime: 400, oiPublishedAt: null, listedAt: 60 },
      { quoteTime: 250, volumeTime: null, oiPublishedAt: null, listedAt: 40 },
    ]);
    expect(families.quote).toEqual([300, 200, 250]);
    expect(families.volume).toEqual([null, 400, null]);
    expect(families.latest).toEqual({ quote: 300, volume: 400, openInterest: 100, listing: 60 });
    expect(knownAtByFamily([]).latest).toEqual({
      quote: null,
      volume: null,
      openInterest: null,
      listing: null,
    });
  });

  it('gives the same from columns made one per family (knownAtOfColumns)', () => {
    const rows = [
      { quoteTime: 300, volumeTime: null, oiPublishedAt: 100, listedAt: 50 },
      { quoteTime: 200, volumeTime: 400, oiPublishedAt: null, listedAt: 60 },
    ];
    const columns = {
      quote: [300, 200],
      volume: [null, 400],
      openInterest: [100, null],
      listing: [50, 60],
    };
    expect(knownAtOfColumns(columns)).toEqual(knownAtByFamily(rows));
    expect(knownAtOfColumns({ quote: [], volume: [null], openInterest: [], listing: [] }).latest).toEqual({
      quote: null,
      volume: null,
      openInterest: null,
      listing: null,
    });
  });
});

describe('judge with a column latest instant', () => {
  const T = 1_000;
  it('keeps a column known by T whole and judges the rest value by value', () => {
    const verdict = judge(
      T,
      'mask',
      [
        { field: 'bid', values: [1, 2], knownAt: [900, 1_000], latest: 1_000 },
        { field: 'volume', values: [5, 6], knownAt: [900, 1_200], latest: 1_200 },
        { field: 'openInterest', values: [null, null], knownAt: [null, null], latest: null },
      ],
      ['A', 'B'],
    );
    expect(verdict.columns.get('bid')).toEqual([1, 2]);
    expect(verdict.columns.get('volume')).toEqual([5, null]);
    expect(verdict.columns.get('openInterest')).toEqual([null, null]);
    expect(verdict.lookAhead).toEqual([{ field: 'volume', knownAt: 1_200, optionSymbol: 'B', count: 1 }]);
  });
});
