/**
 * The benchmark contract and its helpers. A benchmark is a `bench/<name>.bench.ts` module whose default
 * export is `defineBenchmark({ name, description, run })`; `bench/run.ts` runs each one in its own child
 * process (so memory and JIT state do not leak between them) and prints every row in one table.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as RunnerModule from '../src/backtest/runner.js';
import { UsageError } from '../src/errors.js';
import type * as StoreModule from '../src/library/store.js';
import { ensureBuilt } from '../test/helpers/build.js';

/** One line of the report: our figure, the baseline measured in the same run, and the verdict. */
export interface BenchRow {
  name: string;
  ours: number;
  baseline: number | null;
  unit: string;
  ratio: number | null;
  target: string;
  pass: boolean | null;
  note?: string;
}

/** What the runner hands a benchmark: where things are, scratch space, a progress log. */
export interface BenchContext {
  /** Absolute path of the repository root, ending in a separator. */
  repoRoot: string;
  /**
   * A shared file (real market data, documented examples: `data/options/…`, `spec/examples/…`) found where
   * the tests find it (test/helpers/shared-files.ts); throws, saying how to get it, when it is not here.
   */
  sharedFile(file: string): string;
  /** A fresh temp directory, removed by the runner after the benchmark finishes (even if it throws). */
  tempDir(prefix?: string): Promise<string>;
  /** Progress output on stderr, kept out of the report table. */
  log(message: string): void;
}

/** A benchmark module's default export. */
export interface Benchmark {
  name: string;
  description: string;
  run(ctx: BenchContext): Promise<BenchRow[]>;
}

/** Identity helper that gives a benchmark module its type. */
export function defineBenchmark(benchmark: Benchmark): Benchmark {
  return benchmark;
}

/** Absolute path of the repository root, ending in a separator. */
export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Summary of repeated timings, all in milliseconds. */
export interface Timing {
  p50Ms: number;
  p90Ms: number;
  meanMs: number;
  minMs: number;
  maxMs: number;
  iterations: number;
}

/** Runs `fn` `warmup` times unmeasured, then `iterations` times measured, and summarises the wall times. */
export async function timeIt(
  fn: () => unknown,
  options: { warmup?: number; iterations?: number } = {},
): Promise<Timing> {
  const warmup = options.warmup ?? 1;
  const iterations = options.iterations ?? 5;
  if (!Number.isInteger(warmup) || warmup < 0 || !Number.isInteger(iterations) || iterations < 1) {
    throw new UsageError(`timeIt: need integer warmup ≥ 0 and iterations ≥ 1, got ${warmup}, ${iterations}`);
  }
  for (let i = 0; i < warmup; i++) {
    await fn();
  }
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return summarise(samples);
}

/** p50/p90 (nearest rank), mean, min and max of a non-empty list of millisecond samples. */
export function summarise(samplesMs: readonly number[]): Timing {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const minMs = sorted[0];
  const maxMs = sorted.at(-1);
  if (minMs === undefined || maxMs === undefined) {
    throw new UsageError('summarise: no samples');
  }
  // The nearest rank of p in (0, 1] is an index from 0 to length - 1, so the fallback never applies.
  const rank = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? maxMs;
  return {
    p50Ms: rank(0.5),
    p90Ms: rank(0.9),
    meanMs: sorted.reduce((sum, x) => sum + x, 0) / sorted.length,
    minMs,
    maxMs,
    iterations: sorted.length,
  };
}

/** Items per second for `count` items processed in `ms` milliseconds. */
export function perSecond(count: number, ms: number): number {
  return ms > 0 ? (count * 1000) / ms : Number.POSITIVE_INFINITY;
}

/** The machine's load averages over 1, 5 and 15 minutes, to print beside figures measured on it. */
export function loadAverage(): string {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
}

/** Current resident set size of this process in MB (1 MB = 2^20 bytes). */
export function rssMb(): number {
  return process.memoryUsage.rss() / 2 ** 20;
}

/**
 * Runs `fn` while sampling this process's RSS every `intervalMs` and returns its result with the peak in
 * MB. Sampling needs the event loop free, which holds while DuckDB works on its own threads; a long
 * synchronous JS stretch is only seen at its edges.
 */
export async function rssPeakMb<T>(
  fn: () => Promise<T> | T,
  options: { intervalMs?: number } = {},
): Promise<{ value: T; peakMb: number; baselineMb: number }> {
  const baselineMb = rssMb();
  let peakMb = baselineMb;
  const sample = () => {
    peakMb = Math.max(peakMb, rssMb());
  };
  const timer = setInterval(sample, options.intervalMs ?? 10);
  try {
    const value = await fn();
    sample();
    return { value, peakMb, baselineMb };
  } finally {
    clearInterval(timer);
  }
}

