/**
 * The write path: an ingest fills staging tables in a private DuckDB, then `commit` merges them into the
 * affected partitions, writes new content-addressed Parquet files, and replaces the manifest atomically.
 * Nothing a reader can see changes before the manifest rename, so a crash leaves the previous version.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { StoreError } from '../errors.js';
import { contractColumnsPath } from './contract-columns.js';
import { writeContractColumns } from './contract-columns-write.js';
import { deriveContracts } from './derived-contracts.js';
import { derivedFileOwner } from './derived-files.js';
import { removeGarbage, retire } from './garbage.js';
import { type DamagedFile, deepCheck, footerCheck, quickCheck } from './integrity.js';
import {
  fileColumns,
  PARTITION_EXPRESSIONS,
  partitionDirectory,
  partitionMatchSql,
  samePartition,
  TABLES_DIR,
  YEAR_COLUMN,
} from './layout.js';
import { acquireWriterLock, LOCK_FILE, type WriterLock } from './lock.js';
import {
  computeDataVersion,
  crashPoint,
  emptyManifest,
  type FileEntry,
  fsyncDirectory,
  MANIFEST_FILE,
  type Manifest,
  type ProvenanceEntry,
  readManifest,
  writeManifest,
} from './manifest.js';
import { fsyncFile, parquetOptions, readParquetSql, sha256File } from './parquet.js';
import {
  createStagingTableSql,
  TABLE_KEYS,
  TABLE_PARTITIONS,
  TABLE_SORT,
  TABLES,
  type TableName,
} from './schema.js';
import { hasSessionColumns, sessionColumnsPath } from './session-columns.js';
import { sessionColumnsTemp, writeSessionColumns } from './session-columns-write.js';
import { quoteIdentifier as q, quoteLiteral, SqlSession } from './sql.js';

/** What an ingest reports about one source for provenance (the time is added at commit). */
export type SourceRecord = Omit<ProvenanceEntry, 'ingestedAt'>;

/** Options of `commit`. */
export type CommitOptions = {
  /**
   * Staged tables whose rows are known to have unique natural keys (`TABLE_KEYS`), e.g. because ingest
   * validation refused duplicates: the commit skips its own check for repeated keys there.
   */
  readonly uniqueKeys?: readonly TableName[];
};

/** The outcome of a commit. */
export type CommitResult = {
  dataVersion: string;
  previousVersion: string;
  changed: boolean;
  rows: Partial<Record<TableName, number>>;
  files: number;
  /** Missing or damaged files of the partitions this commit rewrote, now replaced (their lost rows with them). */
  replaced: DamagedFile[];
};

/** One partition of a staged table, its rows, and the first and last rowid of its rows there. */
type StagedPartition = {
  partition: Record<string, string>;
  rows: number;
  rowids: readonly [number, number];
};

const TABLE_NAMES = Object.keys(TABLES) as TableName[];

/**
 * The directory (in the store) where a writer's staging database spills what does not fit in its memory
 * limit: on the disk the store is written to, not in the working directory (DuckDB's default), and
 * removed when the write ends, or by the next writer after a crash.
 */
export const SPILL_DIR = '.spill';

/**
 * The staging database's memory limit unless the writer is given one. Staged rows, the commit's sorts and
 * its key checks spill to the store's disk past it, so an ingest's memory stays bounded whatever its size
 * (DuckDB's own default, 80% of the machine, let a 50 M-row ingest outgrow a 24 GB machine).
 */
export const DEFAULT_WRITER_MEMORY = '2GB';

/** Options of `WriteTransaction.begin`. */
export type BeginOptions = {
  /** Create the store directory when it does not exist. */
  readonly create?: boolean;
  /**
   * The memory the staging database may use before it spills to the store's disk, as DuckDB takes it
   * (`4GB`, `512MB`); default DEFAULT_WRITER_MEMORY.
   */
  readonly memoryLimit?: string;
};

/**
 * The wall-clock time recorded in the manifest. `SOURCE_DATE_EPOCH` (the reproducible-builds convention)
 * pins it, so a regenerated sample store is byte-identical, not only the same data version.
 */
