/**
 * The manifest: the list of live Parquet files of every table with their content hashes, plus ingest
 * provenance. It is replaced atomically (write temp, fsync, rename, fsync dir), so a reader sees one
 * version or the next, never a mix. Its content hash — excluding wall-clock times — is the data version.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { StoreError } from '../errors.js';
import { TABLES_DIR } from './layout.js';
import { TABLES, type TableName } from './schema.js';

export const MANIFEST_FILE = 'manifest.json';
export const MANIFEST_FORMAT = 'pitchain-store/1';

/** One Parquet file of a table. `path` is relative to the store directory, with `/` separators. */
export type FileEntry = {
  path: string;
  sha256: string;
  rows: number;
  bytes: number;
  partition: Record<string, string>;
  /**
   * The first and last session (Eastern dates) of the file's rows, for tables with a session column:
   * readers skip files whose sessions a query does not need. Absent in stores written before it was
   * recorded (such a file is read whenever its partition is).
   */
  sessions?: { first: string; last: string };
};

/** What one ingest brought in. `ingestedAt` is informational and not part of the data version. */
export type ProvenanceEntry = {
  source: string;
  sha256: string;
  format: string;
  rows: Record<string, number>;
  rejected: number;
  ingestedAt: string;
  /**
   * The ingest's data-quality summary of the source (`src/ingest/quality.ts`): counts and the Greek units
   * it stored. Absent in stores written before it existed; not part of the data version.
   */
  quality?: Readonly<Record<string, string | number | null>>;
};

/** A file that left the manifest: readers pinned to an older manifest may read it until the grace ends. */
export type RetiredEntry = { path: string; retiredAt: string };

export type Manifest = {
  format: typeof MANIFEST_FORMAT;
  dataVersion: string;
  committedAt: string;
  tables: Record<TableName, FileEntry[]>;
  provenance: ProvenanceEntry[];
  /**
   * Files no longer listed, with the instant each stopped being listed (not part of the data version).
   * Absent when empty, so a store that never replaced a file keeps the manifest it always had.
   */
  retired?: RetiredEntry[];
};

/** The manifest of a store that has no data yet. */
export function emptyManifest(): Manifest {
  const tables = Object.fromEntries(Object.keys(TABLES).map((t) => [t, []])) as unknown as Record<
    TableName,
    FileEntry[]
  >;
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    dataVersion: '',
    committedAt: '',
    tables,
    provenance: [],
  };
  manifest.dataVersion = computeDataVersion(manifest);
  return manifest;
}

/** The data version: a hash of the file lists and provenance, independent of when the commit ran. */
export function computeDataVersion(manifest: Pick<Manifest, 'tables' | 'provenance'>): string {
  const tables = Object.keys(TABLES)
    .sort()
    .map((name) => [
      name,
      [...(manifest.tables[name as TableName] ?? [])]
        .sort((a, b) => (a.path < b.path ? -1 : 1))
        .map((f) => [f.path, f.sha256, f.rows]),
    ]);
  const provenance = manifest.provenance.map((p) => [p.source, p.sha256, p.format, p.rows, p.rejected]);
  return createHash('sha256').update(JSON.stringify({ tables, provenance })).digest('hex').slice(0, 16);
}

/** Reads the manifest of a store directory; a directory without one is an empty store. */
export async function readManifest(dir: string): Promise<Manifest | undefined> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, MANIFEST_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StoreError(`cannot read the manifest of ${dir}`, { cause: error });
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(text) as Manifest;
  } catch (cause) {
    throw new StoreError(`the manifest of ${dir} is not valid JSON`, { cause });
  }
  if (manifest === null || typeof manifest !== 'object' || manifest.format !== MANIFEST_FORMAT) {
    throw new StoreError(`${dir} is not a pitchain store (manifest format ${String(manifest?.format)})`);
  }
  checkManifest(dir, manifest);
  for (const name of Object.keys(TABLES) as TableName[]) manifest.tables[name] ??= [];
  return manifest;
}

/**
 * Refuses a manifest whose shape is not the store's, and above all any file entry that is not a plain
 * relative path under its table's directory: every path is joined to the store directory and read (and
 * a retired one deleted), so `../../etc/passwd`, an absolute path or a NUL byte must never get that far.
 */