/** Runs `fn` with a fresh temp directory and removes the directory afterwards, whatever happens. */
export async function withTempDir<T>(
  fn: (dir: string) => Promise<T>,
  prefix = 'pitchain-bench-',
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A parsed target: relative to the baseline (`ours / baseline` against `factor`) or an absolute bound. */
export type Target =
  | { kind: 'relative'; op: Comparison; factor: number }
  | { kind: 'absolute'; op: Comparison; bound: number; unit: string };

type Comparison = '≤' | '<' | '≥' | '>';

const OPERATORS: Record<string, Comparison> = {
  '≤': '≤',
  '<=': '≤',
  '<': '<',
  '≥': '≥',
  '>=': '≥',
  '>': '>',
};
const TARGET_PATTERN = /^(≤|<=|<|≥|>=|>)\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(.*)$/i;
const RELATIVE_UNIT = /^[×x]\s*baseline\b/i;

/**
 * Parses targets such as `≥ 0.6× baseline throughput`, `≤ 1.3× baseline time` (ratio = ours / baseline)
 * or `≤ 10 ms` (an absolute bound on ours, in the row's unit; words after the unit are commentary).
 */
export function parseTarget(target: string): Target {
  const match = TARGET_PATTERN.exec(target.trim());
  if (match === null) {
    throw new UsageError(`unreadable benchmark target "${target}" (e.g. "≥ 0.6× baseline", "≤ 10 ms")`);
  }
  const [, symbol = '', number = '', tail = ''] = match;
  const op = OPERATORS[symbol];
  if (op === undefined) {
    throw new UsageError(`unknown comparison "${symbol}" in benchmark target "${target}"`);
  }
  const value = Number(number);
  const rest = tail.trim();
  if (RELATIVE_UNIT.test(rest)) {
    return { kind: 'relative', op, factor: value };
  }
  return { kind: 'absolute', op, bound: value, unit: rest.split(/\s+/)[0] ?? '' };
}

function holds(value: number, op: Comparison, bound: number): boolean {
  switch (op) {
    case '≤':
      return value <= bound;
    case '<':
      return value < bound;
    case '≥':
      return value >= bound;
    case '>':
      return value > bound;
  }
}

/**
 * Builds a row: ratio = ours / baseline when there is a non-zero baseline, pass judged against the
 * target. A relative target without a baseline gives pass = null; an absolute target must be stated in
 * the row's unit (a mismatch is a bug in the benchmark, so it throws).
 */
export function ratioRow(row: {
  name: string;
  ours: number;
  baseline?: number | null;
  unit: string;
  target: string;
  note?: string;
}): BenchRow {
  const baseline = row.baseline ?? null;
  const ratio = baseline !== null && baseline !== 0 ? row.ours / baseline : null;
  const target = parseTarget(row.target);
  let pass: boolean | null;
  if (target.kind === 'relative') {
    pass = ratio === null ? null : holds(ratio, target.op, target.factor);
  } else {
    if (target.unit !== '' && target.unit !== row.unit) {
      throw new UsageError(
        `benchmark "${row.name}": target "${row.target}" is not in the row's unit ${row.unit}`,
      );
    }
    pass = holds(row.ours, target.op, target.bound);
  }
  const result: BenchRow = {
    name: row.name,
    ours: row.ours,
    baseline,
    unit: row.unit,
    ratio,
    target: row.target,
    pass,
  };
  if (row.note !== undefined) {
    result.note = row.note;
  }
  return result;
}

/** A number for the table: integers with thousands separators, others to three significant digits. */
export function formatNumber(value: number | null): string {
  if (value === null) {
    return '—';
  }
  if (!Number.isFinite(value)) {
    return String(value);
  }
  const magnitude = Math.abs(value);
  if (magnitude >= 1000 || Number.isInteger(value)) {
    return Math.round(value).toLocaleString('en-US');
  }
  return value.toPrecision(3);
}

/** The table's columns in order: a header, how a row reads in it, and whether it holds numbers (right-aligned). */
const COLUMNS: ReadonlyArray<{ header: string; right: boolean; cell: (row: BenchRow) => string }> = [
  { header: 'name', right: false, cell: (row) => row.name },
  { header: 'ours', right: true, cell: (row) => formatNumber(row.ours) },
  { header: 'baseline', right: true, cell: (row) => formatNumber(row.baseline) },
  { header: 'unit', right: false, cell: (row) => row.unit },
  { header: 'ratio', right: true, cell: (row) => formatRatio(row.ratio) },
  { header: 'target', right: false, cell: (row) => row.target },
  { header: 'result', right: false, cell: (row) => (row.pass === null ? 'n/a' : row.pass ? 'pass' : 'FAIL') },
  { header: 'note', right: false, cell: (row) => row.note ?? '' },
];

/** Renders rows as one plain-text table with aligned columns (numbers right-aligned). */
export function formatTable(rows: readonly BenchRow[]): string {
  const columns = COLUMNS.map((column) => ({
    ...column,
    width: Math.max(width(column.header), ...rows.map((row) => width(column.cell(row)))),
  }));
  const render = (text: (column: (typeof columns)[number]) => string) =>
    columns
      .map((column) => {
        const cell = text(column);
        const pad = ' '.repeat(column.width - width(cell));
        return column.right ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd();
  const rule = columns.map((column) => '─'.repeat(column.width)).join('  ');
  return [
    render((column) => column.header),
    rule,
    ...rows.map((row) => render((column) => column.cell(row))),
  ].join('\n');
}

/** A ratio to two decimals (`0.62×`), more digits only when it is tiny. */
export function formatRatio(ratio: number | null): string {
  if (ratio === null) {
    return '—';
  }
  if (!Number.isFinite(ratio)) {
    return `${ratio}×`;
  }
  return `${ratio !== 0 && Math.abs(ratio) < 0.01 ? ratio.toPrecision(2) : ratio.toFixed(2)}×`;
}

/** Display width in terminal columns; every character the table uses (×, ≤, ≥, —) is one column wide. */
function width(text: string): number {
  return [...text].length;
}

/** The bytes of every file below `dir`. */
export async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? await directoryBytes(path) : (await stat(path)).size;
  }
  return total;
}

/**
 * Sources whose code decides the cached store's bytes: a change to them rebuilds it. The generator's
 * folder, and the store's writing side (not the reading side, so that a change to how the store is read
 * is measured on the same store).
 */
const STORE_CODE = [
  ['src', 'ingest', 'generator'],
  ['src', 'store', 'writer.ts'],
  ['src', 'store', 'session-columns.ts'],
  ['src', 'store', 'session-columns-write.ts'],
  ['src', 'store', 'contract-columns.ts'],
  ['src', 'store', 'contract-columns-write.ts'],
  ['src', 'store', 'derived-contracts.ts'],
  ['src', 'store', 'parquet.ts'],
  ['src', 'store', 'layout.ts'],
  ['src', 'store', 'schema.ts'],
  ['src', 'store', 'manifest.ts'],
] as const;

/**
 * A digest of the generator's and the store writer's sources, for a cached generated store. Whole-line
 * comments are left out (`withoutCommentLines`): the big store takes most of an hour to build, and a
 * reworded comment does not change a byte of it.
 */
export async function storeCodeDigest(repoRoot: string): Promise<string> {
  const hash = createHash('sha256');
  for (const parts of STORE_CODE) {
    const at = join(repoRoot, ...parts);
    const files = at.endsWith('.ts')
      ? [at]
      : (await readdir(at))
          .filter((n) => n.endsWith('.ts'))
          .sort()
          .map((n) => join(at, n));
    for (const file of files) {
      hash.update(file.slice(repoRoot.length)).update(withoutCommentLines(await readFile(file, 'utf8')));
    }
  }
  return hash.digest('hex');
}

/**
 * A source's text without the lines that are only comment: `//` lines, and the lines of a block comment
 * that opens at the start of its line (JSDoc). A comment after code on its line stays, and so does
 * anything else, so that only a change to what cannot run goes unseen.
 */
export function withoutCommentLines(source: string): string {
  const kept: string[] = [];
  let inBlock = false;
  for (const line of source.split('\n')) {
    const text = line.trim();
    if (!inBlock && text.startsWith('/*')) inBlock = true;
    if (inBlock) {
      const end = text.indexOf('*/', text.startsWith('/*') ? 2 : 0);
      if (end >= 0) {
        inBlock = false;
        // Code after the comment's end on its line is kept.
        const rest = text.slice(end + 2).trim();
        if (rest !== '') kept.push(rest);
      }
      continue;
    }
    if (text === '' || text.startsWith('//')) continue;
    kept.push(line);
  }
  return kept.join('\n');
}

/**
 * The backtest runner and `openStore` of the built package (`dist/`), as an installed pitchain runs them:
 * the benches that time a whole backtest load these, not the TypeScript sources through tsx (whose
 * transpiled functions carry extra naming calls a user's install never makes). Builds first if needed.
 */
export async function installedPitchain(): Promise<{
  backtest: typeof RunnerModule.backtest;
  openStore: typeof StoreModule.openStore;
}> {
  await ensureBuilt();
  const load = (file: string) => import(pathToFileURL(join(REPO_ROOT, 'dist', file)).href);
  const { backtest } = (await load('backtest/runner.js')) as typeof RunnerModule;
  const { openStore } = (await load('library/store.js')) as typeof StoreModule;
  return { backtest, openStore };
}

let installed: ReturnType<typeof installedPitchain> | undefined;

/**
 * `openStore` of the built package (`installedPitchain`, loaded once): the benches that time what users
 * run open their stores with it.
 */
export async function installedOpenStore(dir: string): Promise<StoreModule.Store> {
  installed ??= installedPitchain();
  return (await installed).openStore(dir);
}