function commitTime(): string {
  const pinned = process.env['SOURCE_DATE_EPOCH'];
  if (pinned !== undefined && /^\d+$/.test(pinned)) return new Date(Number(pinned) * 1000).toISOString();
  return new Date().toISOString();
}

/** A write in progress: staging tables (every canonical table, plus `_line`) in a private DuckDB. */
export class WriteTransaction {
  private finished = false;
  /** Files of the base manifest found missing or damaged, by path: they are neither read nor kept. */
  private readonly damaged = new Map<string, DamagedFile>();

  private committed = false;
  private interruptedAt: 'staging' | 'commit' | undefined;
  private writing = false;
  /** Connections running statements for this transaction besides `sql` (the commit's second writer). */
  private readonly sides = new Set<SqlSession>();
  /** Files this transaction created in the store (temporary and final names), until the manifest lists them. */
  private readonly written = new Set<string>();

  private constructor(
    readonly dir: string,
    readonly sql: SqlSession,
    private readonly lock: WriterLock,
    private readonly base: Manifest,
    /** The outermost directory `begin` created for a new store, removed again if nothing is committed. */
    private readonly created: string | undefined,
  ) {}

  /** Takes the writer lock of `dir` (creating the store when asked) and opens empty staging tables. */
  static async begin(dir: string, options: BeginOptions = {}): Promise<WriteTransaction> {
    const root = path.resolve(dir);
    const created = options.create ? await fs.mkdir(root, { recursive: true }) : undefined;
    const stat = await fs.stat(root).catch(() => undefined);
    if (!stat?.isDirectory()) throw new StoreError(`store directory ${dir} does not exist`);
    let lock: WriterLock;
    try {
      lock = await acquireWriterLock(root);
    } catch (error) {
      if (created !== undefined) await removeCreated(root, created);
      throw error;
    }
    try {
      const found = await readManifest(root);
      if (found === undefined && !options.create) {
        throw new StoreError(`${dir} is not a pitchain store (no ${MANIFEST_FILE})`);
      }
      const base = found ?? emptyManifest();
      // What a writer killed with -9 spilled is still there; holding the lock, this writer is its only user.
      await fs.rm(path.join(root, SPILL_DIR), { recursive: true, force: true });
      // So is the manifest a writer killed between writing it and renaming it left under a temporary name.
      for (const name of await fs.readdir(root)) {
        if (MANIFEST_TEMP.test(name)) await fs.rm(path.join(root, name), { force: true });
      }
      const sql = await SqlSession.open({
        tempDirectory: path.join(root, SPILL_DIR),
        memoryLimit: options.memoryLimit ?? DEFAULT_WRITER_MEMORY,
      });
      await sql.run(TABLE_NAMES.map((table) => createStagingTableSql(table)).join('; '));
      return new WriteTransaction(root, sql, lock, base, created);
    } catch (error) {
      await lock.release();
      if (created !== undefined) await removeCreated(root, created);
      throw error;
    }
  }

  /**
   * Asks the transaction to stop (Ctrl-C): the running statements are interrupted and the commit, unless
   * it is already replacing the manifest, ends with a StoreError instead of publishing anything. Whatever
   * the transaction wrote is removed when it ends, as the next writer would remove it.
   */
  interrupt(): void {
    if (this.finished || this.interruptedAt !== undefined) return;
    this.interruptedAt = this.writing ? 'commit' : 'staging';
    if (this.writing) return; // the manifest rename is under way: the commit completes
    this.sql.interrupt();
    for (const side of this.sides) side.interrupt();
  }

  /** Whether `interrupt` was called before the commit started replacing the manifest. */
  get interrupted(): boolean {
    return this.interruptedAt === 'staging';
  }

  /** Whether `interrupt` was called once the commit was replacing the manifest (which then completed). */
  get interruptedLate(): boolean {
    return this.interruptedAt === 'commit';
  }

  /** Whether this transaction creates the store (its directory did not exist). */
  get creating(): boolean {
    return this.created !== undefined;
  }

  /** The data version this transaction started from. */
  get baseVersion(): string {
    return this.base.dataVersion;
  }

