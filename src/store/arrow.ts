/**
 * Arrow ⇄ DuckDB for the store's column types, exact both ways: DATE ⇄ Date32 (DateDay), TIMESTAMPTZ ⇄
 * Timestamp(microsecond, 'UTC'), DECIMAL(p,s) ⇄ Decimal128(p,s) (p ≤ 18), VARCHAR ⇄ Utf8, BOOLEAN ⇄ Bool,
 * INTEGER ⇄ Int32, BIGINT ⇄ Int64, DOUBLE ⇄ Float64. Values cross as integers (days, microseconds, unscaled
 * decimals), never through JS dates or floats.
 */
import {
  Bool,
  type Data,
  type DataType,
  DateDay,
  DateUnit,
  Decimal,
  Field,
  Float64,
  Int32,
  Int64,
  makeData,
  makeVector,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Timestamp,
  TimeUnit,
  Type,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { StoreError } from '../errors.js';
import { quoteIdentifier, type SqlParams, type SqlSession } from './sql.js';

const MAX_DECIMAL_PRECISION = 18;

/** The DuckDB type name as DESCRIBE spells it (`TIMESTAMPTZ` → `TIMESTAMP WITH TIME ZONE`). */
export function normalizeDuckdbType(type: string): string {
  const upper = type.trim().toUpperCase().replace(/\s+/g, ' ');
  if (upper === 'TIMESTAMPTZ') return 'TIMESTAMP WITH TIME ZONE';
  if (upper === 'INT' || upper === 'INT4') return 'INTEGER';
  if (upper === 'INT8' || upper === 'LONG') return 'BIGINT';
  if (upper === 'FLOAT8') return 'DOUBLE';
  if (upper === 'STRING' || upper === 'TEXT') return 'VARCHAR';
  return upper.replace(/^DECIMAL\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$/, 'DECIMAL($1,$2)');
}

function decimalParts(type: string): { precision: number; scale: number } | undefined {
  const match = /^DECIMAL\((\d+),(\d+)\)$/.exec(type);
  return match === null ? undefined : { precision: Number(match[1]), scale: Number(match[2]) };
}

/** The Arrow type a DuckDB column type is written as; StoreError for a type the store never uses. */
export function arrowTypeFor(duckdbType: string): DataType {
  const type = normalizeDuckdbType(duckdbType);
  switch (type) {
    case 'VARCHAR':
      return new Utf8();
    case 'BOOLEAN':
      return new Bool();
    case 'INTEGER':
      return new Int32();
    case 'BIGINT':
      return new Int64();
    case 'DOUBLE':
      return new Float64();
    case 'DATE':
      return new DateDay();
    case 'TIMESTAMP WITH TIME ZONE':
      return new Timestamp(TimeUnit.MICROSECOND, 'UTC');
  }
  const decimal = decimalParts(type);
  if (decimal !== undefined && decimal.precision <= MAX_DECIMAL_PRECISION) {
    return new Decimal(decimal.scale, decimal.precision, 128);
  }
  throw new StoreError(`no Arrow type for DuckDB type ${duckdbType}`);
}

/**
 * The DuckDB type an Arrow column is read as, or undefined when the store cannot read it exactly. Also
 * accepted: LargeUtf8 and dictionary-encoded strings, Date64, any timestamp unit with a time zone, and
 * 256-bit decimals.
 */
export function duckdbTypeOf(type: DataType): string | undefined {
  switch (type.typeId) {
    case Type.Utf8:
    case Type.LargeUtf8:
      return 'VARCHAR';
    case Type.Dictionary: {
      const valueType = (type as unknown as { dictionary: DataType }).dictionary;
      return valueType.typeId === Type.Utf8 || valueType.typeId === Type.LargeUtf8 ? 'VARCHAR' : undefined;
    }
    case Type.Bool:
      return 'BOOLEAN';
    case Type.Int: {
      const int = type as unknown as { bitWidth: number; isSigned: boolean };
      if (!int.isSigned) return undefined;
      return int.bitWidth === 64 ? 'BIGINT' : int.bitWidth === 32 ? 'INTEGER' : undefined;
    }
    case Type.Float:
      return (type as unknown as { precision: number }).precision === 2 ? 'DOUBLE' : undefined;
    case Type.Date:
      return 'DATE';
    case Type.Timestamp: {
      const timezone = (type as Timestamp).timezone;
      return timezone === null || timezone === undefined || timezone === ''
        ? 'TIMESTAMP'
        : 'TIMESTAMP WITH TIME ZONE';
    }
    case Type.Decimal: {
      const decimal = type as Decimal;
      return decimal.precision <= MAX_DECIMAL_PRECISION
        ? `DECIMAL(${decimal.precision},${decimal.scale})`
        : undefined;
    }
    default:
      return undefined;
  }
}

/** A describe-like list of a query's columns (`DESCRIBE` names and types). */
export async function describeQuery(
  sql: SqlSession,
  query: string,
  params?: SqlParams,
): Promise<{ name: string; type: string }[]> {
  const rows = await sql.all<{ column_name: string; column_type: string }>(`DESCRIBE ${query}`, params);
  return rows.map((row) => ({ name: row.column_name, type: normalizeDuckdbType(row.column_type) }));
}

/** SQL that carries a column across as an integer where its type needs one (days, microseconds, unscaled). */
function wireOut(name: string, type: string): string {
  const column = quoteIdentifier(name);
  if (type === 'DATE') return `CAST(${column} - DATE '1970-01-01' AS INTEGER) AS ${column}`;
  if (type === 'TIMESTAMP WITH TIME ZONE') return `epoch_us(${column}) AS ${column}`;
  const decimal = decimalParts(type);
  if (decimal !== undefined) return `CAST(${column} * ${10 ** decimal.scale} AS BIGINT) AS ${column}`;
  return column;
}

function validity(values: ArrayLike<unknown>): { nullBitmap: Uint8Array | undefined; nullCount: number } {
  const bitmap = new Uint8Array(Math.ceil(values.length / 8));
  let nullCount = 0;
  for (let i = 0; i < values.length; i++) {
    if (values[i] === null || values[i] === undefined) nullCount++;
    else bitmap[i >> 3]! |= 1 << (i & 7);
  }
  return { nullBitmap: nullCount === 0 ? undefined : bitmap, nullCount };
}

function columnData(type: DataType, values: readonly unknown[]): Data {
  const length = values.length;
  switch (type.typeId) {
    case Type.Utf8:
    case Type.Bool:
      return vectorFromArray(values, type).data[0]!;
  }
  const { nullBitmap, nullCount } = validity(values);
  const base = { type, length, nullCount, ...(nullBitmap === undefined ? {} : { nullBitmap }) };
  switch (type.typeId) {
    case Type.Int:
    case Type.Date:
      if ((type as unknown as { bitWidth?: number }).bitWidth === 64) {
        return makeData({
          ...base,
          data: BigInt64Array.from(values, (v) => BigInt((v as number | bigint | null) ?? 0)),
        } as never);
      }
      return makeData({ ...base, data: Int32Array.from(values, (v) => Number(v ?? 0)) } as never);
    case Type.Float:
      return makeData({ ...base, data: Float64Array.from(values, (v) => Number(v ?? 0)) } as never);
    case Type.Timestamp:
      return makeData({
        ...base,
        data: BigInt64Array.from(values, (v) => BigInt((v as number | bigint | null) ?? 0)),
      } as never);
    case Type.Decimal: {
      const words = new BigInt64Array(length * 2);
      for (let i = 0; i < length; i++) {
        const unscaled = BigInt((values[i] as number | bigint | null) ?? 0);
        words[2 * i] = unscaled;
        words[2 * i + 1] = unscaled < 0n ? -1n : 0n;
      }
      return makeData({ ...base, data: new Uint32Array(words.buffer) } as never);
    }
  }
  throw new StoreError(`no Arrow writer for ${String(type)}`);
}

/** Runs a query and returns its rows as an Arrow table with the exact types of the module comment. */
export async function queryArrow(sql: SqlSession, query: string, params?: SqlParams): Promise<Table> {
  const columns = await describeQuery(sql, query, params);
  const types = columns.map((column) => arrowTypeFor(column.type));
  const wire = `SELECT ${columns.map((column) => wireOut(column.name, column.type)).join(', ')} FROM (${query})`;
  const result = await sql.columns(wire, params);
  const length = result.columns[0]?.length ?? 0;
  const fields = columns.map((column, i) => new Field(column.name, types[i]!, true));
  const children = columns.map((_, i) => columnData(types[i]!, result.columns[i] ?? []));
  const schema = new Schema(fields);
  const batch = new RecordBatch(
    schema,
    makeData({ type: new Struct(fields), length, nullCount: 0, children }),
  );
  return new Table(schema, [batch]);
}

function isValid(data: Data, index: number): boolean {
  return data.nullCount === 0 || data.getValid(index);
}

const MICROS_PER: Record<number, bigint> = {
  [TimeUnit.SECOND]: 1_000_000n,
  [TimeUnit.MILLISECOND]: 1_000n,
  [TimeUnit.MICROSECOND]: 1n,
};

/** The values of one Arrow chunk in their wire form for DuckDB (see `wireOut`). */
function wireIn(data: Data): ArrayLike<unknown> {
  const { type, length } = data;
  const out: unknown[] = new Array(length);
  switch (type.typeId) {
    case Type.Date: {
      const values = data.values as Int32Array | BigInt64Array;
      const days = (type as DateDay).unit === DateUnit.DAY;
      for (let i = 0; i < length; i++) {
        if (!isValid(data, i)) out[i] = null;
        else out[i] = days ? values[i] : Math.floor(Number(values[i]) / 86_400_000);
      }
      return out;
    }
    case Type.Timestamp: {
      const values = data.values as BigInt64Array;
      const unit = (type as Timestamp).unit;
      for (let i = 0; i < length; i++) {
        if (!isValid(data, i)) out[i] = null;
        else if (unit === TimeUnit.NANOSECOND) out[i] = values[i]! / 1000n;
        else out[i] = values[i]! * MICROS_PER[unit]!;
      }
      return out;
    }
    case Type.Decimal: {
      const values = data.values as Uint32Array;
      const stride = data.stride;
      for (let i = 0; i < length; i++) {
        if (!isValid(data, i)) {
          out[i] = null;
          continue;
        }
        const at = i * stride;
        const low = BigInt.asIntN(64, (BigInt(values[at + 1]!) << 32n) | BigInt(values[at]!));
        const extension = low < 0n ? 0xffff_ffff : 0;
        for (let w = 2; w < stride; w++) {
          if (values[at + w] !== extension) throw new StoreError('a decimal value does not fit in 18 digits');
        }
        out[i] = low;
      }
      return out;
    }
    default:
      return Array.from(makeVector(data) as Iterable<unknown>);
  }
}

function wireType(type: string): string {
  if (type === 'DATE') return 'INTEGER';
  if (type === 'TIMESTAMP WITH TIME ZONE' || type === 'TIMESTAMP' || type.startsWith('DECIMAL('))
    return 'BIGINT';
  return type;
}

function wireBack(name: string, type: string): string {
  const column = quoteIdentifier(name);
  if (type === 'DATE') return `DATE '1970-01-01' + ${column} AS ${column}`;
  if (type === 'TIMESTAMP WITH TIME ZONE') return `make_timestamptz(${column}) AS ${column}`;
  if (type === 'TIMESTAMP') return `make_timestamp(${column}) AS ${column}`;
  const decimal = decimalParts(type);
  if (decimal !== undefined) {
    const unit = decimal.scale === 0 ? '1' : `0.${'0'.repeat(decimal.scale - 1)}1`;
    return `CAST(CAST(${column} AS DECIMAL(18,0)) * ${unit} AS ${type}) AS ${column}`;
  }
  return column;
}

/**
 * Creates temp table `name` with the Arrow table's columns (types by `duckdbTypeOf`) and loads its rows
 * exactly. StoreError when a column has a type the store cannot read.
 */
export async function arrowToTempTable(sql: SqlSession, table: Table, name: string): Promise<void> {
  const columns = table.schema.fields.map((field) => {
    const type = duckdbTypeOf(field.type);
    if (type === undefined)
      throw new StoreError(
        `column "${field.name}" has Arrow type ${String(field.type)}, which the store cannot read`,
      );
    return { name: field.name, type };
  });
  const wire = `${name}_wire`;
  await sql.run(
    `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(wire)} (${columns.map((c) => `${quoteIdentifier(c.name)} ${wireType(c.type)}`).join(', ')})`,
  );
  try {
    for (const batch of table.batches) {
      if (batch.numRows === 0) continue;
      await sql.append(
        wire,
        batch.data.children.map((child) => wireIn(child)),
      );
    }
    await sql.run(
      `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(name)} AS SELECT ${columns.map((c) => wireBack(c.name, c.type)).join(', ')} FROM ${quoteIdentifier(wire)}`,
    );
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(wire)}`);
  }
}
