/**
 * The read path: a store opened read-only pins one manifest and exposes each canonical table as a DuckDB
 * view over exactly that manifest's files. Any number of processes may read while one writes; `refresh()`
 * moves to a newer manifest when the caller wants it.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StoreError, storeClosedError } from '../errors.js';
import { type ContractColumns, contractColumnsPath, readContractColumns } from './contract-columns.js';
import { type FooterFacts, footerFacts } from './footer.js';
import {
  type DamagedFile,
  describeDamage,
  FOOTER_CHECK_SQL,
  footerCheck,
  footerWalkDamage,
  quickCheckSync,
} from './integrity.js';
import type { FileEntry, Manifest } from './manifest.js';
import { readManifest } from './manifest.js';
import { readParquetSql } from './parquet.js';
import { TABLE_PARTITIONS, TABLES, type TableName } from './schema.js';
import {
  SessionColumnsFile,
  type SessionColumnsPart,
  type SessionColumnsTable,
  sessionColumnsPath,
} from './session-columns.js';
import {
  type PartitionExtent,
  quoteIdentifier as q,
  quoteLiteral,
  type SessionRange,
  type SqlOptions,
  SqlSession,
} from './sql.js';

/** The DuckDB memory limit of a reader unless the caller sets one. */
export const DEFAULT_READER_MEMORY = '256MB';

/**
 * The greatest integer of nine digits (`narrowColumns`): within it a value fits a 32-bit INTEGER and a
 * decimal's digits a DECIMAL(9, s), both stored in 32 bits.
 */
const NINE_DIGITS = 999_999_999;

/** Options for opening a store. */
export type OpenStoreOptions = SqlOptions & {
  /**
   * Whether a session's rows are read from the session column files beside the Parquet files when they
   * are there (`session-columns.ts`), and contracts from the contract column files
   * (`contract-columns.ts`); false reads every row through DuckDB. Default true.
   */
  readonly sessionColumns?: boolean;
};

/** A file's footer as a reader keeps it: what its walk told, and its integer columns of nine digits at most. */
type KeptFooter = { readonly facts: FooterFacts; readonly narrow: ReadonlySet<string> };

/** A store opened for reading: one DuckDB per store per process, pinned to one manifest. */
export class StoreReader {
  /** The files of the pinned manifest found missing or damaged by the views made and the partitions read. */
  private unusable: readonly DamagedFile[] = [];
  /** Files whose footer DuckDB has read since they last passed the quick check: not read again. */
  private readonly footersRead = new Set<string>();
  /**
   * Files whose footer walked whole in JavaScript since they last passed the quick check: not walked
   * again, but still read by DuckDB when a statement fails ({@link checkFooters}).
   */
  private readonly footersWalked = new Set<string>();
  /** Files of the pinned manifest whose footer DuckDB could not read: left out of the views made. */
  private readonly badFooters = new Map<string, DamagedFile>();
  /** Per file path: what its footer's one walk told, and the columns it lets go in 32 bits (`footerOf`). */
  private readonly footers = new Map<string, KeptFooter>();
  /** The views made for the pinned manifest, by table: each is made on the first statement that reads it. */
  private readonly made = new Map<TableName, Promise<void>>();
  /** The views made and done (`made` also holds those still being made). */
  private readonly ready = new Set<TableName>();
  /** Per Parquet file path: its session column file, checked once (null: none usable). */
  private readonly sessionFiles = new Map<string, SessionColumnsFile | null>();
  /** Set by `close`: no file of the store is opened again (its footers, its session column files). */
  private closed = false;
  /** The pinned manifest's files by table and underlying (`entriesOf`), made on first use. */
  private byUnderlying: { manifest: Manifest; tables: Map<TableName, Map<string, FileEntry[]>> } | undefined;

  private constructor(
    readonly dir: string,
    readonly sql: SqlSession,
    private current: Manifest,
    private readonly spill: string | undefined,
    private readonly useSessionColumns: boolean,
  ) {}

