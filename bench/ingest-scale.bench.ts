/**
 * Ingest at scale (issue 22 item 5): tens of millions of generated end-of-day option rows staged and
 * committed as one version, against DuckDB alone writing the same rows in the same layout (sorted by
 * session and symbol, the store's row groups and Parquet options, partitioned by underlying and year),
 * each in a process of its own (bench/ingest-scale-child.ts) so that each peak RSS is its own. Both get
 * the same DuckDB memory limit, the writer's default, and spill beside what they write.
 *
 * `PITCHAIN_BENCH_INGEST_ROWS` sets the row count (default 50 M, the issue's); at the default one run of
 * both sides took 11 to 16 minutes on two cores shared with other work (load 12 to 14); 5 M rows, 20 s.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEFAULT_WRITER_MEMORY } from '../src/store/writer.js';
import type { ScaleAnswer, ScaleJob } from './ingest-scale-child.js';
import { defineBenchmark, loadAverage, perSecond, ratioRow } from './lib.js';

const DEFAULT_ROWS = 50_000_000;
const CHILD = fileURLToPath(new URL('./ingest-scale-child.ts', import.meta.url));
/** The issue's ceiling on the ingest's peak RSS. */
const RSS_LIMIT_MB = 4096;

function rowCount(): number {
  const set = process.env['PITCHAIN_BENCH_INGEST_ROWS'];
  if (set === undefined || set === '') return DEFAULT_ROWS;
  const rows = Number(set);
  if (!Number.isInteger(rows) || rows <= 0) {
    throw new Error(
      `PITCHAIN_BENCH_INGEST_ROWS must be a positive whole number, such as 50000000, not '${set}'`,
    );
  }
  return rows;
}

/** Runs one side in its own process (the runner's TypeScript loader is inherited with its arguments). */
function runSide(job: ScaleJob): Promise<{ rows: number; wallMs: number; peakMb: number }> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let answer: ScaleAnswer | undefined;
    child.on('message', (message: ScaleAnswer) => {
      answer = message;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (answer === undefined)
        reject(new Error(`${job.side} ended (${signal ?? `exit code ${code}`}) without answering`));
      else if ('error' in answer) reject(new Error(`${job.side}: ${answer.error}`));
      else resolve(answer);
    });
    child.send(job);
  });
}

export default defineBenchmark({
  name: 'ingest-scale',
  description:
    'generated option rows (PITCHAIN_BENCH_INGEST_ROWS, default 50 M) staged and committed as one version vs DuckDB writing the same layout: rows/s and peak RSS',
  async run(ctx) {
    const rows = rowCount();
    const memoryLimit = DEFAULT_WRITER_MEMORY;
    const side = async (name: ScaleJob['side']) => {
      const dir = await ctx.tempDir(`pitchain-ingest-scale-${name}-`);
      ctx.log(`${name}: ${rows.toLocaleString('en-US')} rows, memory limit ${memoryLimit}`);
      const run = await runSide({ side: name, rows, dir, memoryLimit });
      if (run.rows !== rows) throw new Error(`${name} wrote ${run.rows} rows of ${rows}`);
      ctx.log(`  ${(run.wallMs / 1000).toFixed(1)} s, peak RSS ${run.peakMb.toFixed(0)} MB`);
      return run;
    };
    // DuckDB first: the page cache then holds nothing of ours when ours starts, nor of its own.
    const baseline = await side('duckdb');
    const ours = await side('pitchain');
    const load = loadAverage();
    const label = `${(rows / 1e6).toFixed(rows % 1e6 === 0 ? 0 : 2)} M rows, one commit`;
    return [
      ratioRow({
        name: `ingest-scale: ${label}, throughput`,
        ours: perSecond(rows, ours.wallMs),
        baseline: perSecond(rows, baseline.wallMs),
        unit: 'rows/s',
        target: '≥ 0.7× baseline throughput',
        note: `${(ours.wallMs / 1000).toFixed(0)} vs ${(baseline.wallMs / 1000).toFixed(0)} s, both generating the rows; load ${load}`,
      }),
      ratioRow({
        name: `ingest-scale: ${label}, peak RSS`,
        ours: Math.round(ours.peakMb),
        baseline: Math.round(baseline.peakMb),
        unit: 'MB',
        target: `≤ ${RSS_LIMIT_MB} MB`,
        note: `the process's high-water mark; memory limit ${memoryLimit} on both sides; load ${load}`,
      }),
    ];
  },
});
