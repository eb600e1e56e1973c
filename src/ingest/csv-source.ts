/**
 * Reading a CSV file into a typed DuckDB table, for the CSV formats. DuckDB's `read_csv` does the reading
 * (every column VARCHAR, BOM and quoting handled) and one set-based SELECT parses; no value of the file is
 * ever pasted into SQL (its columns are read under synthetic names `c1…cN`). Each row gets `_line`, its
 * 1-based line in the file, and `_reject`, the first problem found while parsing it.
 */
import { createReadStream, promises as fs } from 'node:fs';
import { IngestError } from '../errors.js';
import { normalizeExpirationDate } from '../market-time/index.js';
import { quoteIdentifier as q, quoteLiteral, type SqlSession, type SqlValue } from '../store/sql.js';
import type { LineScan, Reject } from './formats/types.js';

/** The header of a CSV file: its column names (BOM stripped, trimmed) and the line it is on. */
export type CsvHeader = { readonly names: readonly string[]; readonly line: number };

/** One typed column of the parsed table: a SQL expression over the raw columns, and how to check it. */
export type CsvField = {
  /** Column name in the parsed table. */
  readonly name: string;
  /** SQL computing the typed value from raw columns (`c1…cN`) and `$n` parameters of `params`. */
  readonly sql: string;
  /** The raw column the value comes from, checked for "missing" and "wrong type". */
  readonly raw?: string;
  /** How the source names the value in a reason (`bid`, `quotedate`). */
  readonly label?: string;
  /** What a value must be, for a reason: `a number`, `a date like 01/31/2018`. */
  readonly expect?: string;
  /** SQL that is NULL exactly when the raw text does not parse (default: the field itself). */
  readonly parsed?: string;
  /** An empty raw value is a reject (`missing value: <label>`). */
  readonly required?: boolean;
};

/** A rule over the typed values (names of `fields`): when `sql` is true, the row is refused for `reason`. */
export type CsvCheck = { readonly sql: string; readonly reason: string };

/** What `readCsvInto` produced: source records read and the lines DuckDB could not split into fields. */
export type CsvRead = { readonly records: number; readonly malformed: readonly Reject[] };

/** The file side of `readCsvInto`: where the data starts and how many columns each record has. */
export type CsvSource = {
  readonly file: string;
  /** The number of columns (from the header, or given for a headerless file). */
  readonly columns: number;
  /** The header line (0 when the file has none: data starts on line 1). */
  readonly headerLine: number;
  readonly delimiter?: string;
  /**
   * Starts (or joins) a scan of the file's lines, e.g. the one that hashes it; the file is scanned here
   * otherwise. Called once the read is under way, so that the scan runs beside it.
   */
  readonly scan?: () => Promise<LineScan>;
};

/** The table side of `readCsvInto`. */
export type CsvInsert = {
  /** An empty table to INSERT into; it has `_line` and `_reject`. */
  readonly target: string;
  /**
   * Target column → SQL over `r` (the `fields`, the raw columns `c1…cN`). No joins: a join may reorder
   * rows, and `_line` comes from the insertion order; stamp joined values afterwards with an UPDATE.
   */
  readonly outputs: Readonly<Record<string, string>>;
  readonly fields: readonly CsvField[];
  /** Rules checked after the fields parse, in order, after the fields' own missing/wrong-type checks. */
  readonly checks?: readonly CsvCheck[];
  /** Values for `$n` parameters used by field SQL, checks and outputs (numbered from 1; more are appended). */
  readonly params?: readonly SqlValue[];
  /** Rows each record yields (outputs that `unnest` a list of that length); default 1. */
  readonly rowsPerRecord?: number;
};

/** Splits one CSV line into fields (RFC 4180 quoting). */
export function splitCsvLine(line: string, delimiter = ','): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === delimiter) {
      fields.push(field);
      field = '';
    } else field += ch;
  }
  fields.push(field);
  return fields;
}