  /** Whether the store's provenance holds a source of this name (as recorded) and format. */
  hasSource(source: string, format: string): boolean {
    return this.base.provenance.some((p) => p.source === source && p.format === format);
  }

  /** Whether a source with this content hash and format is already in the store's provenance. */
  alreadyIngested(sha256: string, format: string): boolean {
    return this.base.provenance.some((p) => p.sha256 === sha256 && p.format === format);
  }

  /**
   * Merges the staged rows into the store and publishes a new version. Rows whose key exists replace the
   * old ones; sources already in provenance are not recorded twice, so re-ingesting changes nothing.
   */
  async commit(sources: readonly SourceRecord[], options: CommitOptions = {}): Promise<CommitResult> {
    this.ensureOpen();
    try {
      const started = Date.now();
      const retained = await removeGarbage(this.dir, this.base, started);
      crashPoint('staged');
      this.stopIfInterrupted();
      const unique = new Set(options.uniqueKeys);
      const storedContracts = (await this.usable(this.sql, 'contracts', this.base.tables.contracts)).map(
        (f) => path.join(this.dir, f.path),
      );
      await deriveContracts(this.sql, storedContracts);
      const tables = structuredClone(this.base.tables);
      const rows: Partial<Record<TableName, number>> = {};
      const counts = await this.sql.rowCounts(TABLE_NAMES);
      const jobs: ({ table: TableName } & StagedPartition)[] = [];
      for (const [t, table] of TABLE_NAMES.entries()) {
        const staged = counts[t]!;
        if (staged === 0) continue;
        rows[table] = staged;
        if (!unique.has(table)) await this.dedupeStaging(table);
        for (const partition of await this.stagedPartitions(table)) jobs.push({ table, ...partition });
      }
      const written = await this.writePartitions(jobs);
      jobs.forEach(({ table, partition }, i) => {
        tables[table] = tables[table].filter((f) => !samePartition(f.partition, partition));
        tables[table].push(...(written[i] ?? []));
      });
      for (const table of new Set(jobs.map((job) => job.table))) {
        tables[table].sort((a, b) => (a.path < b.path ? -1 : 1));
      }
      const now = commitTime();
      // A commit without a single row (header-only files, every row refused) records no source either:
      // nothing was added, so there is no new version to publish.
      const empty = jobs.length === 0;
      const added = sources
        .filter((s) => !empty && !this.alreadyIngested(s.sha256, s.format))
        .map((s) => ({ ...s, ingestedAt: now }));
      const next: Manifest = {
        ...this.base,
        tables,
        provenance: [...this.base.provenance, ...added],
        committedAt: now,
      };
      const retired = retire(this.base, tables, retained, new Date(started).toISOString());
      delete next.retired;
      if (retired.length > 0) next.retired = retired;
      next.dataVersion = computeDataVersion(next);
      const changed = next.dataVersion !== this.base.dataVersion;
      if (changed || (!empty && (await readManifest(this.dir)) === undefined)) {
        // One turn of the event loop, so that a Ctrl-C that came during the last statements is handled.
        await new Promise((resolve) => setImmediate(resolve));
        this.stopIfInterrupted();
        // From here on an interrupt waits: the manifest is replaced whole or not at all.
        this.writing = true;
        await writeManifest(this.dir, next);
        this.committed = true;
      }
      crashPoint('committed');
      return {
        dataVersion: next.dataVersion,
        previousVersion: this.base.dataVersion,
        changed,
        rows,
        files: written.reduce((n, entries) => n + entries.length, 0),
        replaced: [...this.damaged.values()].filter((d) =>
          jobs.some(
            ({ table, partition }) =>
              table === d.table &&
              this.base.tables[table].some((f) => f.path === d.path && samePartition(f.partition, partition)),
          ),
        ),
      };
    } finally {
      await this.finish();
    }
  }

