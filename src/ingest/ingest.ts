/**
 * Staging source files for one ingest: each file goes through its format into tables of its own, then the
 * shared validation; its surviving rows move into the staging tables the store's commit reads. A file
 * with rejects stops the ingest (the caller discards the staging database) unless `skipInvalid`, in which
 * case its rejected lines are dropped and the rejects returned for a rejects file.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { IngestError, UsageError } from '../errors.js';
import { createStagingTableSql, TABLES, type TableName } from '../store/schema.js';
import { quoteIdentifier as q, quoteLiteral, type SqlSession } from '../store/sql.js';
import type { CommitResult, WriteTransaction } from '../store/writer.js';
import { createSessionsTable } from './calendar-table.js';
import { scanLines, tempTableName } from './csv-source.js';
import {
  formatNamed,
  type IngestFormat,
  ingestFormats,
  type Reject,
  type StageOptions,
} from './formats/index.js';
import type { LineScan } from './formats/types.js';
import { type DataQuality, measureQuality } from './quality.js';
import { validateStaging } from './validate.js';

/** Options of `stageFiles`: those of the formats, plus a progress callback. */
export type StageFilesOptions = Omit<StageOptions, 'tables'> & {
  /** Called after each file with the source rows staged so far and an estimate of the total. */
  readonly onProgress?: (rowsDone: number, rowsTotal?: number) => void;
  /** Hashes the caller already computed (e.g. to skip files ingested before), so files are read once. */
  readonly hashes?: ReadonlyMap<string, FileHash>;
  /**
   * `false`: no data-quality summary per file (a mirror stages one small answer per file, and measures
   * its run once instead).
   */
  readonly measureQuality?: false;
};

/** What one source file brought, for provenance (the fields of the store's provenance entry and more). */
export type StagedFile = {
  readonly source: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly format: string;
  /** Rows staged per table (after rejects were dropped); tables without rows are left out. */
  readonly rows: Record<string, number>;
  /** Records the format read from the file (malformed ones included). */
  readonly sourceRows: number;
  readonly rejected: number;
  /** The distinct session dates of its option quotes and stock bars, ascending. */
  readonly sessions: readonly string[];
  /** The distinct underlyings (options) and symbols (bars), ascending. */
  readonly underlyings: readonly string[];
  /** Its data-quality summary (`./quality.ts`), recorded with its provenance entry, unless not measured. */
  readonly quality: DataQuality | undefined;
};

/** The outcome of `stageFiles`. */
export type StageFilesResult = {
  /** Rows staged per table over all files. */
  readonly rows: Record<TableName, number>;
  readonly rejects: readonly Reject[];
  readonly files: readonly StagedFile[];
  /**
   * Tables whose staged rows are known to have unique natural keys (for `WriteTransaction.commit`): quotes
   * and what the format vouches for, when a single file staged rows into the table.
   */
  readonly uniqueKeys: readonly TableName[];
};

const TABLE_NAMES = Object.keys(TABLES) as TableName[];

/**
 * Commits what `stageFiles` staged in `tx`: one provenance record per file (its source named by `name`),
 * and the tables whose keys validation proved unique, which the commit then need not check again.
 */
export function commitStaged(
  tx: WriteTransaction,
  staged: StageFilesResult,
  name: (source: string) => string = (source) => source,
): Promise<CommitResult> {
  return tx.commit(
    staged.files.map((f) => ({
      source: name(f.source),
      sha256: f.sha256,
      format: f.format,
      rows: f.rows,
      rejected: f.rejected,
      ...(f.quality === undefined ? {} : { quality: f.quality }),
    })),
    { uniqueKeys: staged.uniqueKeys },
  );
}

/**
 * The SHA-256 (hex) and size of a file, its number of lines (for a progress estimate) and its blank lines
 * (which CSV formats need for line numbers).
 */
export type FileHash = LineScan & { readonly sha256: string; readonly bytes: number };

/** Hashes a file (SHA-256, hex) and counts its bytes and lines, in one read. */
export async function hashFile(file: string): Promise<FileHash> {
  const hash = createHash('sha256');
  const { lines, blank, bytes } = await scanLines(file, hash);
  return { sha256: hash.digest('hex'), bytes, lines, blank };
}

/**
 * The size of a file an ingest is to read; a `UsageError` when it cannot be read, an `IngestError` naming
 * it when it is a directory (whose read would fail deep inside a format).
 */
