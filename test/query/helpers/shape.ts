import type { Answer, EndpointResult } from '../../../src/query/types.js';
import { sharedJson } from '../../helpers/shared-data.js';

/** A JSON body's keys in order, each with the JSON types of its value (arrays: of their elements). */
export type Shape = ReadonlyArray<readonly [key: string, types: string]>;

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** The shape of a JSON body; an array's types are its elements' types, sorted and joined by `|`. */
export function shapeOf(body: Readonly<Record<string, unknown>>): Shape {
  return Object.entries(body).map(([key, value]) => {
    if (!Array.isArray(value)) return [key, jsonType(value)] as const;
    return [key, `array<${[...new Set(value.map(jsonType))].sort().join('|')}>`] as const;
  });
}

/** A documented example body from `spec/examples/` (a test reading one is gated by `withData`). */
export function example(name: string): Record<string, unknown> {
  return sharedJson(`spec/examples/${name}`);
}

/** The body an answer stands for in the default output: `s`, scalars before, arrays, scalars after, raw keys. */
export function render(result: EndpointResult): Record<string, unknown> {
  if (result.kind !== 'ok') throw new Error(`expected an answer, got ${JSON.stringify(result)}`);
  const answer: Answer = result;
  const body: Record<string, unknown> = { s: 'ok' };
  for (const s of answer.scalars ?? []) if (s.position === 'before') body[s.key] = s.value;
  for (const f of answer.fields) body[f.key] = f.values;
  for (const s of answer.scalars ?? []) if (s.position === 'after') body[s.key] = s.value;
  Object.assign(body, answer.rawBody ?? {});
  return body;
}

/** The answer's fields as `{ key: values }`, for whole-table comparisons. */
export function columns(result: EndpointResult): Record<string, readonly unknown[]> {
  if (result.kind !== 'ok') throw new Error(`expected an answer, got ${JSON.stringify(result)}`);
  return Object.fromEntries(result.fields.map((f) => [f.key, f.values]));
}

/**
 * Whether a body has the example's keys in the example's order (`keys` picks a subset of the example's,
 * e.g. when an example has date keys), and each value's JSON types among the example's (null allowed
 * where `nullable` names the key).
 */
export function shapeMismatches(
  body: Readonly<Record<string, unknown>>,
  exampleBody: Readonly<Record<string, unknown>>,
  nullable: readonly string[] = [],
): string[] {
  const problems: string[] = [];
  const got = shapeOf(body);
  const want = new Map(shapeOf(exampleBody));
  const gotKeys = got.map(([key]) => key).join(',');
  const wantKeys = [...want.keys()].join(',');
  if (gotKeys !== wantKeys) problems.push(`keys ${gotKeys} ≠ ${wantKeys}`);
  for (const [key, types] of got) {
    const expected = want.get(key);
    if (expected === undefined) continue;
    const allowed = new Set(expected.replace(/^array<|>$/g, '').split('|'));
    if (nullable.includes(key)) allowed.add('null');
    const isArray = types.startsWith('array<');
    if (isArray !== expected.startsWith('array<')) problems.push(`${key}: ${types} ≠ ${expected}`);
    for (const type of types.replace(/^array<|>$/g, '').split('|')) {
      if (type !== '' && !allowed.has(type)) problems.push(`${key}: ${types} ≠ ${expected}`);
    }
  }
  return problems;
}
