import type { Command } from 'commander';
import { type DataQuality, measureStoredQuality } from '../ingest/quality.js';
import { StoreReader } from '../store/store.js';
import { summarizeStore } from '../store/summary.js';
import { examplesHelp, formatBytes, indent, renderTable } from './format.js';
import { renderQuality } from './ingest.js';

/** `pitchain info`: the data version, tables, underlyings, session range, row counts and provenance. */
export function registerInfo(program: Command): void {
  program
    .command('info')
    .description('Describe a store: its data version, tables, underlyings, sessions and provenance.')
    .requiredOption('--store <dir>', 'store directory')
    .option('--json', 'print the summary as JSON')
    .addHelpText(
      'after',
      examplesHelp(['pitchain info --store data/sample', 'pitchain info --store my-store --json']),
    )
    .action(async (options: { store: string; json?: boolean }) => {
      const reader = await StoreReader.open(options.store, { threads: 1 });
      try {
        const summary = await summarizeStore(reader);
        if (options.json) {
          process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
          return;
        }
        const out: string[] = [];
        out.push(`data version: ${summary.dataVersion}`);
        out.push(`committed at: ${summary.committedAt || '(never)'}`);
        out.push('');
        out.push(
          renderTable(
            ['table', 'rows', 'files', 'size'],
            summary.tables.map((t) => [t.table, t.rows, t.files, formatBytes(t.bytes)]),
          ),
        );
        out.push('');
        out.push(`underlyings (options): ${summary.underlyings.join(', ') || '(none)'}`);
        out.push(`symbols (stock bars): ${summary.stockSymbols.join(', ') || '(none)'}`);
        out.push(
          `sessions: ${summary.sessions.count}${summary.sessions.first ? ` (${summary.sessions.first} .. ${summary.sessions.last})` : ''}`,
        );
        if (summary.bytesPerOptionRow !== null) {
          out.push(`store size per option row: ${summary.bytesPerOptionRow.toFixed(2)} bytes`);
        }
        out.push('');
        out.push('provenance:');
        out.push(
          summary.provenance.length === 0
            ? '  (none)'
            : indent(
                renderTable(
                  ['source', 'format', 'sha256', 'rows', 'rejected', 'ingested at'],
                  summary.provenance.map((p) => [
                    p.source,
                    p.format,
                    p.sha256.slice(0, 12),
                    Object.values(p.rows).reduce((a, b) => a + b, 0),
                    p.rejected,
                    p.ingestedAt,
                  ]),
                ),
              ),
        );
        out.push('');
        out.push('data quality (per source, as its ingest measured it):');
        const measured = summary.provenance.flatMap((p) =>
          p.quality === undefined ? [] : [{ source: p.source, quality: p.quality as DataQuality }],
        );
        // A mirror's answers record none (it measures its run once): the store's option rows are
        // measured now instead.
        if (measured.length < summary.provenance.length && summary.underlyings.length > 0) {
          measured.push({
            source: 'the store (measured now)',
            quality: await measureStoredQuality(reader.sql),
          });
        }
        out.push(indent(renderQuality(measured)));
        process.stdout.write(`${out.join('\n')}\n`);
      } finally {
        reader.close();
      }
    });
}