  /** Opens the store in `dir` for reading. */
  static async open(dir: string, options: OpenStoreOptions = {}): Promise<StoreReader> {
    const root = path.resolve(dir);
    const manifest = await readManifest(root);
    if (manifest === undefined) {
      throw new StoreError(
        `${dir} is not a pitchain store (no manifest.json); create one with pitchain ingest or generate`,
      );
    }
    // A reader streams a few row groups at a time; a bounded buffer pool keeps a long-running reader (a
    // notebook, the server) from holding the decoded Parquet of every session it has touched.
    // What a query spills goes to a directory of this reader's own under the system's temporary directory:
    // DuckDB's default is `.tmp` in the working directory, shared by every reader started there, and the
    // store may be read-only. The directory only exists once something spilled; closing removes it.
    const spill =
      options.tempDirectory === undefined
        ? path.join(os.tmpdir(), `pitchain-reader-${process.pid}-${randomUUID().slice(0, 8)}`)
        : undefined;
    const { sessionColumns = true, ...sqlOptions } = options;
    const sql = await SqlSession.open({
      memoryLimit: DEFAULT_READER_MEMORY,
      ...(spill === undefined ? {} : { tempDirectory: spill }),
      ...sqlOptions,
    });
    // The store's files are content-addressed and never rewritten, so their footers can be kept.
    await sql.run('SET parquet_metadata_cache = true');
    // Their bytes are not kept in the buffer pool as well: the operating system's page cache already holds
    // recently read files, and a second copy in the pool counts in the process's memory (current chains
    // peaked at 281-304 MB with it, 266-273 MB without, at the same speed).
    await sql.run('SET enable_external_file_cache = false');
    // The queries put the small side of a join in the IN (…) subquery; left to its estimates of filtered
    // Parquet scans, DuckDB would sometimes build its hash table on millions of rows instead.
    await sql.run("SET disabled_optimizers = 'build_side_probe_side'");
    const reader = new StoreReader(root, sql, manifest, spill, sessionColumns);
    // Opening reads the manifest only: a view over every file of a table costs some 10 ms per thousand
    // files to make (and each file a stat), so each is made on the first statement that reads it.
    sql.prepare = (text) => reader.viewsOf(text);
    sql.tableSource = (table, partition, sessions) => reader.partitionSql(table, partition, sessions);
    sql.emptySource = (table, partition, sessions) => reader.emptyColumns(table, partition, sessions);
    sql.narrowSource = (table, partition, sessions) => reader.narrowColumns(table, partition, sessions);
    sql.extentSource = (table, partition) => reader.extent(table, partition);
    if (sessionColumns) {
      sql.sessionColumnsSource = (table, partition, sessions) =>
        reader.sessionColumns(table, partition, sessions);
      sql.contractColumnsSource = (underlying) => reader.contractColumns(underlying);
    }
    sql.recover = (error, text) => reader.recover(error, text);
    return reader;
  }

  /** The manifest this reader is pinned to. */
  get manifest(): Manifest {
    return this.current;
  }

  /** The data version (manifest content hash) this reader answers from. */
  get dataVersion(): string {
    return this.current.dataVersion;
  }

  /**
   * The files of the pinned manifest known to be missing or damaged: a query that needs one fails with a
   * StoreError naming it, while queries of other tables and partitions answer as usual. A file is checked
   * when a statement first reads its table's view or its partition (opening checks none): missing files
   * and files of the wrong size are known from then on; a file whose footer cannot be read, once a query
   * of its partition has tried (`pitchain verify` checks every file).
   */
  get damaged(): readonly DamagedFile[] {
    return this.unusable;
  }

  /**
   * Moves to the newest committed manifest; returns whether the version changed. Each view is replaced in
   * one statement when a statement next reads it, so a query running beside it sees the old view or the
   * new one, never none. At the same version, views that left out a missing or damaged file are made
   * again, so a file put back is read.
   */
  async refresh(): Promise<boolean> {
    const manifest = await readManifest(this.dir);
    if (manifest === undefined || manifest.dataVersion === this.current.dataVersion) {
      if (this.unusable.length > 0) this.forgetViews();
      return false;
    }
    this.current = manifest;
    this.forgetViews();
    return true;
  }

