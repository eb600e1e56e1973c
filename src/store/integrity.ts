/**
 * Checking a store's files against its manifest: a quick check (the file is there, at its recorded size)
 * that readers and the writer run on every file they are about to use, a footer check for the files
 * DuckDB must open first, and the full check of `pitchain verify` (every file's content hash).
 */
import { promises as fs, type Stats, statSync } from 'node:fs';
import path from 'node:path';
import { contractColumnsPath, contractColumnsState } from './contract-columns.js';
import type { FileEntry, Manifest } from './manifest.js';
import { sha256File } from './parquet.js';
import { TABLES, type TableName } from './schema.js';
import { hasSessionColumns, SessionColumnsFile, sessionColumnsPath } from './session-columns.js';
import type { SqlSession } from './sql.js';

/** A file of the manifest that cannot be used as it is. */
export type DamagedFile = {
  readonly table: TableName;
  /** The path relative to the store, as the manifest lists it. */
  readonly path: string;
  readonly problem: 'missing' | 'damaged';
  /** What is wrong, in words (`42 bytes, the manifest says 1234`). */
  readonly detail: string;
};

/** What `verifyStore` found. */
export type VerifyReport = {
  readonly dataVersion: string;
  readonly files: number;
  readonly bytes: number;
  /** The manifest's files missing or damaged, and the session column files damaged. */
  readonly damaged: readonly DamagedFile[];
  /** The intact quote and open interest files without a session column file (read through DuckDB). */
  readonly withoutSessionColumns: readonly string[];
  /** The intact contracts files without a contract column file (read through DuckDB). */
  readonly withoutContractColumns: readonly string[];
};

/**
 * The session column file of `entry`'s Parquet file (`session-columns.ts`): intact, missing, or damaged
 * (not whole, not that file's, or its content not what its trailer records).
 */
export async function sessionColumnsState(
  dir: string,
  entry: FileEntry,
): Promise<'intact' | 'missing' | 'damaged'> {
  const file = path.join(dir, sessionColumnsPath(entry.path));
  if (SessionColumnsFile.open(file, entry.sha256, entry.rows) === undefined) {
    // A file of an earlier format is not used, as if it were not there: a repair writes it again.
    if (SessionColumnsFile.ofEarlierFormat(file)) return 'missing';
    return (await fs.stat(file).then(
      () => true,
      () => false,
    ))
      ? 'damaged'
      : 'missing';
  }
  return (await SessionColumnsFile.intact(file).catch(() => false)) ? 'intact' : 'damaged';
}

/** Whether the file of `entry` is there at its recorded size; the problem when it is not. */
export async function quickCheck(
  dir: string,
  table: TableName,
  entry: FileEntry,
): Promise<DamagedFile | undefined> {
  let stat: Stats;
  try {
    stat = await fs.stat(path.join(dir, entry.path));
  } catch (error) {
    return statFailed(table, entry, error);
  }
  return statJudged(table, entry, stat);
}

/**
 * {@link quickCheck} without a promise per file: opening a store checks every file, and two thousand
 * `stat` calls cost a few milliseconds this way against some forty through the thread pool.
 */
export function quickCheckSync(dir: string, table: TableName, entry: FileEntry): DamagedFile | undefined {
  let stat: Stats;
  try {
    stat = statSync(path.join(dir, entry.path));
  } catch (error) {
    return statFailed(table, entry, error);
  }
  return statJudged(table, entry, stat);
}

/** The quick check's verdict on a file that could not be stat'ed. */
function statFailed(table: TableName, entry: FileEntry, error: unknown): DamagedFile {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
    return { table, path: entry.path, problem: 'missing', detail: 'no such file' };
  }
  return { table, path: entry.path, problem: 'damaged', detail: `cannot read it: ${messageOf(error)}` };
}

/** The quick check's verdict on a file's stat: a regular file at the manifest's size, or the problem. */
function statJudged(table: TableName, entry: FileEntry, stat: Stats): DamagedFile | undefined {
  if (!stat.isFile()) return { table, path: entry.path, problem: 'damaged', detail: 'not a regular file' };
  if (stat.size !== entry.bytes) {
    return {
      table,
      path: entry.path,
      problem: 'damaged',
      detail: `${stat.size} bytes, the manifest says ${entry.bytes}`,
    };
  }
  return undefined;
}