  /**
   * Writes the files of `jobs` (answered in their order), two at a time on two connections: one COPY
   * leaves part of the machine idle (its sort's merge, small partitions, the fsync and hash of the file
   * written). While two or more files remain, each COPY runs on one DuckDB thread, so that the two do
   * not contend for the cores; the largest partitions go first, so that the last files are small, and the
   * last one gets every thread back.
   */
  private async writePartitions(
    jobs: readonly ({ table: TableName } & StagedPartition)[],
  ): Promise<FileEntry[][]> {
    const written = new Array<FileEntry[]>(jobs.length);
    const order = jobs.map((_, i) => i).sort((a, b) => jobs[b]!.rows - jobs[a]!.rows || a - b);
    const threads = Number(await this.sql.value("SELECT current_setting('threads')"));
    const oneThreadEach = threads > 1 && jobs.length > 1;
    let taken = 0;
    let failed = false;
    const work = async (sql: SqlSession) => {
      while (taken < order.length && !failed) {
        this.stopIfInterrupted();
        const i = order[taken++]!;
        if (oneThreadEach) await sql.run(`SET threads = ${taken === order.length ? threads : 1}`);
        const { table, partition, rows, rowids } = jobs[i]!;
        try {
          written[i] = await this.writePartition(
            sql,
            table,
            partition,
            rows,
            rowids,
            this.base.tables[table],
          );
        } catch (error) {
          failed = true; // the other connection takes no further file
          throw error;
        }
        crashPoint('file-written');
      }
    };
    const side = await this.sql.connect();
    this.sides.add(side);
    try {
      const settled = await Promise.allSettled([work(this.sql), work(side)]);
      for (const result of settled) if (result.status === 'rejected') throw result.reason;
    } finally {
      this.sides.delete(side);
      side.close();
      if (oneThreadEach) await this.sql.run(`SET threads = ${threads}`);
    }
    return written;
  }

  /**
   * The files of `entries` this commit can read: there, at their recorded size, with a footer DuckDB reads
   * (and, when `deep`, their recorded content hash). The others are noted as damaged: a partition this
   * commit rewrites then holds the staged rows and its intact files' rows, which repairs it, while a
   * damaged file of another partition stays listed for `pitchain verify` to report.
   */
  private async usable(
    sql: SqlSession,
    table: TableName,
    entries: readonly FileEntry[],
    deep = false,
  ): Promise<FileEntry[]> {
    const found: FileEntry[] = [];
    for (const entry of entries) {
      if (this.damaged.has(entry.path)) continue;
      const problem = deep
        ? await deepCheck(this.dir, table, entry)
        : ((await quickCheck(this.dir, table, entry)) ?? (await footerCheck(sql, this.dir, table, entry)));
      if (problem === undefined) found.push(entry);
      else this.damaged.set(entry.path, problem);
    }
    return found;
  }

  /** Drops the staged rows and releases the lock; the store is unchanged. */
  async abort(): Promise<void> {
    if (!this.finished) await this.finish();
  }

  private stopIfInterrupted(): void {
    if (this.interrupted) throw new StoreError(`interrupted: nothing was committed to ${this.dir}`);
  }

  private ensureOpen(): void {
    if (this.finished) throw new StoreError('this write transaction is already finished');
  }

  private async finish(): Promise<void> {
    this.finished = true;
    this.sql.close();
    // Scratch: a spill that cannot be removed now (still open elsewhere) is the next writer's to remove,
    // and never turns a commit that happened into an error.
    await fs.rm(path.join(this.dir, SPILL_DIR), { recursive: true, force: true }).catch(() => {});
    if (!this.committed) await this.removeWritten();
    await this.lock.release();
    // A store this transaction was to create, and never did: nothing of it should remain.
    if (!this.committed && this.created !== undefined) await removeCreated(this.dir, this.created);
  }

  /**
   * Removes the files this transaction wrote that no manifest lists: what the next writer's garbage
   * collection would remove. A content-addressed name that a listed or retired file already had is the
   * same bytes as that file, which readers may use, and stays.
   */
  private async removeWritten(): Promise<void> {
    const kept = new Set([
      ...Object.values(this.base.tables).flatMap((files) => files.map((f) => f.path)),
      ...(this.base.retired ?? []).map((r) => r.path),
    ]);
    for (const file of this.written) {
      const rel = path.relative(this.dir, file).split(path.sep).join('/');
      // A derived file goes with its Parquet file.
      if (!kept.has(derivedFileOwner(rel) ?? rel)) await fs.rm(file, { force: true }).catch(() => {});
    }
    this.written.clear();
  }