  /** Lets the views and what their files were found to be go: they are made again on their next use. */
  private forgetViews(): void {
    this.made.clear();
    this.ready.clear();
    this.badFooters.clear();
    this.unusable = [];
  }

  /**
   * Makes the views a statement reads (by its text) that are not made yet, and waits for those another
   * statement is making: a statement run while its view was still being made failed, DuckDB finding no
   * such table (two requests at once, the first of a server to read the splits).
   */
  private async viewsOf(text: string): Promise<void> {
    if (this.ready.size === TABLE_NAMES.length) return;
    for (const table of TABLE_NAMES) {
      if (!this.ready.has(table) && VIEW_USE[table].test(text)) await this.view(table);
    }
  }

  /** The view of `table` over the pinned manifest's files, made once (again after a failure). */
  private view(table: TableName): Promise<void> {
    let made = this.made.get(table);
    if (made === undefined) {
      made = this.defineView(table);
      this.made.set(table, made);
      const pending = made;
      pending.then(
        () => {
          if (this.made.get(table) === pending) this.ready.add(table);
        },
        () => {
          if (this.made.get(table) === pending) this.made.delete(table);
        },
      );
    }
    return made;
  }

  /**
   * After a failed statement (the text `text`): when it named a view not made yet (in a way {@link VIEW_USE} does not
   * see), makes it; else checks the footers not read yet ({@link checkFooters}). Returns whether it set
   * something right (then the statement is worth running again).
   */
  async recover(error: unknown, text: string): Promise<boolean> {
    // A footer check fails when its file is damaged: that is its answer, not something to set right.
    if (text === FOOTER_CHECK_SQL) return false;
    const missing = TABLE_NAMES.find(
      (table) => !this.ready.has(table) && String(error).includes(`Table with name ${table} does not exist`),
    );
    if (missing !== undefined) {
      await this.view(missing);
      return true;
    }
    return this.checkFooters();
  }

  /**
   * A table expression over only the files of one partition of `table` (`partition` gives some or all
   * of its partition keys) and, for a table partitioned by year, only the years of `sessions`, in the
   * table's canonical columns. Planning and opening it cost the same in a store of 20 files or 20,000. A
   * missing or damaged file stands as a row raising an error that names it, as in the views, and is checked
   * again on every use, so a file put back is read again.
   */
  async partitionSql(
    table: TableName,
    partition: Readonly<Record<string, string>>,
    sessions?: SessionRange,
  ): Promise<string> {
    const entries = this.entriesOf(table, partition).filter((entry) =>
      inPartition(entry, partition, sessions),
    );
    const damaged: DamagedFile[] = [];
    for (const entry of entries) {
      // Run on every query, for each file it reads: a sync stat costs a fraction of one through the
      // thread pool (see quickCheckSync).
      const quick = quickCheckSync(this.dir, table, entry);
      if (quick !== undefined) {
        this.footersRead.delete(entry.path);
        this.footersWalked.delete(entry.path);
        this.footers.delete(entry.path);
        damaged.push(quick);
      } else if (!this.footersRead.has(entry.path) && !this.footersWalked.has(entry.path)) {
        // The footer walked in JavaScript; by DuckDB itself once found unreadable, so that a file put back
        // is read again only when DuckDB reads it.
        const byDuckdb = this.badFooters.has(entry.path);
        const footer = byDuckdb
          ? await footerCheck(this.sql, this.dir, table, entry)
          : footerWalkDamage(table, entry, this.footerOf(entry).facts.problem);
        if (footer === undefined) {
          (byDuckdb ? this.footersRead : this.footersWalked).add(entry.path);
          this.badFooters.delete(entry.path);
        } else {
          damaged.push(footer);
          this.badFooters.set(entry.path, footer);
        }
      }
    }
    this.noteChecked(entries, damaged);
    return `(${tableSql(this.dir, table, entries, damaged)})`;
  }