/** Reads the header: the first non-blank line of the file, split and trimmed (a UTF-8 BOM dropped). */
export async function readCsvHeader(file: string, delimiter = ','): Promise<CsvHeader> {
  const handle = await fs.open(file, 'r');
  try {
    const buffer = Buffer.alloc(256 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/^\uFEFF/, '');
    const firstLine = text.split('\n', 1)[0]!;
    if (/\r(?!$)/.test(firstLine)) {
      throw (await csvStructureProblem(file)) ?? new IngestError(file, 1, 'unreadable line endings');
    }
    const lines = text.split('\n');
    for (let i = 0; i < lines.length - (bytesRead === buffer.length ? 1 : 0); i++) {
      const line = lines[i]!.replace(/\r$/, '');
      if (line.trim() === '') continue;
      return { names: splitCsvLine(line, delimiter).map((n) => n.trim()), line: i + 1 };
    }
  } finally {
    await handle.close();
  }
  throw new IngestError(file, undefined, 'no header line');
}

/**
 * The first problem of a CSV file's text that makes its rows unreadable, as an `IngestError` with its line,
 * or undefined: lines ending in a carriage return alone (old Mac files, which read as one huge line), a
 * line ending unlike the lines before it (CRLF and LF mixed, which DuckDB's reader refuses without a
 * line), or a quoted field still open at the end of the file. One streamed pass over the bytes; called
 * when a read has already failed or looks wrong, so a clean file never pays for it.
 */
export async function csvStructureProblem(file: string): Promise<IngestError | undefined> {
  let line = 1;
  let quoted = false;
  let quoteLine = 0;
  let ending: 'CRLF' | 'LF' | undefined;
  let previous = -1;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (previous === 13 && byte !== 10 && !quoted) {
        return new IngestError(
          file,
          line,
          'line ends with a carriage return alone (old Mac line endings): convert the file to LF or CRLF',
        );
      }
      if (byte === 34) {
        quoted = !quoted;
        if (quoted) quoteLine = line;
      } else if (byte === 10) {
        if (!quoted) {
          const own = previous === 13 ? 'CRLF' : 'LF';
          ending ??= own;
          if (own !== ending) {
            return new IngestError(
              file,
              line,
              `line ends with ${own} where the lines before end with ${ending} (mixed line endings): convert the file to one`,
            );
          }
        }
        line++;
      }
      previous = byte;
    }
  }
  if (quoted) {
    return new IngestError(
      file,
      quoteLine,
      'unterminated quote: a quoted field opened on this line never closes',
    );
  }
  return undefined;
}

/** The positions of a header's columns by name; a duplicate name is refused. */
export function columnIndex(file: string, header: CsvHeader): Map<string, number> {
  const index = new Map<string, number>();
  header.names.forEach((name, i) => {
    if (index.has(name)) throw new IngestError(file, header.line, `duplicate column "${name}" in header`);
    index.set(name, i);
  });
  return index;
}

/** The raw column (`c3`) for a header name, as SQL. */
export function rawColumn(position: number): string {
  return q(`c${position + 1}`);
}

/** Line numbers of a file: how many there are, and which are empty (DuckDB skips those silently). */
/**
 * Scans a file's lines (`LineScan`) and its size, feeding each chunk to `hash` when given: one read of the
 * file serves both its content hash and its line numbers.
 */
export async function scanLines(
  file: string,
  hash?: { update(chunk: Buffer): unknown },
): Promise<LineScan & { bytes: number }> {
  const blank: number[] = [];
  let line = 1;
  let length = 0; // bytes of the current line so far
  let lastByte = -1;
  let bytes = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    hash?.update(chunk);
    bytes += chunk.length;
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      // A blank line is at most a CR; anything longer is not, whatever it holds.
      if (length + (nl - start) <= 1) {
        const total = length + (nl - start);
        const endsWithCr = nl > start ? chunk[nl - 1] === 13 : lastByte === 13;
        if (total === 0 || endsWithCr) blank.push(line);
      }
      line++;
      length = 0;
      start = nl + 1;
    }
    length += chunk.length - start;
    if (chunk.length > 0) lastByte = chunk[chunk.length - 1]!;
  }
  return { lines: length > 0 ? line : line - 1, blank, bytes };
}