  /**
   * Within one ingest a key appears once: the row with the highest `_line` wins, which is the later file's
   * row where two files hold the key (ingest ranks each file's lines after the files before it), and the
   * later line within a file. Rows without a line (a format's fast read of the first file) lose to rows
   * with one; among themselves, which a fast read only stages when no key repeats, their values decide.
   */
  private async dedupeStaging(table: TableName): Promise<void> {
    const keys = TABLE_KEYS[table].map(q).join(', ');
    // Usually no key repeats, and counting distinct key hashes is much cheaper than rewriting the table:
    // equal keys hash alike, so as many distinct hashes as rows proves every key unique.
    const unique = await this.sql.value<boolean>(
      `SELECT count(*) = count(DISTINCT hash(${keys})) FROM ${q(table)}`,
    );
    if (unique) return;
    const all = TABLES[table].map((c) => q(c.name)).join(', ');
    await this.sql.run(`
      CREATE OR REPLACE TABLE ${q(table)} AS
      SELECT * FROM ${q(table)}
      QUALIFY row_number() OVER (PARTITION BY ${keys} ORDER BY "_line" DESC NULLS LAST, ${all}) = 1`);
  }

  /**
   * The partitions the staged rows fall in, each with the rowid range its rows lie within: a partition's
   * write then scans that range only, which is short when the source was ordered by date or underlying.
   */
  private async stagedPartitions(table: TableName): Promise<StagedPartition[]> {
    const keys = TABLE_PARTITIONS[table];
    // Grouped by typed values, then cast to text: the cast runs per partition instead of per row.
    const exprs = keys.map((k) => `${PARTITION_EXPRESSIONS[table][k]} AS ${q(k)}`);
    const texts = keys.map((k) => `CAST(${q(k)} AS VARCHAR) AS ${q(k)}`);
    const found = await this.sql.all<
      Record<string, string> & { _rows: number; _first: number; _last: number }
    >(
      `SELECT ${[...texts, '_rows', '_first', '_last'].join(', ')}
       FROM (SELECT ${[...exprs, 'count(*) AS _rows', 'min(rowid) AS _first', 'max(rowid) AS _last'].join(', ')}
             FROM ${q(table)} GROUP BY ALL)
       ORDER BY ALL`,
    );
    return found.map(({ _rows, _first, _last, ...partition }) => ({
      partition,
      rows: _rows,
      rowids: [_first, _last],
    }));
  }

