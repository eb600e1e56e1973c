/** The option row's output columns: keys, human keys and kinds in the service's order, and their values. */
import { type KnownAtFamily, OPTION_FIELD_KNOWN_AT } from '../../pit/known-at.js';
import { ColumnField, JsonColumn } from '../json-columns.js';
import type { Field, FieldKind } from '../types.js';
import type { OptionRecord, OptionValueColumns, OptionValues } from './records.js';

/**
 * Every field of the service's option row, in the service's order, with its human key (api-reference §7)
 * and kind: the one list of option fields. `satisfies` makes a field of {@link OptionValues} missing here,
 * or one here that is not a field, a type error.
 */
export const OPTION_FIELDS = {
  optionSymbol: { human: 'Symbol', kind: 'string' },
  underlying: { human: 'Underlying', kind: 'string' },
  expiration: { human: 'Expiration Date', kind: 'instant' },
  side: { human: 'Option Side', kind: 'string' },
  strike: { human: 'Strike', kind: 'number' },
  firstTraded: { human: 'First Traded', kind: 'instant' },
  dte: { human: 'Days To Expiration', kind: 'integer' },
  updated: { human: 'Date', kind: 'instant' },
  bid: { human: 'Bid', kind: 'number' },
  bidSize: { human: 'Bid Size', kind: 'integer' },
  mid: { human: 'Mid', kind: 'number' },
  ask: { human: 'Ask', kind: 'number' },
  askSize: { human: 'Ask Size', kind: 'integer' },
  last: { human: 'Last', kind: 'number' },
  openInterest: { human: 'Open Interest', kind: 'integer' },
  volume: { human: 'Volume', kind: 'integer' },
  inTheMoney: { human: 'In The Money', kind: 'boolean' },
  intrinsicValue: { human: 'Intrinsic Value', kind: 'number' },
  extrinsicValue: { human: 'Extrinsic Value', kind: 'number' },
  underlyingPrice: { human: 'Underlying Price', kind: 'number' },
  iv: { human: 'IV', kind: 'number' },
  delta: { human: 'Delta', kind: 'number' },
  gamma: { human: 'Gamma', kind: 'number' },
  theta: { human: 'Theta', kind: 'number' },
  vega: { human: 'Vega', kind: 'number' },
} as const satisfies Record<keyof OptionValues, { human: string; kind: FieldKind }>;

/** A field of the service's option row. */
export type OptionField = keyof typeof OPTION_FIELDS;

/**
 * Per option field, the known-at family its value's instant comes from (`pit/known-at.ts`): typed over
 * {@link OptionField}, so a field missing from the known-at table is a type error.
 */
export const OPTION_KNOWN_AT: Readonly<Record<OptionField, KnownAtFamily>> = OPTION_FIELD_KNOWN_AT;

/** Keys, human keys and kinds of the option row, in the service's order. */
export const OPTION_COLUMNS: readonly { key: OptionField; human: string; kind: FieldKind }[] = (
  Object.keys(OPTION_FIELDS) as OptionField[]
).map((key) => ({ key, ...OPTION_FIELDS[key] }));

/**
 * Every option field of the records as columns, in `OPTION_COLUMNS` order, in one pass: a function made
 * once from the field table whose property reads are written out (`records.map((r) => r[key])` per field
 * reads through one call site for 25 keys, which V8 cannot specialise), into packed arrays (which
 * JSON.stringify writes faster than preallocated, holey ones). The keys are the table's own identifiers.
 */
const collectColumns = new Function(
  'records',
  `const ${OPTION_COLUMNS.map((_, i) => `c${i} = []`).join(', ')};
   for (const r of records) { ${OPTION_COLUMNS.map(({ key }, i) => `c${i}.push(r.${key});`).join(' ')} }
   return [${OPTION_COLUMNS.map((_, i) => `c${i}`).join(', ')}];`,
) as (records: readonly OptionRecord[]) => unknown[][];

/** The option row fields of the records, in the service's key order. */
export function optionFields(records: readonly OptionRecord[]): Field[] {
  // A chain can hold ten thousand rows of 25 fields; a minute loop makes one of 150 rows each minute.
  const values = collectColumns(records);
  return OPTION_COLUMNS.map(({ key, human, kind }, i) => ({ key, human, kind, values: values[i]! }));
}

/**
 * The option row fields of columns made without records (`datedValueColumns`), in the service's key
 * order, each printed from a JSON column (`ColumnField`): fields given the same values and kind (a dated
 * answer's five Greeks, all null) share one, printed once.
 */
export function fieldsOfColumns(columns: OptionValueColumns): Field[] {
  const shared = new Map<unknown, JsonColumn>();
  return OPTION_COLUMNS.map(({ key, human, kind }) => {
    const values = columns[key];
    let column = shared.get(values);
    if (column === undefined || column.kind !== kind) {
      column = new JsonColumn(values, kind);
      shared.set(values, column);
    }
    return new ColumnField(key, human, kind, column);
  });
}

/** The latest known-at instant of the records' values, or null for none. */
export function dataAsOf(records: readonly OptionRecord[]): number | null {
  let latest: number | null = null;
  for (const record of records) if (latest === null || record.knownAt > latest) latest = record.knownAt;
  return latest;
}
