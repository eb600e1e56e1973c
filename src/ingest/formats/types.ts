/**
 * What every ingest format is: the options it receives, what it reports for a file, and the staging
 * table it writes each canonical table into. The formats import this module and the registry
 * (`./index.ts`) imports the formats, so the two stay apart and no format module reads the registry.
 */
import type { TableName } from '../../store/schema.js';
import type { SqlSession } from '../../store/sql.js';

/** A file's line count and its blank lines, from one read of the file. */
export type LineScan = { readonly lines: number; readonly blank: readonly number[] };

/** A source row (or the whole file when `line` is undefined) an ingest refused, with a short exact reason. */
export type Reject = { readonly file: string; readonly line: number | undefined; readonly reason: string };

/** Options every format receives; formats ignore what they do not use. */
export type StageOptions = {
  /**
   * The staging table to INSERT into for each canonical table (default: the canonical name). Each has the
   * canonical columns, `_line` (1-based source line, header = line 1) and `_reject` (VARCHAR: a problem the
   * format found while parsing the row, e.g. a wrong type, else NULL; validation reports it). They are
   * empty when the format starts (CSV formats derive `_line` from insertion order); a format may add
   * scratch columns for its own use but drops them before it returns.
   */
  readonly tables?: Partial<Record<TableName, string>>;
  /** A mapping: the path of a JSON file, or inline JSON (formats `csv`, `candles`). */
  readonly mapping?: string;
  /**
   * The units of a file's vendor IV and Greeks (format `hod`, `lean-option-universe`): `auto` (detected per
   * file, the default), `none`, or divisors such as `theta=365,vega=100` (see `../greek-units.ts`).
   */
  readonly greeksUnits?: string;
  /** The instant of the ingest (default: now): a quote dated after it is refused. */
  readonly now?: Date;
  /** Keep going past a bad row or body: report it as a reject instead of failing. */
  readonly skipInvalid?: boolean;
  /**
   * Starts (or joins) the caller's scan of the file's lines, e.g. while hashing it; called once the
   * file's read is under way.
   */
  readonly scan?: () => Promise<LineScan>;
};

/**
 * What a format reports for one file: the source records it read (malformed ones included) and the rejects
 * that have no row in staging (malformed lines, file-level problems); rows' own problems go in `_reject`.
 */
export type StageResult = {
  readonly rows: number;
  readonly rejects: readonly Reject[];
  /**
   * Tables whose rows from this file have unique natural keys once validation has refused duplicate quotes
   * (e.g. open interest that is one figure per quote row); the commit then need not check them.
   */
  readonly uniqueKeys?: readonly TableName[];
  /** How the file's IV and Greeks were stored (`describeGreekUnits`), for the data-quality summary. */
  readonly greeksUnits?: string;
  /** The format has already found that validation refuses none of its rows (`anyRowRefused`). */
  readonly validated?: true;
};

/** One source format: its CLI name, a one-line description, and the function that stages a file. */
export type IngestFormat = {
  readonly name: string;
  readonly description: string;
  /** Reads CSV through `csv-source`, which starts `options.scan` once its read is under way. */
  readonly readsCsv?: true;
  stage(sql: SqlSession, file: string, options: StageOptions): Promise<StageResult>;
};

/** The staging table a format writes `table` into, honouring `options.tables`. */
export function stagingTable(options: StageOptions, table: TableName): string {
  return options.tables?.[table] ?? table;
}
