/**
 * The known-at table (`pit/known-at.ts`) and the option fields (`query/options/columns.ts`) name the same
 * fields: a field in one and not the other would never be judged, or judged by no family. `columns.ts`
 * types the table over the fields (a missing field is a type error there); the type assertion here makes
 * `npm run typecheck` refuse an extra one too, and the run checks the order the docs list them in.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { OPTION_FIELD_KNOWN_AT } from '../../src/pit/known-at.js';
import { OPTION_FIELDS, type OptionField } from '../../src/query/options/columns.js';

describe('OPTION_FIELD_KNOWN_AT', () => {
  it('gives a family to exactly the option fields, in the service order', () => {
    expectTypeOf<keyof typeof OPTION_FIELD_KNOWN_AT>().toEqualTypeOf<OptionField>();
    expect(Object.keys(OPTION_FIELD_KNOWN_AT)).toEqual(Object.keys(OPTION_FIELDS));
  });
});