  /**
   * The integer columns whose every value in the files of one partition of a table (within a range of
   * sessions) has at most nine digits, by the files' footers (`FooterFacts.integerBounds`).
   */
  narrowColumns(
    table: TableName,
    partition: Readonly<Record<string, string>>,
    sessions?: SessionRange,
  ): ReadonlySet<string> {
    return this.inEveryFile(table, partition, sessions, (footer) => footer.narrow);
  }

  /**
   * The columns every file of one partition of a table (within a range of sessions) holds only NULLs in, by
   * the files' footers (`FooterFacts.allNull`).
   */
  emptyColumns(
    table: TableName,
    partition: Readonly<Record<string, string>>,
    sessions?: SessionRange,
  ): ReadonlySet<string> {
    return this.inEveryFile(table, partition, sessions, (footer) => footer.facts.allNull);
  }

  /**
   * What the footer of `entry`'s file tells, walked once: kept when it walked whole (store files never
   * change). One that does not walk (a file missing or damaged) lends no statistics and is walked again
   * next time, so a file put back is read as it is then.
   */
  private footerOf(entry: FileEntry): KeptFooter {
    // Every read of the store's files in JavaScript starts here (session and contract column files too).
    if (this.closed) throw storeClosedError();
    let kept = this.footers.get(entry.path);
    if (kept === undefined) {
      const facts = footerFacts(path.join(this.dir, entry.path));
      const fitting = [...facts.integerBounds].filter(
        ([, [low, high]]) => low >= -NINE_DIGITS && high <= NINE_DIGITS,
      );
      kept = { facts, narrow: new Set(fitting.map(([name]) => name)) };
      if (facts.problem === undefined) this.footers.set(entry.path, kept);
    }
    return kept;
  }

  /** The names in the set `read` takes from the footer of every file of one partition of a table (within a range of sessions). */
  private inEveryFile(
    table: TableName,
    partition: Readonly<Record<string, string>>,
    sessions: SessionRange | undefined,
    read: (footer: KeptFooter) => ReadonlySet<string>,
  ): ReadonlySet<string> {
    let common: Set<string> | undefined;
    for (const entry of this.entriesOf(table, partition)) {
      if (!inPartition(entry, partition, sessions)) continue;
      const those = read(this.footerOf(entry));
      common = new Set(common === undefined ? those : [...common].filter((name) => those.has(name)));
      if (common.size === 0) break;
    }
    return common ?? new Set();
  }

  /**
   * Where the rows of the sessions `first`…`last` of one partition of `table` lie in session column
   * files (see `SqlSession.sessionColumns`): undefined when they must be read through DuckDB (a file
   * without one, a file missing or damaged, two files holding a session, a store that does not record its
   * files' sessions).
   */
  sessionColumns(
    table: SessionColumnsTable,
    partition: Readonly<Record<string, string>>,
    sessions: { readonly first: string; readonly last: string },
  ): SessionColumnsPart[] | undefined {
    if (!this.useSessionColumns) return undefined;
    const entries = this.entriesOf(table, partition).filter((entry) =>
      inPartition(entry, partition, sessions),
    );
    if (entries.some((entry) => entry.sessions === undefined)) return undefined;
    entries.sort((a, b) => (a.sessions!.first < b.sessions!.first ? -1 : 1));
    const firstDay = dayNumber(sessions.first);
    const lastDay = dayNumber(sessions.last);
    const parts: SessionColumnsPart[] = [];
    for (const [i, entry] of entries.entries()) {
      // A session in two files is read through DuckDB, which reads them in its own order.
      if (i > 0 && entry.sessions!.first <= entries[i - 1]!.sessions!.last) return undefined;
      const file = this.sessionColumnsFile(table, entry);
      if (file === undefined) return undefined;
      for (const day of file.days()) {
        if (day >= firstDay && day <= lastDay) parts.push({ file, day, rows: file.rowsOf(day) });
      }
    }
    return parts;
  }

