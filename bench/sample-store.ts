/**
 * `data/sample` as a commit writes a store: the shipped sample leaves out its derived files (session column
 * files, some 76 MB, and contract column files: `pitchain verify --repair` writes them), which every store
 * an ingest writes has. The backtest benches run on a copy of it in `bench/.cache/` with them written, made
 * once per sample version and version of the code that writes them: files of an earlier format are passed
 * over as missing, and the backtests would quietly time DuckDB statements instead.
 */
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { derivedFileOwner } from '../src/store/derived-files.js';
import { repairDerivedFiles } from '../src/store/session-columns-repair.js';
import { type BenchContext, storeCodeDigest } from './lib.js';

/**
 * The copy's directory, made (or made again when the sample or the code that writes derived files changed)
 * before it is returned.
 */
export async function sampleAsCommitted(ctx: BenchContext): Promise<string> {
  const sample = join(ctx.repoRoot, 'data', 'sample');
  const dir = join(ctx.repoRoot, 'bench', '.cache', 'sample-store');
  const version = `${await storeCodeDigest(ctx.repoRoot)}\n${await readFile(join(sample, 'manifest.json'), 'utf8')}`;
  const done = join(dir, '.derived-files-written');
  const made = await readFile(done, 'utf8').catch(() => undefined);
  if (made === version) return dir;
  await rm(dir, { recursive: true, force: true });
  await cp(sample, dir, { recursive: true, filter: (source) => derivedFileOwner(source) === undefined });
  const started = performance.now();
  const written = await repairDerivedFiles(dir);
  ctx.log(
    `copied data/sample to ${dir} and wrote its ${written.sessionColumns} session column files and ${written.contractColumns} contract column files in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  await writeFile(done, version);
  return dir;
}
