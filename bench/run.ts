/**
 * `npm run bench [-- <name>…]`: runs every `bench/*.bench.ts` (or those whose benchmark name or file name
 * contains one of the given words), each in its own child process, prints one table and writes the rows
 * to `bench/results.json`. Exit status 0 even when a target is missed (the table is a report); 1 when a
 * benchmark throws or crashes; 2 when no benchmark matches the names. `--list` only lists the benchmarks.
 */
import { fork } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findShared, HOW_TO_GET } from '../test/helpers/shared-files.js';
import { type BenchContext, type Benchmark, type BenchRow, formatTable, REPO_ROOT } from './lib.js';

const BENCH_DIR = fileURLToPath(new URL('./', import.meta.url));
const RESULTS_FILE = join(BENCH_DIR, 'results.json');
const CHILD_FLAG = '--child';

type ChildMessage = { ok: true; rows: BenchRow[] } | { ok: false; error: string };

/** A row as written to `results.json`: tagged with the benchmark that produced it. */
type ResultRow = BenchRow & { benchmark: string };

async function loadBenchmark(file: string): Promise<Benchmark> {
  const module = (await import(pathToFileURL(file).href)) as { default?: unknown };
  const benchmark = module.default as Partial<Benchmark> | undefined;
  if (
    benchmark === undefined ||
    typeof benchmark.name !== 'string' ||
    typeof benchmark.description !== 'string' ||
    typeof benchmark.run !== 'function'
  ) {
    throw new Error(`${basename(file)}: default export is not a benchmark ({ name, description, run })`);
  }
  return benchmark as Benchmark;
}

function checkRows(name: string, rows: unknown): BenchRow[] {
  if (!Array.isArray(rows) || rows.length === 0) {
    throw new Error(`benchmark "${name}" returned no rows`);
  }
  for (const row of rows as BenchRow[]) {
    const ok =
      typeof row?.name === 'string' &&
      typeof row.ours === 'number' &&
      (row.baseline === null || typeof row.baseline === 'number') &&
      typeof row.unit === 'string' &&
      (row.ratio === null || typeof row.ratio === 'number') &&
      typeof row.target === 'string' &&
      (row.pass === null || typeof row.pass === 'boolean');
    if (!ok) {
      throw new Error(`benchmark "${name}" returned a malformed row: ${JSON.stringify(row)}`);
    }
  }
  return rows as BenchRow[];
}

/** Child side: runs one benchmark file and sends its rows (or its error) to the parent. */
async function runChild(file: string): Promise<void> {
  const tempDirs: string[] = [];
  const ctx: BenchContext = {
    repoRoot: REPO_ROOT,
    sharedFile(file) {
      const found = findShared(file);
      if (found === undefined) throw new Error(`missing shared file ${file}: ${HOW_TO_GET}`);
      return found;
    },
    async tempDir(prefix = 'pitchain-bench-') {
      const dir = await mkdtemp(join(os.tmpdir(), prefix));
      tempDirs.push(dir);
      return dir;
    },
    log(message) {
      process.stderr.write(`  ${message}\n`);
    },
  };
  let message: ChildMessage;
  try {
    const benchmark = await loadBenchmark(file);
    message = { ok: true, rows: checkRows(benchmark.name, await benchmark.run(ctx)) };
  } catch (error) {
    message = { ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  } finally {
    await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  }
  await new Promise<void>((resolve) => process.send!(message, () => resolve()));
  process.disconnect?.();
}

/** Parent side: forks this script for one benchmark file and waits for its rows. */
function runInChild(file: string): Promise<ChildMessage> {
  return new Promise((resolve) => {
    const child = fork(fileURLToPath(import.meta.url), [CHILD_FLAG, file], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let received: ChildMessage | undefined;
    child.on('message', (message: ChildMessage) => {
      received = message;
    });
    child.on('error', (error) => resolve({ ok: false, error: error.message }));
    child.on('exit', (code, signal) => {
      resolve(
        received ?? {
          ok: false,
          error: `process ended (${signal ?? `exit code ${code}`}) without reporting rows`,
        },
      );
    });
  });
}

function matches(filters: readonly string[], benchmark: Benchmark, file: string): boolean {
  if (filters.length === 0) {
    return true;
  }
  const haystack = [benchmark.name.toLowerCase(), basename(file, '.bench.ts').toLowerCase()];
  return filters.some((filter) => haystack.some((text) => text.includes(filter.toLowerCase())));
}

async function runAll(filters: readonly string[], list: boolean): Promise<number> {
  const files = (await readdir(BENCH_DIR))
    .filter((name) => name.endsWith('.bench.ts'))
    .sort()
    .map((name) => join(BENCH_DIR, name));
  const selected: { file: string; benchmark: Benchmark }[] = [];
  const failures: { benchmark: string; error: string }[] = [];
  for (const file of files) {
    try {
      const benchmark = await loadBenchmark(file);
      if (matches(filters, benchmark, file)) {
        selected.push({ file, benchmark });
      }
    } catch (error) {
      failures.push({
        benchmark: basename(file),
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  if (list) {
    for (const { benchmark } of selected)
      process.stdout.write(`${benchmark.name}\t${benchmark.description}\n`);
    return failures.length > 0 ? 1 : 0;
  }
  if (selected.length === 0 && failures.length === 0) {
    process.stderr.write(`no benchmark matches ${filters.map((f) => JSON.stringify(f)).join(', ')}\n`);
    return 2;
  }

  const rows: ResultRow[] = [];
  for (const { file, benchmark } of selected) {
    process.stderr.write(`▶ ${benchmark.name}: ${benchmark.description}\n`);
    const started = performance.now();
    const result = await runInChild(file);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (result.ok) {
      rows.push(...result.rows.map((row) => ({ benchmark: benchmark.name, ...row })));
      process.stderr.write(`  done in ${seconds} s\n`);
    } else {
      failures.push({ benchmark: benchmark.name, error: result.error });
      process.stderr.write(`  FAILED after ${seconds} s\n`);
    }
  }

  process.stdout.write(`\n${formatTable(rows)}\n`);
  for (const failure of failures) {
    process.stdout.write(`\n✗ ${failure.benchmark} threw:\n${failure.error}\n`);
  }
  const report = {
    finishedAt: new Date().toISOString(),
    environment: {
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      totalMemoryMb: Math.round(os.totalmem() / 2 ** 20),
    },
    filters,
    rows,
    failures,
  };
  await writeFile(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\nwrote ${basename(BENCH_DIR)}/${basename(RESULTS_FILE)}\n`);
  return failures.length > 0 ? 1 : 0;
}

const args = process.argv.slice(2);
if (args[0] === CHILD_FLAG && args[1] !== undefined) {
  await runChild(args[1]);
} else {
  const filters = args.filter((arg) => arg !== '--' && arg !== '--list');
  process.exitCode = await runAll(filters, args.includes('--list'));
}
