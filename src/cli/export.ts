import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { canonicalFormatOf, exportCanonical } from '../ingest/formats/canonical.js';
import { isIsoDate } from '../market-time/index.js';
import { TABLE_PARTITIONS, TABLES, type TableName } from '../store/schema.js';
import { quoteIdentifier as q } from '../store/sql.js';
import { StoreReader } from '../store/store.js';
import { examplesHelp } from './format.js';

type ExportFlags = {
  store: string;
  table: string;
  format?: string;
  underlying?: string;
  symbol?: string;
  from?: string;
  to?: string;
};

/** `pitchain export`: writes one canonical table (or a slice of it) as Parquet or Arrow, re-ingestable as is. */
export function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      'Export a canonical table as Parquet or Arrow IPC (ingest it back with --format parquet|arrow).',
    )
    .argument('<file>', 'output file (.parquet, or .arrow / .feather / .ipc)')
    .requiredOption('--store <dir>', 'store directory')
    .requiredOption('--table <name>', `table: ${Object.keys(TABLES).join(', ')}`)
    .option('--format <format>', 'parquet or arrow (default: from the file name)')
    .option('--underlying <ticker>', 'only this underlying (option tables)')
    .option('--symbol <ticker>', 'only this symbol (stock bars, splits)')
    .option('--from <date>', 'first session, YYYY-MM-DD')
    .option('--to <date>', 'last session, YYYY-MM-DD')
    .addHelpText(
      'after',
      examplesHelp([
        'pitchain export --store data/sample --table option_quotes --underlying SPY --from 2020-03-02 --to 2020-03-06 spy-week.parquet',
        'pitchain export --store data/sample --table stock_bars --symbol AAPL aapl-bars.arrow',
        'pitchain ingest --store my-store --format parquet spy-week.parquet',
      ]),
    )
    .action(async (file: string, flags: ExportFlags) => {
      if (!Object.hasOwn(TABLES, flags.table)) {
        throw new UsageError(`unknown table '${flags.table}' (one of: ${Object.keys(TABLES).join(', ')})`);
      }
      const table = flags.table as TableName;
      const format = flags.format ?? canonicalFormatOf(file);
      if (format !== 'parquet' && format !== 'arrow') {
        throw new UsageError(`cannot tell the format of ${file}: use --format parquet or --format arrow`);
      }
      for (const [name, value] of [
        ['from', flags.from],
        ['to', flags.to],
      ] as const) {
        if (value !== undefined && !isIsoDate(value))
          throw new UsageError(`--${name} must be YYYY-MM-DD, not '${value}'`);
      }
      const columns = new Set(TABLES[table].map((c) => c.name));
      const dateColumn = ['session_date', 'settled_session', 'expiration', 'ex_date'].find((c) =>
        columns.has(c),
      )!;
      const where: string[] = [];
      const params: Record<string, string> = {};
      if (flags.underlying !== undefined) {
        if (!columns.has('underlying'))
          throw new UsageError(`table ${table} has no underlying column; use --symbol`);
        where.push('underlying = $underlying');
        params['underlying'] = flags.underlying.toUpperCase();
      }
      if (flags.symbol !== undefined) {
        if (!columns.has('symbol'))
          throw new UsageError(`table ${table} has no symbol column; use --underlying`);
        where.push('symbol = $symbol');
        params['symbol'] = flags.symbol.toUpperCase();
      }
      if (flags.from !== undefined) {
        where.push(`${q(dateColumn)} >= CAST($from AS DATE)`);
        params['from'] = flags.from;
      }
      if (flags.to !== undefined) {
        where.push(`${q(dateColumn)} <= CAST($to AS DATE)`);
        params['to'] = flags.to;
      }
      const order = [...TABLE_PARTITIONS[table].filter((c) => columns.has(c)), dateColumn].map(q).join(', ');
      const query = `SELECT * FROM ${q(table)}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order}`;
      const reader = await StoreReader.open(flags.store);
      try {
        const rows = await exportCanonical(reader.sql, query, file, format, params);
        process.stdout.write(
          `${rows} rows of ${table} written to ${file} (${format}); data version ${reader.dataVersion}\n`,
        );
      } finally {
        reader.close();
      }
    });
}