function checkManifest(dir: string, manifest: Manifest): void {
  const fail = (what: string) => {
    throw new StoreError(`the manifest of ${dir} is damaged or tampered with: ${what}`);
  };
  const tables: unknown = manifest.tables;
  if (tables === null || typeof tables !== 'object' || Array.isArray(tables)) fail('no table list');
  if (!Array.isArray(manifest.provenance)) fail('no provenance list');
  for (const [table, files] of Object.entries(tables as Record<string, unknown>)) {
    if (!Object.hasOwn(TABLES, table)) fail(`unknown table ${JSON.stringify(table)}`);
    if (!Array.isArray(files)) fail(`the files of ${table} are not a list`);
    for (const file of files as unknown[]) {
      const entry = file as Partial<FileEntry> | null;
      if (entry === null || typeof entry !== 'object') fail(`an entry of ${table} is not an object`);
      if (!isStorePath(entry!.path, `${TABLES_PREFIX}${table}/`)) {
        fail(`${table} lists ${JSON.stringify(entry!.path)}, not a file under ${TABLES_PREFIX}${table}/`);
      }
      if (typeof entry!.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(entry!.sha256)) {
        fail(`${JSON.stringify(entry!.path)} has no sha256`);
      }
      if (!Number.isSafeInteger(entry!.rows) || !Number.isSafeInteger(entry!.bytes)) {
        fail(`${JSON.stringify(entry!.path)} has no row or byte count`);
      }
      const partition: unknown = entry!.partition;
      if (partition === null || typeof partition !== 'object' || Array.isArray(partition)) {
        fail(`${JSON.stringify(entry!.path)} has no partition`);
      }
    }
  }
  const retired: unknown = manifest.retired;
  if (retired !== undefined) {
    if (!Array.isArray(retired)) fail('the retired files are not a list');
    for (const entry of retired as Partial<RetiredEntry>[]) {
      if (!isStorePath(entry?.path, TABLES_PREFIX) || typeof entry?.retiredAt !== 'string') {
        fail(`retired entry ${JSON.stringify(entry?.path)} is not a file under ${TABLES_PREFIX}`);
      }
    }
  }
}

const TABLES_PREFIX = `${TABLES_DIR}/`;

/**
 * Whether `value` is a `/`-separated relative path under `prefix` naming a Parquet file, with no empty,
 * `.` or `..` segment, no backslash, drive letter or control character.
 */
function isStorePath(value: unknown, prefix: string): value is string {
  if (typeof value !== 'string' || !value.startsWith(prefix) || !value.endsWith('.parquet')) return false;
  if (/[\\:\u0000-\u001f\u007f]/.test(value)) return false;
  return value.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** Replaces the manifest atomically: a crash at any point leaves either the old or the new file. */
export async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  const target = path.join(dir, MANIFEST_FILE);
  const temp = `${target}.${process.pid}.tmp`;
  await writeFileDurably(temp, `${JSON.stringify(manifest, null, 2)}\n`);
  crashPoint('manifest-written');
  await fs.rename(temp, target);
  await fsyncDirectory(dir);
}

/** Writes a file and flushes it to disk before returning. */
export async function writeFileDurably(file: string, data: string | Uint8Array): Promise<void> {
  const handle = await fs.open(file, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Flushes a directory entry (renames, new files) to disk. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Fault injection for the crash-safety tests: when `PITCHAIN_CRASH_AT` names this point the process
 * kills itself with SIGKILL, exactly as `kill -9` would at that moment (`PITCHAIN_INTERRUPT_AT`: SIGINT).
 */
export function crashPoint(name: string): void {
  if (process.env['PITCHAIN_CRASH_AT'] === name) process.kill(process.pid, 'SIGKILL');
  // The same for one Ctrl-C: the process receives SIGINT here once, and handles it as it would.
  if (process.env['PITCHAIN_INTERRUPT_AT'] === name) {
    delete process.env['PITCHAIN_INTERRUPT_AT'];
    process.kill(process.pid, 'SIGINT');
  }
}
