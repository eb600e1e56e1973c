import { describe, expect, it } from 'vitest';
import { jsonArrayBytes, jsonNumberArrayBytes } from '../../src/query/json-array.js';

/** The bytes as the text the tests compare with `JSON.stringify`. */
const jsonArrayText = (values: readonly unknown[]) => jsonArrayBytes(values).bytes.toString('utf8');

/** A seeded generator: the same values at every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 16807) % 2147483647;
    return state / 2147483647;
  };
}

const EDGES: readonly unknown[] = [
  0,
  -0,
  1,
  -1,
  0.01,
  -0.01,
  0.1,
  0.07,
  0.5,
  0.005,
  0.015,
  0.1 + 0.2,
  1.005,
  289.26,
  -69.87,
  1e-7,
  5e-324,
  123456789.12,
  999999999.99,
  1e9 + 0.01,
  1e15 - 1,
  1e15,
  1e21,
  1.7976931348623157e308,
  2 ** 53,
  2 ** 53 + 2,
  1560542400,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  null,
  undefined,
  true,
  false,
  '',
  'SPY190614C00230000',
  'quote " and \\ slash',
  'tab\there',
  'naïve ✓',
  'lone \ud800 surrogate',
  '\u007f delete',
  [1, [2, null]],
  { a: 1 },
  new Date(0),
];

describe('JSON arrays written as bytes', () => {
  it('print every edge value as JSON.stringify does, alone and repeated', () => {
    for (const value of EDGES) {
      for (const values of [[value], [value, value, value], [1, value, value, 'x', value]]) {
        expect(jsonArrayText(values)).toBe(JSON.stringify(values));
      }
    }
    expect(jsonArrayText(EDGES)).toBe(JSON.stringify(EDGES));
    expect(jsonArrayText([])).toBe('[]');
  });

  it('print prices, sizes, instants and their negatives as JSON.stringify does', () => {
    const random = seeded(42);
    const values: unknown[] = [];
    for (let i = 0; i < 20_000; i++) {
      const r = random();
      const sign = random() < 0.2 ? -1 : 1;
      const kind = i % 6;
      if (kind === 0)
        values.push(sign * (Math.round(r * 5_000_000) / 100)); // cents
      else if (kind === 1)
        values.push(sign * (Math.round(r * 50_000_000) / 10_000)); // store prices
      else if (kind === 2)
        values.push(Math.floor(r * 100_000)); // sizes
      else if (kind === 3)
        values.push(1_400_000_000 + Math.floor(r * 400_000_000)); // instants
      else if (kind === 4)
        values.push(sign * r * 10 ** Math.floor(random() * 30 - 10)); // anything
      else values.push(random() < 0.5 ? null : (Math.round(r * 100) / 100) * 3);
    }
    expect(jsonArrayText(values)).toBe(JSON.stringify(values));
  });

  it('print a column of numbers with NaN as null as JSON.stringify prints it', () => {
    const random = seeded(7);
    const numbers = EDGES.filter((v): v is number => typeof v === 'number');
    for (let i = 0; i < 5_000; i++) {
      const r = random();
      numbers.push(
        r < 0.2 ? Number.NaN : r < 0.5 ? Math.round(r * 1e6) / 100 : r < 0.7 ? 1_560_542_400 : r * 1e3,
      );
    }
    const column = Float64Array.from(numbers);
    const { bytes, starts } = jsonNumberArrayBytes(column);
    const expected = numbers.map((n) => (Number.isNaN(n) ? null : n));
    expect(bytes.toString('utf8')).toBe(JSON.stringify(expected));
    expect(starts[numbers.length]).toBe(bytes.length);
    expect(bytes.subarray(starts[3]!, starts[4]! - 1).toString()).toBe(JSON.stringify(expected[3]));
    expect(jsonNumberArrayBytes(new Float64Array(0)).bytes.toString()).toBe('[]');
  });

  it('say where each value starts, one past the closing bracket last', () => {
    const values = ['a"b', null, 1.25, 1.25, true, [1, 2], 'naïve'];
    const { bytes, starts } = jsonArrayBytes(values);
    expect(starts).toHaveLength(values.length + 1);
    expect(starts[values.length]).toBe(bytes.length);
    values.forEach((value, i) => {
      const text = bytes.subarray(starts[i]!, starts[i + 1]! - 1).toString('utf8');
      expect(text).toBe(JSON.stringify(value));
    });
  });

  it('grow past the first guess of their size', () => {
    const long = 'x'.repeat(10_000);
    const values = [long, 'naïve '.repeat(3_000), long, '\u0001'.repeat(5_000), 1.5];
    expect(jsonArrayText(values)).toBe(JSON.stringify(values));
  });

  it('refuse what JSON.stringify refuses', () => {
    expect(() => jsonArrayText([1n])).toThrow(TypeError);
  });
});