  /**
   * The session column file of `entry`, checked once: undefined when there is none usable, or when the
   * Parquet file is missing or damaged (then it is read, and reported as a query of it would be).
   */
  private sessionColumnsFile(table: TableName, entry: FileEntry): SessionColumnsFile | undefined {
    if (this.badFooters.has(entry.path) || quickCheckSync(this.dir, table, entry) !== undefined)
      return undefined;
    if (this.footerOf(entry).facts.problem !== undefined) return undefined;
    let file = this.sessionFiles.get(entry.path);
    if (file === undefined) {
      file =
        SessionColumnsFile.open(
          path.join(this.dir, sessionColumnsPath(entry.path)),
          entry.sha256,
          entry.rows,
        ) ?? null;
      this.sessionFiles.set(entry.path, file);
    }
    return file ?? undefined;
  }

  /**
   * An underlying's contracts from the contract column file of its contracts file (see
   * `SqlSession.contractColumns`): undefined when the partition is not one file, the Parquet file is
   * missing or damaged (its statement then reports it), or the derived file is not there and whole.
   */
  contractColumns(underlying: string): ContractColumns | undefined {
    const entries = this.entriesOf('contracts', { underlying });
    if (entries.length !== 1) return undefined;
    const entry = entries[0]!;
    if (this.badFooters.has(entry.path) || quickCheckSync(this.dir, 'contracts', entry) !== undefined)
      return undefined;
    if (this.footerOf(entry).facts.problem !== undefined) return undefined;
    return readContractColumns(
      path.join(this.dir, contractColumnsPath(entry.path)),
      entry.sha256,
      entry.rows,
    );
  }

  /**
   * The files of `table` that may be of `partition`: its underlying's when it names one, from an index of
   * the pinned manifest made once, else every file (`inPartition` then picks). A chain's reads ask for one
   * underlying's files several times a session, and looking through every file of the table grew with the
   * store (824 quote files in the 213 M-row bench store).
   */
  private entriesOf(table: TableName, partition: Readonly<Record<string, string>>): readonly FileEntry[] {
    const all = this.current.tables[table];
    const underlying = partition['underlying'];
    if (underlying === undefined) return all;
    if (this.byUnderlying?.manifest !== this.current) {
      this.byUnderlying = { manifest: this.current, tables: new Map() };
    }
    let files = this.byUnderlying.tables.get(table);
    if (files === undefined) {
      files = new Map();
      for (const entry of all) {
        // A file without an underlying is in no underlying's partition.
        const of = entry.partition['underlying'];
        if (of === undefined) continue;
        let list = files.get(of);
        if (list === undefined) {
          list = [];
          files.set(of, list);
        }
        list.push(entry);
      }
      this.byUnderlying.tables.set(table, files);
    }
    return files.get(underlying) ?? [];
  }

  /** One partition's rows and the sessions they span, from the pinned manifest (see `SqlSession.extent`). */
  extent(table: TableName, partition: Readonly<Record<string, string>>): PartitionExtent | undefined {
    let rows = 0;
    let first: string | undefined;
    let last: string | undefined;
    for (const entry of this.entriesOf(table, partition)) {
      if (!inPartition(entry, partition, undefined)) continue;
      if (entry.sessions === undefined) return undefined;
      rows += entry.rows;
      if (first === undefined || entry.sessions.first < first) first = entry.sessions.first;
      if (last === undefined || entry.sessions.last > last) last = entry.sessions.last;
    }
    return first === undefined || last === undefined ? undefined : { rows, first, last };
  }

  /**
   * Closes the reader's DuckDB and the files it keeps open, and removes what its queries spilled; every
   * later read throws {@link storeClosedError}.
   */
  close(): void {
    this.closed = true;
    for (const file of this.sessionFiles.values()) file?.closeIdle();
    this.sessionFiles.clear();
    this.footers.clear();
    this.sql.close();
    try {
      if (this.spill !== undefined) rmSync(this.spill, { recursive: true, force: true });
    } catch {
      // Scratch under the system's temporary directory: its cleaning is the system's then.
    }
  }

