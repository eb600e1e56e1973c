import path from 'node:path';
import type { Command } from 'commander';
import { StoreError } from '../errors.js';
import { verifyFiles } from '../store/integrity.js';
import { readManifest } from '../store/manifest.js';
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
    .addHelpText(
      'after',
      [
        '',
        'Reads every file once. Exits 0 when all are intact, 1 when any is missing or damaged. Queries that',
        "need a damaged file fail naming it; an ingest that rewrites the file's partition replaces it.",
        examplesHelp(['pitchain verify --store data/sample', 'pitchain verify --store my-store --json']),
      ].join('\n'),
    )
    .action(async (flags: { store: string; json?: boolean }) => {
      const dir = path.resolve(flags.store);
      const manifest = await readManifest(dir);
      if (manifest === undefined)
        throw new StoreError(`${flags.store} is not a pitchain store (no manifest.json)`);
      const report = await verifyFiles(dir, manifest);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } else {
        const out = report.damaged.map((d) => `${d.problem.padEnd(8)} ${d.path} (${d.detail})`);
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