export async function readableFileSize(file: string): Promise<number> {
  await fs.access(file).catch((cause: unknown) => {
    throw new UsageError(`cannot read ${file}: ${(cause as Error).message}`, { cause });
  });
  const stat = await fs.stat(file);
  if (stat.isDirectory()) {
    throw new IngestError(
      file,
      undefined,
      `is a directory, not a file: name the files in it (e.g. ${file}/*.csv)`,
    );
  }
  return stat.size;
}

/** Creates the canonical staging tables that do not exist yet. */
export async function ensureStagingTables(sql: SqlSession): Promise<void> {
  const rows = await sql.all<{ name: string }>(
    `SELECT table_name AS name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary`,
  );
  const existing = new Set(rows.map((r) => r.name));
  for (const table of TABLE_NAMES) if (!existing.has(table)) await sql.run(createStagingTableSql(table));
}

function resolveFormat(format: string | IngestFormat): IngestFormat {
  if (typeof format !== 'string') return format;
  const found = formatNamed(format);
  if (found === undefined) {
    const names = ingestFormats().map((f) => f.name);
    throw new UsageError(`unknown format "${format}" (one of: ${names.join(', ')})`);
  }
  return found;
}

/**
 * Input below this size is staged and committed on one DuckDB thread: its tables fit in a row group or
 * two, which DuckDB scans on one thread anyway, so a second one mostly adds coordination. Measured on hod
 * files: 2 MB and 10 MB ingest ~10% faster on one thread, 22 MB ~25% slower.
 */
const ONE_THREAD_BELOW_BYTES = 16 * 2 ** 20;

/**
 * Stages `files` with `format` (a registered name or a format object) into the canonical staging tables
 * of `sql` (created when missing), validating each file. Without `skipInvalid` the first reject is thrown
 * as an `IngestError` and the staging tables may hold earlier files' rows (discard the database). Input
 * under 16 MiB in all sets the session to one thread, for the commit that follows too.
 */
export async function stageFiles<O extends StageFilesOptions>(
  sql: SqlSession,
  files: readonly string[],
  format: string | IngestFormat,
  options: O = {} as O,
): Promise<StageFilesResult> {
  const adapter = resolveFormat(format);
  let bytes = 0;
  for (const file of files) bytes += await readableFileSize(file);
  if (bytes < ONE_THREAD_BELOW_BYTES) await sql.run('SET threads = 1');
  await createSessionsTable(sql);
  await ensureStagingTables(sql);
  // Hashing runs beside DuckDB's work: it reads the files in this thread while DuckDB uses its own. It
  // starts when the first file's read does (a CSV format starts it once its read is under way), so that
  // the short statements before then do not wait on this thread; files are hashed one after another.
  let estimate: number | undefined;
  let hashes: Promise<FileHash>[] | undefined;
  const hashing = (): Promise<FileHash>[] => {
    if (hashes !== undefined) return hashes;
    const started: Promise<FileHash>[] = [];
    for (const file of files) {
      const known = options.hashes?.get(file);
      started.push(
        known !== undefined
          ? Promise.resolve(known)
          : (started.at(-1) ?? Promise.resolve()).then(() => hashFile(file)),
      );
    }
    const all = Promise.all(started).then((scans) => {
      estimate = scans.reduce((sum, h) => sum + Math.max(h.lines - 1, 0), 0);
    });
    all.catch(() => {}); // a failure surfaces where the file's own hash is awaited
    hashes = started;
    return started;
  };
  const {
    onProgress,
    hashes: _known,
    measureQuality: quality,
    ...formatOptions
  }: StageFilesOptions = options;
  const totals = Object.fromEntries(TABLE_NAMES.map((t) => [t, 0])) as Record<TableName, number>;
  const rejects: Reject[] = [];
  const staged: StagedFile[] = [];
  const unique = new Map<TableName, boolean>(); // per table with rows: whether one file brought them, uniquely
  let done = 0;
  for (const [i, file] of files.entries()) {
    // The first file (usually the only one) stages straight into the empty canonical tables.
    const direct = await allEmpty(sql);
    const perFile = Object.fromEntries(
      TABLE_NAMES.map((t) => [t, direct ? t : tempTableName(`file_${t}`)]),
    ) as Record<TableName, string>;
    try {
      if (!direct) {
        await sql.run(TABLE_NAMES.map((table) => createStagingTableSql(table, perFile[table])).join('; '));
      }
      if (adapter.readsCsv !== true) hashing(); // beside the format's own reading
      const result = await stageOne(sql, file, adapter, {
        ...formatOptions,
        tables: perFile,
        scan: () => hashing()[i]!,
      });
      const { counts, ...description } = await describe(sql, perFile);
      const measured =
        quality === false
          ? undefined
          : await measureQuality(sql, perFile, {
              // Option quotes where the file has them; else (bars, splits) every row it staged.
              rows: counts.option_quotes || Object.values(counts).reduce((sum, n) => sum + n, 0),
              sessions: description.sessions.length,
              greeksUnits: result.greeksUnits,
            });
      const rows: Record<string, number> = {};
      for (const table of TABLE_NAMES) {
        const count = counts[table];
        if (count === 0) continue;
        if (!direct) await moveRows(sql, perFile[table], table, i);
        rows[table] = count;
        totals[table] += count;
        // Validation refuses duplicate quotes within a file; rows of several files may still repeat keys.
        const vouched = table === 'option_quotes' || result.uniqueKeys.includes(table);
        unique.set(table, !unique.has(table) && vouched);
      }
      const hash = await hashing()[i]!;
      staged.push({
        source: file,
        sha256: hash.sha256,
        bytes: hash.bytes,
        format: adapter.name,
        rows,
        sourceRows: result.sourceRows,
        rejected: result.rejects.length,
        ...description,
        quality: measured,
      });
      rejects.push(...result.rejects);
      done += result.sourceRows;
      const total =
        i === files.length - 1 ? done : estimate === undefined ? undefined : Math.max(estimate, done);
      if (total === undefined) onProgress?.(done);
      else onProgress?.(done, total);
    } finally {
      if (!direct)
        await sql.run(TABLE_NAMES.map((table) => `DROP TABLE IF EXISTS ${q(perFile[table])}`).join('; '));
    }
  }
  await Promise.all(hashing());
  const uniqueKeys = [...unique].flatMap(([table, known]) => (known ? [table] : []));
  return { rows: totals, rejects, files: staged, uniqueKeys };
}

