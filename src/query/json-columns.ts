/**
 * Columns whose JSON text is rendered once and kept with them. A session keeps a scope's answer (a whole
 * chain at an as-of) for the next requests; rendering its columns once per `dateformat` and copying the
 * bytes of the rows a request keeps makes a repeated or filtered answer cost a memory copy instead of a
 * `JSON.stringify` of every value (which is most of a large chain's time).
 */
import { jsonArrayBytes, jsonNumberArrayBytes, valueStarts } from './json-array.js';

/** How a field's values are typed; `instant` (epoch seconds) and `date` (YYYY-MM-DD) obey `dateformat`. */
export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'instant' | 'date';

/**
 * The JSON array text of a column (`[v0,v1,…]`): as text until a subset is asked for, then as bytes with
 * where each value starts (the text is let go then: one copy of it is kept, not two).
 */
type RenderedColumn = {
  text: string | undefined;
  bytes: Buffer | undefined;
  starts: Uint32Array | undefined;
};

const COMMA = 0x2c;

/** A column of values whose JSON text is rendered on first use (per `dateformat`) and then reused. */
export class JsonColumn {
  private readonly rendered = new Map<string, RenderedColumn>();
  /** The `dateformat` keys a subset of the column was asked for before it was rendered whole. */
  private readonly pickedOnce = new Set<string>();
  /** A number column's values as numbers and nulls, made when first read. */
  private made: readonly unknown[] | undefined;

  /**
   * `values` and `kind` as in a `Field`, or numbers with NaN for null; never mutated afterwards (the
   * rendered text must stay true).
   */
  constructor(
    private readonly source: readonly unknown[] | Float64Array,
    readonly kind: FieldKind,
  ) {}

  /** The column's values (a number column's NaN as null). */
  get values(): readonly unknown[] {
    const source = this.source;
    if (!(source instanceof Float64Array)) return source;
    if (this.made === undefined) {
      const values = new Array<number | null>(source.length);
      for (let i = 0; i < source.length; i++) values[i] = Number.isNaN(source[i]!) ? null : source[i]!;
      this.made = values;
    }
    return this.made;
  }

  /** How many values it holds. */
  get length(): number {
    return this.source.length;
  }

  /**
   * The JSON array of the given rows (all, in order, when `rows` is null), with `format` giving the
   * printed values of the whole column for a `dateformat` key. The whole column comes as the text it was
   * rendered to: the body is text, and bytes made of it only to be read back as text cost printing a
   * 6,358-row chain's columns 1.2–1.6 ms of its 14–19.
   */
  arrayJson(
    rows: Int32Array | null,
    formatKey: string,
    format: (values: readonly unknown[]) => readonly unknown[],
  ): string | Buffer {
    // Numbers print as they are without a `dateformat` (`formatValues` gives them back unchanged).
    const numbers = formatKey === '' && this.source instanceof Float64Array ? this.source : undefined;
    let column = this.rendered.get(formatKey);
    if (column === undefined && rows !== null && !this.pickedOnce.has(formatKey)) {
      // The first subset asked is printed alone: most answers are asked once (a random session, a page
      // of a chain past the row limit), and rendering the whole column to copy some of its bytes cost
      // several times as much (a 13,000-row chain paged at 10,000: 17 ms of its 40). A second ask
      // renders it whole for the next ones.
      this.pickedOnce.add(formatKey);
      if (numbers !== undefined) {
        const picked = new Float64Array(rows.length);
        for (let i = 0; i < rows.length; i++) picked[i] = numbers[rows[i]!]!;
        return jsonNumberArrayBytes(picked).bytes;
      }
      const picked = new Array<unknown>(rows.length);
      for (let i = 0; i < rows.length; i++) picked[i] = this.values[rows[i]!];
      const column = rendered(format(picked), this.kind);
      return column.text ?? column.bytes!;
    }
    if (column === undefined) {
      if (numbers !== undefined) {
        const { bytes, starts } = jsonNumberArrayBytes(numbers);
        column = { text: undefined, bytes, starts };
      } else column = rendered(format(this.values), this.kind);
      this.rendered.set(formatKey, column);
    }
    if (rows === null) return column.text ?? column.bytes!;
    if (column.bytes === undefined) {
      column.bytes = Buffer.from(column.text!, 'utf8');
      column.text = undefined;
    }
    column.starts ??= valueStarts(column.bytes, this.length);
    return pick(column.bytes, column.starts, rows);
  }
}

/**
 * A column's JSON array: prices written as bytes (`jsonArrayBytes` prints a cent value two to three
 * times as fast as JSON.stringify: 1.8 ms against 3.8 for the seven price columns of a 6,358-row
 * chain), the rest by JSON.stringify, which prints texts, small integers and nulls faster.
 */
function rendered(values: readonly unknown[], kind: FieldKind): RenderedColumn {
  if (kind === 'number' && values.some((v) => typeof v === 'number' && !Number.isInteger(v))) {
    const { bytes, starts } = jsonArrayBytes(values);
    return { text: undefined, bytes, starts };
  }
  return { text: JSON.stringify(values), bytes: undefined, starts: undefined };
}

/** The JSON array of the chosen values, copying runs of consecutive rows at once. */
function pick(bytes: Buffer, starts: Uint32Array, rows: Int32Array): Buffer {
  let size = 2 + Math.max(0, rows.length - 1);
  for (let i = 0; i < rows.length; i++) size += starts[rows[i]! + 1]! - 1 - starts[rows[i]!]!;
  const out = Buffer.allocUnsafe(size);
  out[0] = 0x5b;
  let at = 1;
  let i = 0;
  while (i < rows.length) {
    let j = i;
    while (j + 1 < rows.length && rows[j + 1] === rows[j]! + 1) j++;
    if (i > 0) out[at++] = COMMA;
    at += bytes.copy(out, at, starts[rows[i]!]!, starts[rows[j]! + 1]! - 1);
    i = j + 1;
  }
  out[at] = 0x5d;
  return out;
}

/**
 * A field whose values are its JSON column's: a number column made from a store's columns gives its
 * values as an array only when something reads them (printing JSON reads the column, not the values).
 */
export class ColumnField {
  readonly json: { readonly column: JsonColumn; readonly rows: null };

  constructor(
    readonly key: string,
    readonly human: string,
    readonly kind: FieldKind,
    column: JsonColumn,
  ) {
    this.json = { column, rows: null };
  }

  get values(): readonly unknown[] {
    return this.json.column.values;
  }
}