let tableCounter = 0;

/** A fresh name for a temp table of this session (the prefix is ours, never file text). */
export function tempTableName(prefix: string): string {
  tableCounter += 1;
  return `_${prefix}_${process.pid}_${tableCounter}`;
}

/**
 * Reads a CSV file with DuckDB and INSERTs one row per record (or `rowsPerRecord`) into `insert.target`,
 * with `_reject` (the first missing value, wrong type or failed check, else NULL) and `_line`. Records
 * DuckDB cannot split into the expected number of fields are not inserted; they come back as `malformed`
 * rejects with their lines. `_line` is derived from the insertion order, so nothing here filters or joins.
 */
export async function readCsvInto(sql: SqlSession, source: CsvSource, insert: CsvInsert): Promise<CsvRead> {
  const params: SqlValue[] = [...(insert.params ?? [])];
  const bind = (value: SqlValue): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const columns = Array.from({ length: source.columns }, (_, i) => `${quoteLiteral(`c${i + 1}`)}: 'VARCHAR'`);
  const rejectsTable = tempTableName('csv_rejects');
  const rejectsScan = tempTableName('csv_scans');
  const problems: string[] = [];
  for (const field of insert.fields) {
    if (field.raw === undefined) continue;
    const label = field.label ?? field.name;
    if (field.required) problems.push(`WHEN ${field.raw} IS NULL THEN ${bind(`missing value: ${label}`)}`);
    if (field.expect !== undefined) {
      problems.push(
        `WHEN ${field.raw} IS NOT NULL AND ${field.parsed ?? q(field.name)} IS NULL THEN ${bind(`wrong type: ${label} "`)} || ${field.raw} || ${bind(`" is not ${field.expect}`)}`,
      );
    }
  }
  for (const check of insert.checks ?? []) problems.push(`WHEN ${check.sql} THEN ${check.reason}`);
  const fieldSql = insert.fields.map((f) => `${f.sql} AS ${q(f.name)}`);
  const rawNames = Array.from({ length: source.columns }, (_, i) => q(`c${i + 1}`));
  const reject = problems.length === 0 ? 'NULL' : `CASE ${problems.join(' ')} END`;
  const skip = source.headerLine > 1 ? `skip = ${bind(source.headerLine - 1)}, ` : '';
  const reader = `read_csv(${bind(source.file)}, ${skip}header = ${source.headerLine > 0},
      columns = {${columns.join(', ')}}, auto_detect = false, delim = ${bind(source.delimiter ?? ',')},
      quote = '"', escape = '"', ignore_errors = true, store_rejects = true,
      rejects_table = ${quoteLiteral(rejectsTable)}, rejects_scan = ${quoteLiteral(rejectsScan)})`;
  const outputs = Object.entries(insert.outputs);
  const inserting = sql.run(
    `INSERT INTO ${q(insert.target)} (${outputs.map(([name]) => q(name)).join(', ')}, _reject)
     SELECT ${outputs.map(([, expr]) => expr).join(', ')}, r._reject
     FROM (SELECT *, CAST(${reject} AS VARCHAR) AS _reject
           FROM (SELECT ${fieldSql.join(', ')}, ${rawNames.join(', ')} FROM ${reader})) r`,
    params,
  );
  // Blank lines are found while DuckDB reads (they shift line numbers; DuckDB skips them silently).
  const scan = source.scan?.() ?? scanLines(source.file);
  scan.catch(() => {}); // awaited below; a read error of the file surfaces from DuckDB first
  await inserting.catch(explainReadFailure(source.file));
  try {
    const malformedRows = await sql.all<{ line: number; message: string; type: string }>(
      // A line too long to split has no column: it counts as the line's first problem, not as none.
      `SELECT line, arg_min(error_message, coalesce(column_idx, 0)) AS message,
              arg_min(error_type, coalesce(column_idx, 0)) AS type
       FROM ${q(rejectsTable)} GROUP BY line ORDER BY line`,
    );
    const malformed = malformedRows.map((r) => ({
      file: source.file,
      line: Number(r.line),
      reason: malformedReason(r),
    }));
    const perRecord = insert.rowsPerRecord ?? 1;
    const rows = await sql.value<number>(`SELECT count(*) FROM ${q(insert.target)}`);
    await numberLines(sql, source, insert.target, rows / perRecord, perRecord, malformed, (await scan).blank);
    return { records: rows / perRecord, malformed };
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${q(rejectsTable)}`);
    await sql.run(`DROP TABLE IF EXISTS ${q(rejectsScan)}`);
  }
}

/**
 * A query over a CSV file's records as text (columns `c1…cN`, VARCHAR; records DuckDB cannot split are
 * skipped), optionally only its first `limit`, with its parameters: for a look at the data before it is
 * staged.
 */
export function csvRecordsSql(
  source: CsvSource,
  limit?: number,
): { readonly sql: string; readonly params: readonly SqlValue[] } {
  const columns = Array.from({ length: source.columns }, (_, i) => `${quoteLiteral(`c${i + 1}`)}: 'VARCHAR'`);
  const skip = source.headerLine > 1 ? `skip = ${source.headerLine - 1}, ` : '';
  return {
    sql: `SELECT * FROM read_csv($1, ${skip}header = ${source.headerLine > 0}, columns = {${columns.join(', ')}},
            auto_detect = false, delim = $2, quote = '"', escape = '"', ignore_errors = true)
          ${limit === undefined ? '' : `LIMIT ${Math.trunc(limit)}`}`,
    params: [source.file, source.delimiter ?? ','],
  };
}

/** The table side of `readCsvTyped`. */
export type CsvTypedInsert = {
  /** An empty table to INSERT into; it has `_line` and `_reject`. */
  readonly target: string;
  /** The DuckDB type each raw column `c1…cN` is read as (VARCHAR unless listed), e.g. `{ c3: 'DATE' }`. */
  readonly types: Readonly<Record<string, string>>;
  /** The `strptime` format of the DATE columns. */
  readonly dateFormat?: string;
  /**
   * Target column → SQL over the typed raw columns (`c1…cN`); the same rules as `CsvInsert.outputs`,
   * except that an `unordered` read may also use the columns of `joins`.
   */
  readonly outputs: Readonly<Record<string, string>>;
  /**
   * The rows need not keep the file's order, and `_line` is left NULL: DuckDB then inserts on all its
   * threads without ordering the rows (about a quarter less time on a large file). For a caller that
   * reads the file again, in order, whenever it needs a line number.
   */
  readonly unordered?: true;
  /** With `unordered`: joins after the CSV (e.g. `LEFT JOIN sessions s ON s.session_date = "c8"`). */
  readonly joins?: string;
};

/**
 * The fast read of a file expected to be clean: DuckDB parses every value straight into the type given,
 * with no per-value SQL, and INSERTs the outputs into `insert.target` with `_line`. Returns the records
 * read, or undefined as soon as DuckDB could not read a record (a malformed row, a value not of its type):
 * the caller then empties the target and reads the file with `readCsvInto`, which names every problem.
 * A type here must accept no text that the careful read's SQL would refuse or read otherwise.
 */
export async function readCsvTyped(
  sql: SqlSession,
  source: CsvSource,
  insert: CsvTypedInsert,
): Promise<number | undefined> {
  const params: SqlValue[] = [];
  const bind = (value: SqlValue): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const columns = Array.from(
    { length: source.columns },
    (_, i) => `${quoteLiteral(`c${i + 1}`)}: ${quoteLiteral(insert.types[`c${i + 1}`] ?? 'VARCHAR')}`,
  );
  const rejectsTable = tempTableName('csv_rejects');
  const rejectsScan = tempTableName('csv_scans');
  const skip = source.headerLine > 1 ? `skip = ${bind(source.headerLine - 1)}, ` : '';
  const dateFormat = insert.dateFormat === undefined ? '' : `dateformat = ${bind(insert.dateFormat)}, `;
  const outputs = Object.entries(insert.outputs);
  const unordered = insert.unordered === true;
  if (insert.joins !== undefined && !unordered) throw new Error('readCsvTyped: joins need an unordered read');
  let scan: Promise<LineScan> | undefined;
  let restore: { order: string; disabled: string } | undefined;
  try {
    if (unordered) {
      [restore] = await sql.all<{ order: string; disabled: string }>(
        `SELECT current_setting('preserve_insertion_order')::VARCHAR AS "order",
                current_setting('disabled_optimizers')::VARCHAR AS disabled`,
      );
      // The joined tables are small: they are the build side of each join, whatever DuckDB estimates of
      // the file.
      const disabled = [restore!.disabled, 'build_side_probe_side'].filter((o) => o !== '').join(',');
      await sql.run(
        `SET preserve_insertion_order = false; SET disabled_optimizers = ${quoteLiteral(disabled)}`,
      );
    }
    const inserting = sql.run(
      `INSERT INTO ${q(insert.target)} (${outputs.map(([name]) => q(name)).join(', ')})
       SELECT ${outputs.map(([, expr]) => expr).join(', ')}
       FROM read_csv(${bind(source.file)}, ${skip}header = ${source.headerLine > 0},
         columns = {${columns.join(', ')}}, auto_detect = false, delim = ${bind(source.delimiter ?? ',')},
         quote = '"', escape = '"', ${dateFormat}ignore_errors = true, store_rejects = true,
         rejects_table = ${quoteLiteral(rejectsTable)}, rejects_scan = ${quoteLiteral(rejectsScan)})
       ${insert.joins ?? ''}`,
      params,
    );
    // Only the ordered read needs the blank lines; the unordered one still starts the caller's scan (the
    // hash that goes with it), but does not read the file for lines of its own.
    scan = source.scan?.() ?? (unordered ? undefined : scanLines(source.file));
    scan?.catch(() => {}); // awaited below; a read error of the file surfaces from DuckDB first
    await inserting.catch(explainReadFailure(source.file));
    const [counts] = await sql.all<{ rejected: number; records: number; base: number | null }>(
      `SELECT (SELECT count(*) FROM ${q(rejectsTable)}) AS rejected,
              (SELECT count(*) FROM ${q(insert.target)}) AS records,
              ${unordered ? 'NULL' : `(SELECT min(rowid) FROM ${q(insert.target)})`} AS base`,
    );
    if (counts!.rejected > 0) return undefined;
    if (!unordered) {
      await numberLines(
        sql,
        source,
        insert.target,
        counts!.records,
        1,
        [],
        (await scan!).blank,
        counts!.base,
      );
    }
    return counts!.records;
  } finally {
    const settings =
      restore === undefined
        ? ''
        : `SET preserve_insertion_order = ${restore.order}; SET disabled_optimizers = ${quoteLiteral(restore.disabled)}; `;
    await sql.run(
      `${settings}DROP TABLE IF EXISTS ${q(rejectsTable)}; DROP TABLE IF EXISTS ${q(rejectsScan)}`,
    );
  }
}

/**
 * A handler for a failed read of `file`: throws the file's structural problem with its line when it has
 * one (`csvStructureProblem`), else the error itself.
 */
export function explainReadFailure(file: string): (error: unknown) => Promise<never> {
  return async (error) => {
    throw (await csvStructureProblem(file).catch(() => undefined)) ?? error;
  };
}

function malformedReason(row: { message: string | null; type: string | null }): string {
  if (row.message === null) return `malformed row (${row.type ?? 'unreadable'})`;
  const size = /Maximum line size of (\d+) bytes exceeded\. Actual Size: ?(\d+) bytes/.exec(row.message);
  if (size !== null) return `line of ${size[2]} bytes, over the ${size[1]} bytes a CSV line may have`;
  const counts = /Expected Number of Columns: (\d+) Found: (\d+)/.exec(row.message);
  if (counts !== null && (row.type === 'TOO MANY COLUMNS' || row.type === 'MISSING COLUMNS')) {
    return `malformed row: expected ${counts[1]} fields, found ${counts[2]}`;
  }
  return `malformed row: ${row.message.split('\n')[0]}`;
}

/**
 * Sets `_line` of a freshly filled table: its rows are the file's data lines in order (DuckDB keeps the
 * insertion order), `perRecord` rows each, minus the lines DuckDB skipped: blank lines and malformed rows.
 * `firstRowid` is the table's least rowid, when the caller has already asked for it.
 */
async function numberLines(
  sql: SqlSession,
  source: CsvSource,
  table: string,
  records: number,
  perRecord: number,
  malformed: readonly Reject[],
  blank: readonly number[],
  firstRowid?: number | null,
): Promise<void> {
  const lines = [...blank.filter((l) => l > source.headerLine), ...malformed.map((r) => r.line!)];
  const skipped = [...new Set(lines)];
  const first = source.headerLine + 1;
  // Rowids of a table that once held rows (and had them deleted) do not start at 0.
  const base =
    (firstRowid !== undefined
      ? firstRowid
      : await sql.value<number | null>(`SELECT min(rowid) FROM ${q(table)}`)) ?? 0;
  if (skipped.length === 0) {
    await sql.run(`UPDATE ${q(table)} SET _line = (rowid - $1) // $2 + $3`, [base, perRecord, first]);
    return;
  }
  const skip = tempTableName('csv_skip');
  await sql.run(`CREATE TEMP TABLE ${q(skip)} (line BIGINT)`);
  try {
    await sql.append(skip, [skipped]);
    await sql.run(
      `UPDATE ${q(table)} SET _line = m.line
       FROM (SELECT r.range AS line, row_number() OVER (ORDER BY r.range) - 1 AS idx
             FROM range($1, $2) r WHERE r.range NOT IN (SELECT line FROM ${q(skip)})) m
       WHERE m.idx = (${q(table)}.rowid - $4) // $3`,
      [first, first + records + skipped.length, perRecord, base],
    );
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${q(skip)}`);
  }
}

/**
 * A SQL expression (over alias `t`) giving `column` mapped by `map`, a JavaScript rule such as
 * `underlyingOfRoot` applied once per distinct value rather than per row; `changed` is false when `map`
 * changes nothing (the expression is then the column itself). Values are bound from `params` on.
 */
export async function remapSql(
  sql: SqlSession,
  table: string,
  column: string,
  map: (value: string) => string,
  params: SqlValue[] = [],
): Promise<{ sql: string; params: SqlValue[]; changed: boolean }> {
  const values = await sql.all<{ v: string }>(
    `SELECT DISTINCT ${q(column)} AS v FROM ${q(table)} WHERE ${q(column)} IS NOT NULL`,
  );
  const cases: string[] = [];
  for (const { v } of values) {
    const mapped = map(v);
    if (mapped === v) continue;
    params.push(v, mapped);
    cases.push(`WHEN $${params.length - 1} THEN $${params.length}`);
  }
  const own = `t.${q(column)}`;
  if (cases.length === 0) return { sql: own, params, changed: false };
  return { sql: `CASE ${own} ${cases.join(' ')} ELSE ${own} END`, params, changed: true };
}

/** Maps the values of `column` in `table` by `map` (see `remapSql`) with one UPDATE, if any changes. */
export async function remapColumn(
  sql: SqlSession,
  table: string,
  column: string,
  map: (value: string) => string,
): Promise<void> {
  const remap = await remapSql(sql, table, column, map);
  if (remap.changed) await sql.run(`UPDATE ${q(table)} t SET ${q(column)} = ${remap.sql}`, remap.params);
}

/** SQL parsing a decimal price (optionally scaled); NULL when the text is not a number or does not fit. */
export function decimalSql(raw: string, type = 'DECIMAL(12,2)', scale?: string): string {
  if (scale === undefined) return `TRY_CAST(${raw} AS ${type})`;
  return `TRY_CAST(TRY_CAST(${raw} AS DECIMAL(38,10)) * ${scale} AS ${type})`;
}

/** SQL parsing a whole number; NULL for text that is not one (`1.5` is not, `1.0` is). */
export function integerSql(raw: string, type = 'BIGINT'): string {
  return `CASE WHEN TRY_CAST(${raw} AS DOUBLE) = TRY_CAST(${raw} AS ${type}) THEN TRY_CAST(${raw} AS ${type}) END`;
}

/**
 * SQL keeping a vendor Greek or IV (a DOUBLE expression, e.g. a parsed field `r.iv`) only when the store's
 * DECIMAL(10,6) can hold it. Non-finite values and |x| ≥ 10000 become NULL, not rejects: vendors print
 * such numbers for contracts their model could not fit, and the rest of the row is good.
 */
export function greekSql(value: string): string {
  return `CASE WHEN isfinite(${value}) AND abs(${value}) < 10000 THEN ${value} END`;
}

/**
 * SQL for the parts of an OCC symbol held in `symbol`, read by position from its end without regular
 * expressions: `expiration` DATE, `side` 'call' | 'put', `strike` in thousandths. Each is NULL when its
 * characters do not read as one (the root and overall shape are for `OCC_SYMBOL_SQL_REGEX` to judge).
 */
export function occPartsSql(symbol: string): { expiration: string; side: string; strike: string } {
  const part = (from: number, length: number): string =>
    `substr(${symbol}, length(${symbol}) - ${from}, ${length})`;
  return {
    expiration: `TRY_CAST(CASE WHEN length(${symbol}) >= 16 THEN '20' || ${part(14, 2)} || '-' || ${part(12, 2)} || '-' || ${part(10, 2)} END AS DATE)`,
    side: `CASE ${part(8, 1)} WHEN 'C' THEN 'call' WHEN 'P' THEN 'put' END`,
    strike: `TRY_CAST(right(${symbol}, 8) AS BIGINT)`,
  };
}

/**
 * Checks that key columns (typed fields `expiration`, `strike`) can be written as an OCC symbol: a year
 * 2000–2099 and a strike in (0, 100000) exact to 1/1000. `bind` binds a text and returns its placeholder.
 */
export function occKeyChecks(
  bind: (text: string) => string,
  rawExpiration: string,
  rawStrike: string,
): CsvCheck[] {
  const cannot = bind(' cannot be written as an OCC symbol');
  return [
    {
      sql: 'year(expiration) NOT BETWEEN 2000 AND 2099',
      reason: `${bind('expiration ')} || ${rawExpiration} || ${cannot}`,
    },
    {
      sql: 'strike <= 0 OR strike >= 100000 OR strike * 1000 <> round(strike * 1000)',
      reason: `${bind('strike ')} || ${rawStrike} || ${cannot}`,
    },
  ];
}

/**
 * Writes `option_symbol` of `table` from its scratch key columns `_root`, `_expiration`, `_side`
 * ('call' | 'put') and `_strike` (dollars). A Saturday expiration (how monthlies were dated before 2015)
 * becomes the session before it (`normalizeExpirationDate`), computed once per distinct date.
 */
export async function writeOccSymbols(sql: SqlSession, table: string): Promise<void> {
  const expirations = await sql.all<{ d: string }>(
    `SELECT DISTINCT _expiration AS d FROM ${q(table)} WHERE _expiration IS NOT NULL`,
  );
  const map = tempTableName('expiration_map');
  await sql.run(`CREATE TEMP TABLE ${q(map)} (expiration DATE, normalized DATE)`);
  try {
    await sql.append(map, [
      expirations.map((r) => r.d),
      expirations.map((r) => {
        try {
          return normalizeExpirationDate(r.d);
        } catch {
          return r.d;
        }
      }),
    ]);
    await sql.run(
      `UPDATE ${q(table)} t
       SET option_symbol = t._root || strftime(m.normalized, '%y%m%d') || CASE t._side WHEN 'call' THEN 'C' ELSE 'P' END
                           || lpad(CAST(CAST(round(t._strike * 1000) AS BIGINT) AS VARCHAR), 8, '0')
       FROM ${q(map)} m
       WHERE m.expiration = t._expiration AND t._root IS NOT NULL AND t._side IS NOT NULL AND t._strike IS NOT NULL`,
    );
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${q(map)}`);
  }
}