/** The statement of {@link footerCheck}: expected to fail on a damaged file, never worth a retry. */
export const FOOTER_CHECK_SQL = 'SELECT count(*) FROM parquet_file_metadata($file)';

/** Whether DuckDB can read the Parquet footer (schema and row groups) of the file of `entry`. */
export async function footerCheck(
  sql: SqlSession,
  dir: string,
  table: TableName,
  entry: FileEntry,
): Promise<DamagedFile | undefined> {
  try {
    await sql.value(FOOTER_CHECK_SQL, { file: path.join(dir, entry.path) });
    return undefined;
  } catch (error) {
    return {
      table,
      path: entry.path,
      problem: 'damaged',
      // DuckDB's own words, without the wrapper's `SQL failed:`.
      detail: `unreadable Parquet footer: ${messageOf((error as Error).cause ?? error)}`,
    };
  }
}

/**
 * {@link footerCheck} without DuckDB: the damage `problem` found by walking the footer's bytes in
 * JavaScript (`footerFacts`), a tenth of DuckDB's statement. What the walk cannot see, the statement
 * that reads the file finds.
 */
export function footerWalkDamage(
  table: TableName,
  entry: FileEntry,
  problem: string | undefined,
): DamagedFile | undefined {
  return problem === undefined
    ? undefined
    : { table, path: entry.path, problem: 'damaged', detail: `unreadable Parquet footer: ${problem}` };
}

/** Whether the file of `entry` has its recorded size and content hash. */
export async function deepCheck(
  dir: string,
  table: TableName,
  entry: FileEntry,
): Promise<DamagedFile | undefined> {
  const quick = await quickCheck(dir, table, entry);
  if (quick !== undefined) return quick;
  let sha256: string;
  try {
    sha256 = await sha256File(path.join(dir, entry.path));
  } catch (error) {
    return { table, path: entry.path, problem: 'damaged', detail: `cannot read it: ${messageOf(error)}` };
  }
  return sha256 === entry.sha256
    ? undefined
    : { table, path: entry.path, problem: 'damaged', detail: 'its content hash differs from the manifest' };
}

/**
 * Checks every file of `manifest` against its size and content hash, reading each once; calls
 * `onFile` after each with the bytes checked so far.
 */
export async function verifyFiles(
  dir: string,
  manifest: Manifest,
  onFile?: (bytesDone: number, bytesTotal: number) => void,
): Promise<VerifyReport> {
  const all = (Object.keys(TABLES) as TableName[]).flatMap((table) =>
    manifest.tables[table].map((entry) => ({ table, entry })),
  );
  const total = all.reduce((n, { entry }) => n + entry.bytes, 0);
  const damaged: DamagedFile[] = [];
  const withoutSessionColumns: string[] = [];
  const withoutContractColumns: string[] = [];
  let done = 0;
  for (const { table, entry } of all) {
    const problem = await deepCheck(dir, table, entry);
    if (problem !== undefined) damaged.push(problem);
    else if (hasSessionColumns(table)) {
      // Readers trust a session column file whose trailer holds: its content is checked here.
      const state = await sessionColumnsState(dir, entry);
      if (state === 'missing') withoutSessionColumns.push(entry.path);
      if (state === 'damaged') {
        damaged.push({
          table,
          path: sessionColumnsPath(entry.path),
          problem: 'damaged',
          detail:
            'a session column file not whole or not its Parquet file’s; pitchain verify --repair writes it again',
        });
      }
    } else if (table === 'contracts') {
      const derived = contractColumnsPath(entry.path);
      const state = await contractColumnsState(path.join(dir, derived), entry.sha256, entry.rows);
      if (state === 'missing') withoutContractColumns.push(entry.path);
      if (state === 'damaged') {
        damaged.push({
          table,
          path: derived,
          problem: 'damaged',
          detail:
            'a contract column file not whole or not its Parquet file’s; pitchain verify --repair writes it again',
        });
      }
    }
    done += entry.bytes;
    onFile?.(done, total);
  }
  return {
    dataVersion: manifest.dataVersion,
    files: all.length,
    bytes: total,
    damaged,
    withoutSessionColumns,
    withoutContractColumns,
  };
}

/** The message of a store file's problem for errors and logs: its full path, what is wrong, what to run. */
export function describeDamage(dir: string, file: DamagedFile): string {
  return `store file ${path.join(dir, file.path)} is ${file.problem} (${file.detail}); the queries that need it fail until an ingest rewrites its partition (pitchain verify --store ${dir} lists every such file)`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