  /** Writes the merged content of one partition to a new content-addressed file. */
  private async writePartition(
    sql: SqlSession,
    table: TableName,
    partition: Record<string, string>,
    stagedRows: number,
    rowids: StagedPartition['rowids'],
    current: readonly FileEntry[],
  ): Promise<FileEntry[]> {
    const keys = TABLE_PARTITIONS[table];
    const columns = fileColumns(table);
    const colList = columns.map(q).join(', ');
    const where = [
      ...partitionMatchSql(table, partition),
      `rowid BETWEEN ${rowids[0]} AND ${rowids[1]}`,
    ].join(' AND ');
    const dirRel = partitionDirectory(table, partition);
    const dirAbs = path.join(this.dir, dirRel);
    await fs.mkdir(dirAbs, { recursive: true });
    const sort = TABLE_SORT[table]
      .filter((c) => columns.includes(c))
      .map(q)
      .join(', ');
    const keyMatch = TABLE_KEYS[table].map((k) => `s.${q(k)} = e.${q(k)}`).join(' AND ');
    const oldEntries = current.filter((f) => samePartition(f.partition, partition));
    const copy = async (old: readonly FileEntry[], temp: string) => {
      const kept =
        old.length === 0
          ? ''
          : `UNION ALL SELECT ${columns.map((c) => `e.${q(c)}`).join(', ')}
           FROM ${readParquetSql(
             old.map((f) => path.join(this.dir, f.path)),
             keys,
           )} e
           WHERE NOT EXISTS (SELECT 1 FROM ${q(table)} s WHERE ${keyMatch})`;
      return Number(
        await sql.value(`
        COPY (SELECT ${colList} FROM (SELECT ${colList} FROM ${q(table)} WHERE ${where} ${kept}) ORDER BY ${sort})
        TO ${quoteLiteral(temp)} (${parquetOptions(table)})`),
      );
    };
    const sessionColumn = YEAR_COLUMN[table];
    const chunked = sessionColumn !== undefined && CHUNKED.has(table);
    // A large partition is kept as files of consecutive sessions, so that a query of one session opens
    // one file of about CHUNK_ROWS rows: DuckDB's cost of a query grows with the row groups of the files
    // it opens, pruned or not (SPY's 2019 of the chain bench store: 33 ms for one session in one file of
    // 573 row groups, 10 ms in a file of its own).
    const writeChunks = async (source: string, ranges: readonly { first: string; last: string }[]) => {
      const entries: FileEntry[] = [];
      for (const [i, range] of ranges.entries()) {
        const chunk = path.join(dirAbs, `.tmp-${process.pid}-${Date.now()}-${i}.parquet`);
        this.written.add(chunk);
        const column = q(sessionColumn!);
        const count = Number(
          await sql.value(`
            COPY (SELECT * FROM ${source} AS source
                  WHERE ${column} BETWEEN DATE '${range.first}' AND DATE '${range.last}' ORDER BY ${sort})
            TO ${quoteLiteral(chunk)} (${parquetOptions(table)})`),
        );
        const entry = await this.keep(sql, table, partition, dirRel, chunk, count);
        if (entry !== undefined) entries.push(entry);
      }
      return entries;
    };
    const old = await this.usable(sql, table, oldEntries);
    if (chunked && old.length === 0 && stagedRows > CHUNK_ROWS) {
      // Nothing to merge: the files are cut from the staged rows directly. Writing the partition whole
      // and cutting that file wrote, read and sorted every row twice.
      // The files cut from a written file carry the directory's hive keys as columns (read_parquet adds
      // them, the year as BIGINT); these carry them too, so that the same rows make the same files.
      const hive = keys.map(
        (k) => `CAST(${quoteLiteral(partition[k]!)} AS ${k === 'year' ? 'BIGINT' : 'VARCHAR'}) AS ${q(k)}`,
      );
      const staged = `(SELECT ${[colList, ...hive].join(', ')} FROM ${q(table)} WHERE ${where})`;
      const ranges = await sessionChunks(sql, staged, sessionColumn!);
      if (ranges.length >= 2) return writeChunks(staged, ranges);
    }
    let temp = path.join(dirAbs, `.tmp-${process.pid}-${Date.now()}.parquet`);
    this.written.add(temp);
    let rows: number;
    try {
      rows = await copy(old, temp);
    } catch (error) {
      // A file whose pages are damaged passes the size and footer checks: only its content hash tells.
      await fs.rm(temp, { force: true });
      const intact = await this.usable(sql, table, old, true);
      if (intact.length === old.length) throw error;
      temp = path.join(dirAbs, `.tmp-${process.pid}-${Date.now()}-again.parquet`);
      this.written.add(temp);
      rows = await copy(intact, temp);
    }
    const ranges =
      !chunked || rows <= CHUNK_ROWS
        ? undefined
        : await sessionChunks(sql, `read_parquet(${quoteLiteral(temp)})`, sessionColumn!);
    if (ranges === undefined || ranges.length < 2) {
      const entry = await this.keep(sql, table, partition, dirRel, temp, rows);
      return entry === undefined ? [] : [entry];
    }
    const entries = await writeChunks(`read_parquet(${quoteLiteral(temp)})`, ranges);
    await fs.rm(temp, { force: true });
    return entries;
  }

