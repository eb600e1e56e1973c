/**
 * Writing a session column file (`session-columns.ts`) from a Parquet file the writer has just written:
 * its rows read back in ranges of whole sessions, each session's columns kept as 32-bit digits where every
 * value is one at some scale, as doubles where not.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fsyncFile } from './parquet.js';
import {
  ALL_NULL,
  DOUBLES,
  NULL_DIGITS,
  ONE_VALUE,
  POWERS,
  pad8,
  SESSION_COLUMN_READS,
  SESSION_COLUMNS_FORMAT,
  SESSION_COLUMNS_MAGIC,
  type SessionColumnsHeader,
  type SessionColumnsTable,
  sessionColumnsPath,
} from './session-columns.js';
import { quoteLiteral, type SqlSession } from './sql.js';

/**
 * The scratch name a derived file (a session or contract column file) is written under before it is
 * renamed: a writer's (`.tmp-`), which garbage collection removes when a crash left one behind.
 */
export function sessionColumnsTemp(target: string): string {
  return path.join(path.dirname(target), `.tmp-${process.pid}-${path.basename(target)}`);
}

/**
 * Whether each session's rows of the Parquet file `parquetAbs` of `table` are in option symbol order: for
 * a file of an earlier writer, whose order nothing vouches for (one statement over its rows in file order).
 */
export async function rowsInSymbolOrder(
  sql: SqlSession,
  table: SessionColumnsTable,
  parquetAbs: string,
): Promise<boolean> {
  const { session } = SESSION_COLUMN_READS[table];
  const disordered = await sql.value<number | bigint>(
    `SELECT count(*) FROM (
       SELECT "${session}" AS day, option_symbol AS symbol,
              lag("${session}") OVER rows_before AS day_before, lag(option_symbol) OVER rows_before AS symbol_before
       FROM read_parquet(${quoteLiteral(parquetAbs)}, file_row_number = true)
       WINDOW rows_before AS (ORDER BY file_row_number))
     WHERE day = day_before AND symbol < symbol_before`,
  );
  return Number(disordered) === 0;
}

/** Rows one statement reads at most (whole sessions; a larger session alone): bounds the writer's memory. */
const READ_ROWS = 262_144;

/**
 * Writes the session column file of the Parquet file `parquetAbs` of `table` (whose content hash is
 * `sha256`), durably, and returns its absolute path; or nothing when the file's rows are not in session
 * order (never, for a file the writer wrote).
 */