/** Whether every canonical staging table is empty. */
async function allEmpty(sql: SqlSession): Promise<boolean> {
  return sql.value<boolean>(
    `SELECT ${TABLE_NAMES.map((table) => `NOT EXISTS (SELECT 1 FROM ${q(table)})`).join(' AND ')}`,
  );
}

/**
 * A line of the `position`-th file of an ingest, as the staging tables hold it once the file's rows join
 * another file's: above every line of the files before it, so that where two files hold the same key the
 * commit keeps the later file's row (its dedupe keeps the highest `_line`). A row of a fast read, which has
 * no line, ranks at the start of its file.
 */
const FILE_RANK = 2 ** 40;

/**
 * Moves the rows of a file's table into the staging table `target`, ranked after the rows already there
 * (see `FILE_RANK`). When the target is still empty the file's table simply takes its place (no copy):
 * no earlier row can share a key with it.
 */
async function moveRows(sql: SqlSession, source: string, target: TableName, position: number): Promise<void> {
  const columns = TABLES[target].map((c) => q(c.name)).join(', ');
  const targetEmpty = await sql.value<boolean>(`SELECT NOT EXISTS (SELECT 1 FROM ${q(target)})`);
  if (targetEmpty && (await sameColumns(sql, source, target))) {
    await sql.run(`DROP TABLE ${q(target)}; ALTER TABLE ${q(source)} RENAME TO ${q(target)}`);
  } else {
    await sql.run(
      `INSERT INTO ${q(target)} (${columns}, _line, _reject)
       SELECT ${columns}, coalesce(_line, 0) + $1, _reject FROM ${q(source)}`,
      [position * FILE_RANK],
    );
  }
}

async function sameColumns(sql: SqlSession, a: string, b: string): Promise<boolean> {
  const names = async (table: string) =>
    (await sql.columns(`SELECT * FROM ${q(table)} LIMIT 0`)).names.join(',');
  return (await names(a)) === (await names(b));
}