  /**
   * Makes the table's view over the pinned manifest's files. A file that is missing, truncated or whose
   * footer DuckDB cannot read is left out of the files read and stands in the view as one row of its partition's values
   * whose every other column, and whose mere presence, raise an error naming the file. A query that
   * filters on another partition (another underlying, symbol or resolution) never reaches that row.
   */
  private async defineView(table: TableName): Promise<void> {
    const entries = this.current.tables[table];
    const found = entries
      .map((entry) => quickCheckSync(this.dir, table, entry))
      .filter((problem) => problem !== undefined);
    // Files whose footer was found unreadable stay out while they still have their recorded size.
    for (const entry of entries) {
      const problem = this.badFooters.get(entry.path);
      if (problem !== undefined && !found.some((f) => f.path === problem.path)) found.push(problem);
    }
    const known = new Set(found.map((f) => f.path));
    const readable = entries.filter((entry) => !known.has(entry.path));
    // Footers are not read here: that costs some 0.3 ms a file, and grows with the store. A query reads
    // the footers of the files it needs; the partition queries (`partitionSql`) check them first, to
    // name a damaged one. Only when DuckDB cannot make the view (it reads one file's schema for it) is
    // every footer checked, one by one, to leave out the ones it cannot read.
    const view = (left: readonly DamagedFile[]) =>
      this.sql.run(`CREATE OR REPLACE VIEW ${q(table)} AS ${tableSql(this.dir, table, entries, left)}`);
    const made =
      entries.length > 0 &&
      (await view(found).then(
        () => true,
        () => false,
      ));
    if (!made && entries.length > 0) {
      for (const entry of readable) {
        const problem = await footerCheck(this.sql, this.dir, table, entry);
        if (problem === undefined) this.footersRead.add(entry.path);
        else {
          found.push(problem);
          this.badFooters.set(entry.path, problem);
        }
      }
      await view(found);
    }
    if (entries.length === 0) await view([]);
    this.noteChecked(entries, found);
  }

  /**
   * After a failed statement: reads the footers of every file not read yet (the views' files are not
   * checked on opening), and when one cannot be read, makes the views again without it; returns whether
   * it found one (then the statement is worth running again).
   */
  async checkFooters(): Promise<boolean> {
    const found: DamagedFile[] = [];
    const bad = new Set(this.unusable.map((d) => d.path));
    for (const table of Object.keys(TABLES) as TableName[]) {
      const unread: FileEntry[] = [];
      for (const entry of this.current.tables[table]) {
        if (this.footersRead.has(entry.path) || bad.has(entry.path)) continue;
        // A file not there at its size has no footer to read (views are made on use: it may not be known yet).
        const quick = quickCheckSync(this.dir, table, entry);
        if (quick === undefined) unread.push(entry);
        else found.push(quick);
      }
      if (unread.length === 0) continue;
      // Every footer in one statement; one by one only when that fails, to name the file.
      const list = unread.map((entry) => quoteLiteral(path.join(this.dir, entry.path))).join(', ');
      const all = await this.sql.value(`SELECT count(*) FROM parquet_file_metadata([${list}])`).then(
        () => true,
        () => false,
      );
      for (const entry of unread) {
        const problem = all ? undefined : await footerCheck(this.sql, this.dir, table, entry);
        if (problem === undefined) this.footersRead.add(entry.path);
        else {
          found.push(problem);
          this.badFooters.set(entry.path, problem);
          this.footersWalked.delete(entry.path);
        }
      }
    }
    if (found.length === 0) return false;
    this.unusable = [...this.unusable, ...found];
    for (const problem of found)
      if (problem.problem === 'damaged') this.badFooters.set(problem.path, problem);
    // The views made so far are made again without the files found unreadable.
    const tables = [...this.made.keys()];
    this.made.clear();
    this.ready.clear();
    for (const table of tables) await this.view(table);
    return true;
  }

