import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { csvField } from '../csv.js';
import { UsageError } from '../errors.js';
import { formatNamed, ingestFormats, type Reject } from '../ingest/formats/index.js';
import { parseGreeksUnits } from '../ingest/greek-units.js';
import { commitStaged, type FileHash, hashFile, readableFileSize, stageFiles } from '../ingest/ingest.js';
import { type DataQuality, qualityTable } from '../ingest/quality.js';
import { readManifest } from '../store/manifest.js';
import { DEFAULT_WRITER_MEMORY, WriteTransaction } from '../store/writer.js';
import { examplesHelp, indent, renderTable } from './format.js';
import { guardInterrupts } from './interrupt.js';
import { startProgress } from './progress.js';

type IngestFlags = {
  store: string;
  format: string;
  mapping?: string;
  symbol?: string;
  resolution?: string;
  table?: string;
  greeksUnits?: string;
  skipInvalid?: boolean;
  rejects: string;
  memoryLimit?: string;
};

/** A size DuckDB takes as a memory limit: a number and a unit, e.g. `4GB`, `512MB`, `1.5GiB`. */
const MEMORY_SIZE = /^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;

/** `pitchain ingest`: stages files in one format, validates them, and commits them as one new version. */
export function registerIngest(program: Command): void {
  const formats = ingestFormats()
    .map((f) => `  ${f.name.padEnd(21)} ${f.description}`)
    .join('\n');
  program
    .command('ingest')
    .description('Ingest vendor files into a store as one atomic commit (created if missing).')
    .argument('<files...>', 'files to ingest, all in the same format')
    .requiredOption('--store <dir>', 'store directory')
    .requiredOption('--format <name>', 'source format (see below)')
    .option('--mapping <file|preset|json>', 'column mapping for the csv and candles formats')
    .option(
      '--symbol <ticker>',
      'symbol of a bar file, root of a Lean option universe file, or underlying of a csv file (optionsdx), when its rows and path do not say it',
    )
    .option('--resolution <res>', "bar resolution of a candles file: 'D' or '1'")
    .option('--table <name>', 'canonical table of a parquet/arrow file (default: inferred from its columns)')
    .option(
      '--greeks-units <units>',
      'units of vendor IV and Greeks (hod, lean-option-universe): auto (detected per file), none, store, per-year, or e.g. theta=365,vega=100',
    )
    .option('--skip-invalid', 'commit the valid rows and write the refused ones, with reasons, to --rejects')
    .option(
      '--rejects <file>',
      'where --skip-invalid writes refused rows (CSV: file,line,reason)',
      'pitchain-rejects.csv',
    )
    .option(
      '--memory-limit <size>',
      `memory the staged rows may take before the rest spills to the store's disk, e.g. 4GB (default: ${DEFAULT_WRITER_MEMORY})`,
    )
    .addHelpText(
      'after',
      `\nFormats:\n${formats}\n\nA bad row stops the ingest with its file, line and reason, and the store stays as it was.\n` +
        'Mapping keys and examples: docs/ingest-mappings.md; vendor presets (optionsdx, orats, thetadata,\n' +
        'thetadata-oi, cboe-intervals, databento, databento-statistics), Greek units and Lean universes:\n' +
        'docs/vendor-formats.md.\n' +
        examplesHelp([
          'pitchain ingest --store my-store --format hod SPX_2018.csv',
          'pitchain ingest --store my-store --format cboe-eod UnderlyingOptionsEODQuotes_2016-06-01.csv',
          'pitchain ingest --store my-store --format csv --mapping my-vendor.json chains/*.csv',
          'pitchain ingest --store my-store --format csv --mapping optionsdx --symbol SPY spy_eod_202112.txt',
          'pitchain ingest --store my-store --format candles --mapping lean-minute 20131004_spy_minute_trade.csv',
          'pitchain ingest --store my-store --format hod --skip-invalid --rejects refused.csv SPX_2018.csv',
        ]),
    )
    .action(async (files: string[], flags: IngestFlags) => {
      const format = formatNamed(flags.format);
      if (format === undefined) {
        throw new UsageError(
          `unknown format "${flags.format}" (one of: ${ingestFormats()
            .map((f) => f.name)
            .join(', ')})`,
        );
      }
      parseGreeksUnits(flags.greeksUnits); // a bad statement is a usage error before any work
      if (flags.memoryLimit !== undefined && !MEMORY_SIZE.test(flags.memoryLimit)) {
        throw new UsageError(
          `--memory-limit must be a size such as 4GB or 512MB, not '${flags.memoryLimit}'`,
        );
      }
      const started = Date.now();
      const tx = await WriteTransaction.begin(flags.store, {
        create: true,
        ...(flags.memoryLimit === undefined ? {} : { memoryLimit: flags.memoryLimit }),
      });
      let committed = false;
      const progress = startProgress('ingest');
      const interrupts = guardInterrupts(tx);
      try {
        const fresh: string[] = [];
        const hashes = new Map<string, FileHash>();
        for (const file of files) {
          await readableFileSize(file); // a directory or unreadable path is refused before any work
          // A file named like no source of this format in the store is new, or a renamed copy whose
          // commit changes nothing; it is hashed beside its staging. Only the others are hashed first,
          // to skip them if already ingested: hashing a large file alone takes seconds.
          if (!tx.hasSource(path.basename(file), format.name)) {
            fresh.push(file);
            continue;
          }
          const hash = await hashFile(file).catch((cause: unknown) => {
            throw new UsageError(`cannot read ${file}: ${(cause as Error).message}`, { cause });
          });
          hashes.set(file, hash);
          if (tx.alreadyIngested(hash.sha256, format.name))
            process.stderr.write(`${file}: already ingested, skipped\n`);
          else fresh.push(file);
        }
        if (fresh.length === 0) {
          progress.stop();
          process.stdout.write(`nothing to ingest; data version: ${tx.baseVersion}\n`);
          return;
        }
        const staged = await stageFiles(tx.sql, fresh, format, {
          ...(flags.mapping === undefined ? {} : { mapping: flags.mapping }),
          ...(flags.symbol === undefined ? {} : { symbol: flags.symbol }),
          ...(flags.resolution === undefined ? {} : { resolution: flags.resolution }),
          ...(flags.table === undefined ? {} : { table: flags.table }),
          ...(flags.greeksUnits === undefined ? {} : { greeksUnits: flags.greeksUnits }),
          ...(flags.skipInvalid ? { skipInvalid: true } : {}),
          onProgress: (done: number, total?: number) => progress.update(done, total),
          hashes,
        });
        progress.stop();
        const result = await commitStaged(tx, staged, (source) => path.basename(source));
        committed = true;
        // A definitions file stages no rows of its own: the contracts it states are the commit's.
        const stated = Object.values(staged.rows).every((n) => n === 0) ? (result.rows.contracts ?? 0) : 0;
        if (Object.values(staged.rows).every((n) => n === 0) && stated === 0) {
          // Nothing to add is not a new version: the commit wrote nothing (a new store was not created).
          if (staged.rejects.length > 0) await writeRejects(flags.rejects, staged.rejects);
          const refused =
            staged.rejects.length > 0
              ? `every row was refused (${staged.rejects.length}, written to ${flags.rejects})`
              : `${fresh.length === 1 ? 'the file holds' : 'the files hold'} no rows`;
          const store = result.changed
            ? `data version: ${result.dataVersion}`
            : (await readManifest(tx.dir)) === undefined
              ? `no store was created at ${flags.store}`
              : `the store is as it was; data version: ${result.dataVersion}`;
          process.stdout.write(`nothing committed: ${refused}; ${store}\n`);
          return;
        }
        for (const file of result.replaced) {
          process.stderr.write(`replaced ${file.problem} store file ${file.path} (${file.detail})\n`);
        }
        if (staged.rejects.length > 0) await writeRejects(flags.rejects, staged.rejects);
        const sessions = new Set(staged.files.flatMap((f) => f.sessions));
        const underlyings = new Set(staged.files.flatMap((f) => f.underlyings));
        const rows = Object.entries(staged.rows).filter(([, n]) => n > 0);
        if (stated > 0) rows.push(['contracts', stated]);
        const total = rows.reduce((n, [, r]) => n + r, 0);
        const seconds = (Date.now() - started) / 1000;
        const out = [
          renderTable(['table', 'rows'], rows),
          '',
          `files: ${fresh.length}  rows: ${total}  sessions: ${sessions.size}  underlyings: ${[...underlyings].join(', ') || '-'}`,
          `rejected: ${staged.rejects.length}${staged.rejects.length > 0 ? ` (written to ${flags.rejects})` : ''}`,
          `time: ${seconds.toFixed(1)} s (${Math.round(total / Math.max(seconds, 0.001)).toLocaleString('en-US')} rows/s)`,
          `data version: ${result.dataVersion}${result.changed ? ` (was ${result.previousVersion})` : ' (unchanged)'}`,
          '',
          'data quality (quotes the store keeps as sent, which a backtest must not take as prices):',
          indent(
            renderQuality(staged.files.map((f) => ({ source: path.basename(f.source), quality: f.quality }))),
          ),
        ];
        process.stdout.write(`${out.join('\n')}\n`);
      } catch (error) {
        await interrupts.settle(error);
      } finally {
        interrupts.done();
        progress.stop();
        if (!committed) await tx.abort();
      }
    });
}

async function writeRejects(file: string, rejects: readonly Reject[]): Promise<void> {
  const lines = rejects.map((r) => [csvField(r.file), r.line ?? '', csvField(r.reason)].join(','));
  await fs.writeFile(file, `file,line,reason\n${lines.join('\n')}\n`);
}

/** The data-quality table of some files (`qualityTable`), as `pitchain ingest` and `pitchain info` print it. */
export function renderQuality(
  files: readonly { readonly source: string; readonly quality?: DataQuality | undefined }[],
): string {
  const { header, rows } = qualityTable(files);
  return rows.length === 0 ? '(none recorded)' : renderTable(header, rows);
}
