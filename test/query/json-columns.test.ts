import { describe, expect, it } from 'vitest';
import { JsonColumn } from '../../src/query/json-columns.js';
import type { Answer, Field, FieldKind } from '../../src/query/types.js';
import { keep, type OutputOptions, parseOutputOptions, renderAnswer } from '../../src/service/format.js';

const COLUMNS: readonly { key: string; human: string; kind: FieldKind; values: unknown[] }[] = [
  {
    key: 'optionSymbol',
    human: 'Symbol',
    kind: 'string',
    values: ['AAPL250117C00150000', 'a,b', 'quote " and \\ slash', 'naïve ✓', '[not, an, array]', ''],
  },
  { key: 'expiration', human: 'Expiration Date', kind: 'instant', values: [1737147600, null, 0, 1, 2, 3] },
  {
    key: 'firstTraded',
    human: 'First Traded',
    kind: 'date',
    values: ['2024-01-02', null, '2019-06-14', '2020-02-29', '2000-01-03', '2035-12-31'],
  },
  { key: 'bid', human: 'Bid', kind: 'number', values: [1.25, null, 0.1 + 0.2, -0, 1e21, Number.NaN] },
  { key: 'inTheMoney', human: 'ITM', kind: 'boolean', values: [true, false, null, true, false, true] },
  { key: 'nested', human: 'Nested', kind: 'number', values: [[1, 2], [], [3], null, [4, [5, 6]], [7]] },
];

/** The same answer twice: with plain fields, and with fields printed from kept column texts. */
function answers(rows: Int32Array | null): { plain: Answer; kept: Answer } {
  const pickRows = (values: unknown[]) => (rows === null ? values : Array.from(rows, (i) => values[i]));
  const plain: Field[] = COLUMNS.map((c) => ({ ...c, values: pickRows(c.values) }));
  const kept: Field[] = COLUMNS.map((c) => ({
    ...c,
    values: pickRows(c.values),
    json: { column: new JsonColumn(c.values, c.kind), rows },
  }));
  const base = {
    kind: 'ok' as const,
    billing: 'per-row' as const,
    dataAsOfSeconds: null,
    scalars: [
      {
        key: 'updated',
        human: 'Updated',
        kind: 'instant' as const,
        value: 1737147600,
        position: 'after' as const,
      },
    ],
  };
  return { plain: { ...base, fields: plain }, kept: { ...base, fields: kept } };
}

function rendered(answer: Answer, options: OutputOptions): string {
  return renderAnswer(answer, keep(answer, options).fields, options).body;
}

describe('answers printed from kept column texts', () => {
  const queries = [
    {},
    { dateformat: 'timestamp' },
    { dateformat: 'spreadsheet' },
    { human: 'true' },
    { columns: 'bid,optionSymbol' },
    { columns: 'bid,Bid,bid,updated' },
    { limit: '2', offset: '1' },
    { offset: '99' },
    { limit: '0' },
  ];
  const subsets = [
    null,
    Int32Array.of(0, 1, 2, 3, 4, 5),
    Int32Array.of(5, 0, 1, 3),
    Int32Array.of(2),
    Int32Array.of(),
  ];
  for (const rows of subsets) {
    for (const query of queries) {
      it(`rows ${rows === null ? 'all' : `[${[...rows]}]`}, ${JSON.stringify(query)}: same text as JSON.stringify`, () => {
        const options = parseOutputOptions(query);
        const { plain, kept } = answers(rows);
        const expected = rendered(plain, options);
        expect(rendered(kept, options)).toBe(expected);
        // A second request at another dateformat and the first again reuse the kept texts correctly.
        const other = parseOutputOptions({ ...query, dateformat: 'unix' });
        expect(rendered(kept, other)).toBe(rendered(plain, other));
        expect(rendered(kept, options)).toBe(expected);
        // The reference is JSON.stringify's own text: no spaces, no `1.0`, keys in the answer's order.
        expect(JSON.stringify(JSON.parse(expected))).toBe(expected);
      });
    }
  }

  it('prints exactly the rows asked for, in their order', () => {
    const column = new JsonColumn(['a', 'b,c', 'd'], 'string');
    const text = (rows: Int32Array | null) => column.arrayJson(rows, '', (v) => v).toString();
    expect([text(null), text(Int32Array.of(2, 0)), text(Int32Array.of(1, 2)), text(Int32Array.of())]).toEqual(
      ['["a","b,c","d"]', '["d","a"]', '["b,c","d"]', '[]'],
    );
  });

  it('prints the whole column the same before and after a subset is asked, beyond ASCII too', () => {
    const column = new JsonColumn(['é', 'b"c', '→', null], 'string');
    const text = (rows: Int32Array | null) => column.arrayJson(rows, '', (v) => v).toString();
    const whole = JSON.stringify(['é', 'b"c', '→', null]);
    expect(text(null)).toBe(whole);
    expect(text(Int32Array.of(2, 0, 3))).toBe(JSON.stringify(['→', 'é', null]));
    expect(text(null)).toBe(whole);
    expect(text(Int32Array.of(1))).toBe(JSON.stringify(['b"c']));
  });
});