  /** Notes what a partition query found of the files it checked, in `damaged`. */
  private noteChecked(checked: readonly FileEntry[], found: readonly DamagedFile[]): void {
    const paths = new Set(checked.map((entry) => entry.path));
    this.unusable = [...this.unusable.filter((d) => !paths.has(d.path)), ...found];
  }
}

/** The canonical tables, in the schema's order. */
const TABLE_NAMES = Object.keys(TABLES) as TableName[];

/**
 * Whether a statement reads a table's view: the table named after FROM or JOIN, bare or quoted (the
 * partition queries name files, whose paths hold the table's name after a slash).
 */
const VIEW_USE = Object.fromEntries(
  TABLE_NAMES.map((table) => [table, new RegExp(`\\b(?:FROM|JOIN)\\s+"?${table}"?(?![\\w(])`, 'i')]),
) as Record<TableName, RegExp>;

/**
 * Whether a file belongs to the partition (every key given matches) and, when its table is partitioned
 * by year, holds a year of the sessions; when the manifest records the file's sessions, whether they
 * meet the range.
 */
/** An ISO date's day number (days since 1970-01-01). */
function dayNumber(iso: string): number {
  return Date.parse(`${iso}T00:00:00Z`) / 86_400_000;
}

function inPartition(
  entry: FileEntry,
  partition: Readonly<Record<string, string>>,
  sessions: SessionRange | undefined,
): boolean {
  for (const key in partition) if (entry.partition[key] !== partition[key]) return false;
  if (sessions === undefined) return true;
  const year = entry.partition['year'];
  if (year !== undefined) {
    if (sessions.first !== undefined && year < sessions.first.slice(0, 4)) return false;
    if (sessions.last !== undefined && year > sessions.last.slice(0, 4)) return false;
  }
  if (entry.sessions !== undefined) {
    if (sessions.first !== undefined && entry.sessions.last < sessions.first) return false;
    if (sessions.last !== undefined && entry.sessions.first > sessions.last) return false;
  }
  return true;
}

/**
 * The rows of `table` in the files of `entries` (none: no rows), in the canonical columns, with one
 * failing row standing for each damaged file.
 */
function tableSql(
  dir: string,
  table: TableName,
  entries: readonly FileEntry[],
  damaged: readonly DamagedFile[],
): string {
  const bad = new Set(damaged.map((d) => d.path));
  const files = entries.filter((f) => !bad.has(f.path)).map((f) => path.join(dir, f.path));
  const parts: string[] = [];
  if (entries.length === 0) {
    const columns = TABLES[table].map((c) => `CAST(NULL AS ${c.type}) AS ${q(c.name)}`);
    parts.push(`SELECT ${columns.join(', ')} WHERE false`);
  }
  if (files.length > 0) {
    const columns = TABLES[table].map((c) => `CAST(${q(c.name)} AS ${c.type}) AS ${q(c.name)}`);
    parts.push(`SELECT ${columns.join(', ')} FROM ${readParquetSql(files, TABLE_PARTITIONS[table])}`);
  }
  for (const file of damaged) {
    const partition = entries.find((f) => f.path === file.path)!.partition;
    const failure = `error(${quoteLiteral(describeDamage(dir, file))})`;
    // Partition values are constants, so a filter on another partition prunes the row before it runs.
    const known = TABLES[table].filter(
      (c) => TABLE_PARTITIONS[table].includes(c.name) && Object.hasOwn(partition, c.name),
    );
    const constants = known.map(
      (c) => `CAST(${quoteLiteral(partition[c.name]!)} AS ${c.type}) AS ${q(c.name)}`,
    );
    const columns = TABLES[table].map((c) =>
      known.includes(c) ? q(c.name) : `CAST(${failure} AS ${c.type}) AS ${q(c.name)}`,
    );
    const from = constants.length === 0 ? 'range(1)' : `(SELECT ${constants.join(', ')})`;
    parts.push(`SELECT ${columns.join(', ')} FROM ${from} WHERE CAST(${failure} AS BOOLEAN)`);
  }
  return parts.join(' UNION ALL ');
}
