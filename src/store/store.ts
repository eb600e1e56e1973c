/**
 * The read path: a store opened read-only pins one manifest and exposes each canonical table as a DuckDB
 * view over exactly that manifest's files. Any number of processes may read while one writes; `refresh()`
 * moves to a newer manifest when the caller wants it.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StoreError } from '../errors.js';
import { type Manifest, readManifest } from './manifest.js';
import { readParquetSql } from './parquet.js';
import { createTableSql, TABLE_PARTITIONS, TABLES, type TableName } from './schema.js';
import { quoteIdentifier as q, type SqlOptions, SqlSession } from './sql.js';

/** The DuckDB memory limit of a reader unless the caller sets one. */
export const DEFAULT_READER_MEMORY = '256MB';

/** Options for opening a store. */
export type OpenStoreOptions = SqlOptions;

/** A store opened for reading: one DuckDB per store per process, pinned to one manifest. */
export class StoreReader {
  /** Whether each table is currently a view over files or an empty table (a store without its files). */
  private readonly defined = new Map<TableName, 'VIEW' | 'TABLE'>();

  private constructor(
    readonly dir: string,
    readonly sql: SqlSession,
    private current: Manifest,
    private readonly spill: string | undefined,
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
    const sql = await SqlSession.open({
      memoryLimit: DEFAULT_READER_MEMORY,
      ...(spill === undefined ? {} : { tempDirectory: spill }),
      ...options,
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
    const reader = new StoreReader(root, sql, manifest, spill);
    await reader.defineViews();
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

  /** Moves to the newest committed manifest; returns whether the version changed. */
  async refresh(): Promise<boolean> {
    const manifest = await readManifest(this.dir);
    if (manifest === undefined || manifest.dataVersion === this.current.dataVersion) return false;
    this.current = manifest;
    await this.defineViews();
    return true;
  }

  /** Closes the DuckDB of this reader (and removes what its queries spilled). */
  close(): void {
    this.sql.close();
    try {
      if (this.spill !== undefined) rmSync(this.spill, { recursive: true, force: true });
    } catch {
      // Scratch under the system's temporary directory: its cleaning is the system's then.
    }
  }

  private async defineViews(): Promise<void> {
    for (const table of Object.keys(TABLES) as TableName[]) {
      const files = this.current.tables[table].map((f) => path.join(this.dir, f.path));
      const kind = this.defined.get(table);
      if (kind !== undefined) await this.sql.run(`DROP ${kind} ${q(table)}`);
      if (files.length === 0) {
        await this.sql.run(createTableSql(table));
        this.defined.set(table, 'TABLE');
        continue;
      }
      this.defined.set(table, 'VIEW');
      const columns = TABLES[table].map((c) => `CAST(${q(c.name)} AS ${c.type}) AS ${q(c.name)}`);
      await this.sql.run(
        `CREATE VIEW ${q(table)} AS SELECT ${columns.join(', ')} FROM ${readParquetSql(files, TABLE_PARTITIONS[table])}`,
      );
    }
  }
}