  /** Names a written file by its content hash, durably, and describes it (with its sessions). */
  private async keep(
    sql: SqlSession,
    table: TableName,
    partition: Record<string, string>,
    dirRel: string,
    temp: string,
    rows: number,
  ): Promise<FileEntry | undefined> {
    const dirAbs = path.join(this.dir, dirRel);
    await fsyncFile(temp);
    const sha256 = await sha256File(temp);
    const name = `${sha256.slice(0, 32)}.parquet`;
    this.written.add(path.join(dirAbs, name));
    await fs.rename(temp, path.join(dirAbs, name));
    await fsyncDirectory(dirAbs);
    const { size } = await fs.stat(path.join(dirAbs, name));
    const entry: FileEntry = { path: `${dirRel}/${name}`, sha256, rows, bytes: size, partition };
    const sessionColumn = YEAR_COLUMN[table];
    if (sessionColumn !== undefined && rows > 0) {
      // Which sessions the file holds, so that readers open only the files a query's sessions need.
      const [range] = await sql.all<{ first: string; last: string }>(
        `SELECT CAST(min(${q(sessionColumn)}) AS VARCHAR) AS first, CAST(max(${q(sessionColumn)}) AS VARCHAR) AS last
         FROM read_parquet(${quoteLiteral(path.join(dirAbs, name))})`,
      );
      if (range !== undefined) entry.sessions = { first: range.first, last: range.last };
    }
    if (hasSessionColumns(table) && rows > 0) {
      // Derived from the file just named, before the manifest lists it: a reader finds both or neither.
      const abs = path.join(dirAbs, name);
      this.written.add(sessionColumnsPath(abs));
      this.written.add(sessionColumnsTemp(sessionColumnsPath(abs)));
      // Every file kept here was written sorted by TABLE_SORT: session, then option symbol.
      await writeSessionColumns(sql, table, abs, sha256, true);
    }
    if (table === 'contracts') {
      // The same for an underlying's contracts: its contract table is then one read of a file.
      const abs = path.join(dirAbs, name);
      this.written.add(contractColumnsPath(abs));
      this.written.add(sessionColumnsTemp(contractColumnsPath(abs)));
      await writeContractColumns(sql, abs, sha256, sessionColumnsTemp);
    }
    return entry;
  }
}

/** The tables read a session at a time, whose large partitions are kept as files of session ranges. */
const CHUNKED: ReadonlySet<TableName> = new Set(['option_quotes', 'open_interest']);

/** About how many rows a file of a large partition holds (32 row groups of 8,192). */
const CHUNK_ROWS = 262_144;

/**
 * The sessions of `source` (a table expression: a written file, or staged rows) cut into consecutive
 * ranges of about CHUNK_ROWS rows (a session is never cut).
 */
async function sessionChunks(
  sql: SqlSession,
  source: string,
  column: string,
): Promise<{ first: string; last: string }[]> {
  const sessions = await sql.all<{ session: string; n: number }>(
    `SELECT CAST(${q(column)} AS VARCHAR) AS session, count(*) AS n FROM ${source} AS source
     GROUP BY ALL ORDER BY 1`,
  );
  const ranges: { first: string; last: string }[] = [];
  let rows = 0;
  for (const { session, n } of sessions) {
    const open = ranges.at(-1);
    if (open === undefined || rows >= CHUNK_ROWS) {
      ranges.push({ first: session, last: session });
      rows = 0;
    } else open.last = session;
    rows += Number(n);
  }
  return ranges;
}

/** The temporary name `writeManifest` gives the next manifest before renaming it. */
const MANIFEST_TEMP = /^manifest\.json\.\d+\.tmp$/;

/**
 * Removes a new store's directory that holds no manifest: the files a writer makes there, then each
 * directory from the store up to `created`, the outermost one made for it. A directory something else
 * was put in is not empty and stays.
 */
async function removeCreated(root: string, created: string): Promise<void> {
  if (
    await fs.access(path.join(root, MANIFEST_FILE)).then(
      () => true,
      () => false,
    )
  )
    return;
  for (const name of [TABLES_DIR, SPILL_DIR, LOCK_FILE]) {
    await fs.rm(path.join(root, name), { recursive: true, force: true }).catch(() => {});
  }
  for (let dir = root; ; dir = path.dirname(dir)) {
    if (
      !(await fs.rmdir(dir).then(
        () => true,
        () => false,
      ))
    )
      return;
    if (dir === created || path.dirname(dir) === dir) return;
  }
}