/** Stages one file into its own tables and validates it; drops rejected lines or throws the first reject. */
async function stageOne(
  sql: SqlSession,
  file: string,
  format: IngestFormat,
  options: StageOptions & { tables: Record<TableName, string> },
): Promise<{
  sourceRows: number;
  rejects: Reject[];
  uniqueKeys: readonly TableName[];
  greeksUnits?: string | undefined;
}> {
  let sourceRows = 0;
  let greeksUnits: string | undefined;
  let uniqueKeys: readonly TableName[] = [];
  const rejects: Reject[] = [];
  try {
    const result = await format.stage(sql, file, options);
    sourceRows = result.rows;
    uniqueKeys = result.uniqueKeys ?? [];
    greeksUnits = result.greeksUnits;
    rejects.push(...result.rejects);
    if (result.validated === true && rejects.length === 0)
      return { sourceRows, rejects, uniqueKeys, greeksUnits };
  } catch (error) {
    if (!(error instanceof IngestError) || !options.skipInvalid) throw error;
    rejects.push({ file: error.file, line: error.line, reason: error.reason });
  }
  const seen = new Set(rejects.flatMap((r) => (r.line === undefined ? [] : [r.line])));
  for (const reject of await validateStaging(sql, file, options.tables, options)) {
    if (reject.line === undefined || !seen.has(reject.line)) rejects.push(reject);
  }
  rejects.sort(byLine);
  const first = rejects[0];
  if (first !== undefined && !options.skipInvalid)
    throw new IngestError(first.file, first.line, first.reason);
  // Validation reports every row with a `_reject`, so without rejects there is nothing to delete.
  if (rejects.length === 0) return { sourceRows, rejects, uniqueKeys, greeksUnits };
  const lines = rejects.flatMap((r) => (r.line === undefined ? [] : [r.line]));
  const rejected = tempTableName('rejected_lines');
  await sql.run(`CREATE TEMP TABLE ${q(rejected)} (line BIGINT)`);
  try {
    await sql.append(rejected, [lines]);
    for (const table of Object.values(options.tables)) {
      await sql.run(
        `DELETE FROM ${q(table)} WHERE _reject IS NOT NULL OR _line IN (SELECT line FROM ${q(rejected)})`,
      );
    }
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${q(rejected)}`);
  }
  return { sourceRows, rejects, uniqueKeys, greeksUnits };
}

/** File-level rejects (no line) first, then by line. */
function byLine(a: Reject, b: Reject): number {
  return (a.line ?? 0) - (b.line ?? 0);
}

/**
 * The rows of each table of one file's staging, and the sessions and underlyings they hold: one query,
 * answered as rows (scalar subqueries building lists cost twice as much to plan and run on a small file).
 */
async function describe(
  sql: SqlSession,
  tables: Record<TableName, string>,
): Promise<{ counts: Record<TableName, number>; sessions: string[]; underlyings: string[] }> {
  const rows = await sql.all<{ kind: number; value: string; n: number | null }>(
    `SELECT 0 AS kind, CAST(d AS VARCHAR) AS value, NULL::BIGINT AS n FROM (
       SELECT DISTINCT session_date AS d FROM (
         SELECT session_date FROM ${q(tables.option_quotes)} UNION ALL SELECT session_date FROM ${q(tables.stock_bars)}
       ) WHERE session_date IS NOT NULL)
     UNION ALL SELECT 1, u, NULL FROM (
       SELECT DISTINCT u FROM (
         SELECT underlying AS u FROM ${q(tables.option_quotes)}
         UNION ALL SELECT underlying FROM ${q(tables.open_interest)}
         UNION ALL SELECT symbol FROM ${q(tables.stock_bars)}
       ) WHERE u IS NOT NULL)
     ${TABLE_NAMES.map((table) => `UNION ALL SELECT 2, ${quoteLiteral(table)}, count(*) FROM ${q(tables[table])}`).join('\n     ')}`,
  );
  const counts = Object.fromEntries(TABLE_NAMES.map((t) => [t, 0])) as Record<TableName, number>;
  const sessions: string[] = [];
  const underlyings: string[] = [];
  for (const { kind, value, n } of rows) {
    if (kind === 0) sessions.push(value);
    else if (kind === 1) underlyings.push(value);
    else counts[value as TableName] = Number(n);
  }
  // YYYY-MM-DD dates sort as text; symbols in code-unit order, as DuckDB sorts VARCHAR.
  sessions.sort();
  underlyings.sort();
  return { counts, sessions, underlyings };
}