export async function writeSessionColumns(
  sql: SqlSession,
  table: SessionColumnsTable,
  parquetAbs: string,
  sha256: string,
  /** Whether the caller wrote the Parquet file sorted by session, then option symbol (`TABLE_SORT`). */
  symbolOrder: boolean,
): Promise<string | undefined> {
  const { session, columns } = SESSION_COLUMN_READS[table];
  const reads = columns as Readonly<Record<string, string>>;
  const names = Object.keys(reads);
  const keyColumn = names.indexOf('key');
  const source = `read_parquet(${quoteLiteral(parquetAbs)})`;
  const day = `CAST("${session}" - DATE '1970-01-01' AS INTEGER)`;
  const counts = await sql.all<{ day: number; rows: number }>(
    `SELECT ${day} AS day, CAST(count(*) AS INTEGER) AS rows FROM ${source} GROUP BY ALL ORDER BY day`,
  );
  const target = sessionColumnsPath(parquetAbs);
  const temp = sessionColumnsTemp(target);
  const handle = await fs.open(temp, 'w');
  const hash = createHash('sha256');
  const sessions: SessionColumnsHeader['sessions'][number][] = [];
  const keySessions = new KeySessionsBuilder(counts.length);
  let written = 0;
  let inOrder = true;
  const write = async (bytes: Uint8Array) => {
    await handle.write(bytes, 0, bytes.length, written);
    written += bytes.length;
  };
  /** Writes data bytes: the trailer records their hash. */
  const put = (bytes: Uint8Array) => {
    hash.update(bytes);
    return write(bytes);
  };
  try {
    await put(SESSION_COLUMNS_MAGIC);
    let at = 0;
    while (at < counts.length && inOrder) {
      let end = at;
      let rows = 0;
      while (end < counts.length && (end === at || rows + counts[end]!.rows <= READ_ROWS)) {
        rows += counts[end++]!.rows;
      }
      const { columns: read } = await sql.typedColumns(
        `SELECT ${day}, ${names.map((name) => reads[name]).join(', ')}
         FROM ${source} f
         WHERE "${session}" BETWEEN CAST($first AS DATE) AND CAST($last AS DATE)`,
        { first: isoOfDay(counts[at]!.day), last: isoOfDay(counts[end - 1]!.day) },
      );
      const days = read[0] as Float64Array;
      const values = read.slice(1) as Float64Array[];
      let row = 0;
      for (let s = at; s < end && inOrder; s++) {
        const { day: sessionDay, rows: sessionRows } = counts[s]!;
        // The file's own order (read_parquet keeps it): a session's rows must be consecutive.
        for (let i = row; i < row + sessionRows; i++) if (days[i] !== sessionDay) inOrder = false;
        if (!inOrder) break;
        keySessions.add(values[keyColumn]!, row, row + sessionRows, s);
        const scales = values.map((column) => encodingOf(column, row, row + sessionRows));
        for (const [c, column] of values.entries()) {
          await put(encoded(column, row, row + sessionRows, scales[c]!));
        }
        sessions.push({ day: sessionDay, rows: sessionRows, scales });
        row += sessionRows;
      }
      at = end;
    }
    if (inOrder) {
      const section = keySessions.build();
      const keysAt = written;
      for (const bytes of section.bytes) await put(bytes);
      const header: SessionColumnsHeader = {
        format: SESSION_COLUMNS_FORMAT,
        parquet: sha256,
        rows: sessions.reduce((sum, s) => sum + s.rows, 0),
        columns: names,
        sessions,
        sha256: hash.digest('hex'),
        symbolOrder,
        keySessions: { offset: keysAt, keys: section.keys, words: section.words },
      };
      const text = Buffer.from(JSON.stringify(header), 'utf8');
      const length = Buffer.alloc(4);
      length.writeUInt32LE(text.length);
      await write(Buffer.concat([text, length, SESSION_COLUMNS_MAGIC]));
    }
  } catch (error) {
    // An interrupted commit leaves nothing of it behind.
    await handle.close().catch(() => undefined);
    await fs.rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  if (!inOrder) await fs.rm(temp, { force: true });
  if (!inOrder) return undefined;
  await fsyncFile(temp);
  await fs.rename(temp, target);
  return target;
}

/**
 * The key sessions section (`SessionColumnsHeader.keySessions`) of a file being written: per key, a bit per
 * session (in file order) it has rows in.
 */
class KeySessionsBuilder {
  /** Each key's number, in the order first met. */
  private readonly numbers = new Map<number, number>();
  private bits = new Uint32Array(0);
  readonly words: number;

  constructor(sessions: number) {
    this.words = Math.ceil(sessions / 32);
  }

  /** Notes the keys of a session's rows `keys[from…to)`, session `session` of the file. */
  add(keys: Float64Array, from: number, to: number, session: number): void {
    const word = session >>> 5;
    const bit = 1 << (session & 31);
    let previous = Number.NaN;
    for (let i = from; i < to; i++) {
      const key = keys[i]!;
      if (key === previous) continue; // a contract's rows of a session lie together
      previous = key;
      let number = this.numbers.get(key);
      if (number === undefined) {
        number = this.numbers.size;
        this.numbers.set(key, number);
        if ((number + 1) * this.words > this.bits.length) {
          const grown = new Uint32Array(Math.max(2 * this.bits.length, 1024 * this.words));
          grown.set(this.bits);
          this.bits = grown;
        }
      }
      this.bits[number * this.words + word]! |= bit;
    }
  }

  /** The section's bytes: the keys ascending as doubles, then each key's words of bits, padded to 8. */
  build(): { bytes: Uint8Array[]; keys: number; words: number } {
    const keys = Float64Array.from(this.numbers.keys()).sort();
    const bits = new Uint32Array(pad8(keys.length * this.words * 4) / 4);
    for (const [k, key] of keys.entries()) {
      const number = this.numbers.get(key)!;
      bits.set(this.bits.subarray(number * this.words, (number + 1) * this.words), k * this.words);
    }
    return {
      bytes: [new Uint8Array(keys.buffer), new Uint8Array(bits.buffer)],
      keys: keys.length,
      words: this.words,
    };
  }
}

/**
 * How a session's column `values[from…to)` is kept: nothing when every value is NULL (NaN), one double
 * when all are the same double, else 32-bit digits or doubles (`digitsScale`).
 */
function encodingOf(values: Float64Array, from: number, to: number): number {
  const first = values[from]!;
  let same = true;
  let allNull = true;
  for (let i = from; i < to && (same || allNull); i++) {
    const value = values[i]!;
    if (!Number.isNaN(value)) allNull = false;
    if (!Object.is(value, first)) same = false;
  }
  if (allNull) return ALL_NULL;
  if (same) return ONE_VALUE;
  return digitsScale(values, from, to);
}

/**
 * The smallest scale at which every value of `values[from…to)` is a 32-bit integer of digits that divides
 * back to the very same double (NaN stands for NULL), or -1 when there is none: the column is kept as
 * doubles.
 */
function digitsScale(values: Float64Array, from: number, to: number): number {
  scales: for (let scale = 0; scale < POWERS.length; scale++) {
    const power = POWERS[scale]!;
    for (let i = from; i < to; i++) {
      const value = values[i]!;
      if (Number.isNaN(value)) continue;
      // A negative zero's digits are a plain zero: only a double keeps its sign.
      if (value === 0 && 1 / value < 0) continue scales;
      const digits = Math.round(value * power);
      if (!(Math.abs(digits) < 0x7fffffff) || digits / power !== value) continue scales;
    }
    return scale;
  }
  return DOUBLES;
}

/** `values[from…to)` as bytes in encoding `scale` (see `encodingOf`), padded to 8 bytes. */
function encoded(values: Float64Array, from: number, to: number, scale: number): Uint8Array {
  const count = to - from;
  if (scale === ALL_NULL || count === 0) return new Uint8Array(0);
  if (scale === ONE_VALUE) return new Uint8Array(Float64Array.of(values[from]!).buffer);
  if (scale === DOUBLES) return new Uint8Array(values.buffer, values.byteOffset + from * 8, count * 8);
  const out = new Int32Array(pad8(count * 4) / 4);
  const power = POWERS[scale]!;
  for (let i = 0; i < count; i++) {
    const value = values[from + i]!;
    out[i] = Number.isNaN(value) ? NULL_DIGITS : Math.round(value * power);
  }
  return new Uint8Array(out.buffer);
}

function isoOfDay(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}
