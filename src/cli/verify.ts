import path from 'node:path';
import type { Command } from 'commander';
import { StoreError } from '../errors.js';
import { verifyFiles } from '../store/integrity.js';
import { readManifest } from '../store/manifest.js';
import { repairDerivedFiles } from '../store/session-columns-repair.js';
import { examplesHelp, formatBytes } from './format.js';

/** `pitchain verify`: checks every file of a store against the size and content hash in its manifest. */
export function registerVerify(program: Command): void {
  program
    .command('verify')
    .description(
      'Check every file of a store against its size and content hash in the manifest; list what is missing or damaged.',
    )
    .requiredOption('--store <dir>', 'store directory')
    .option('--json', 'print the report as JSON')
    .option(
      '--repair',
      'first write the session and contract column files that intact Parquet files lack or have damaged',
    )
    .addHelpText(
      'after',
      [
        '',
        'Reads every file once. Exits 0 when all are intact, 1 when any is missing or damaged. Queries that',
        "need a damaged file fail naming it; an ingest that rewrites the file's partition replaces it.",
        '',
        'Each quote and open interest file has a session column file beside it (its sessions as plain',
        'numeric columns, written at commit), from which a session is read with no query; each contracts',
        "file has a contract column file, from which an underlying's contracts are read the same way. A",
        'store written before they existed, or one that lost them, still answers alike, reading through',
        'DuckDB; --repair writes them, and those of an earlier format that lack what later ones record',
        "(holding the store's writer lock, so not while an ingest runs).",
        examplesHelp([
          'pitchain verify --store data/sample',
          'pitchain verify --store my-store --repair --json',
        ]),
      ].join('\n'),
    )
    .action(async (flags: { store: string; json?: boolean; repair?: boolean }) => {
      const dir = path.resolve(flags.store);
      if ((await readManifest(dir)) === undefined)
        throw new StoreError(`${flags.store} is not a pitchain store (no manifest.json)`);
      const counts = flags.repair ? await repairDerivedFiles(dir) : undefined;
      const repaired = counts === undefined ? undefined : counts.sessionColumns + counts.contractColumns;
      // Read after the repair, which holds the writer lock: the manifest it repaired against.
      const manifest = (await readManifest(dir))!;
      const report = await verifyFiles(dir, manifest);
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify(repaired === undefined ? report : { ...report, repaired }, null, 2)}\n`,
        );
      } else {
        const out = report.damaged.map((d) => `${d.problem.padEnd(8)} ${d.path} (${d.detail})`);
        if (counts !== undefined) out.push(`wrote ${counts.sessionColumns} session column files`);
        if (counts !== undefined && counts.contractColumns > 0)
          out.push(`wrote ${counts.contractColumns} contract column files`);
        const without = report.withoutSessionColumns.length;
        if (without > 0) {
          out.push(
            `${without} quote and open interest files have no session column file: their sessions are read through DuckDB (pitchain verify --repair writes them)`,
          );
        }
        const withoutContracts = report.withoutContractColumns.length;
        if (withoutContracts > 0) {
          out.push(
            `${withoutContracts} contracts files have no contract column file: their contracts are read through DuckDB (pitchain verify --repair writes them)`,
          );
        }
        out.push(
          report.damaged.length === 0
            ? `all ${report.files} files intact (${formatBytes(report.bytes)}); data version ${report.dataVersion}`
            : `${report.damaged.length} of ${report.files} files missing or damaged; data version ${report.dataVersion}`,
        );
        process.stdout.write(`${out.join('\n')}\n`);
      }
      if (report.damaged.length > 0) process.exitCode = 1;
    });
}
