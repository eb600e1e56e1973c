import { promises as fs } from 'node:fs';
import type { Command } from 'commander';
import type { LogEntry } from '../billing/ledger.js';
import { UsageError } from '../errors.js';
import { formatEtTimestamp } from '../market-time/index.js';
import { renderTable } from './format.js';
import { defaultLogFile } from './request-log.js';

type LogFlags = { store?: string; log?: string; ray?: string; last?: string; json?: boolean };

/** `pitchain log`: the request log a server wrote (ray id, clock time, path, status, credits). */
export function registerLog(program: Command): void {
  program
    .command('log')
    .description('Print the request log `pitchain serve` wrote: ray id, clock time, path, status, credits.')
    .option('--store <dir>', 'store directory whose log to read (<store>/logs/requests.jsonl)')
    .option('--log <file>', 'the log file, when the server was given --log')
    .option('--ray <id>', 'only the request with this ray id (the CF-Ray header of its response)')
    .option('--last <n>', 'only the last n requests')
    .option('--json', 'print the entries as JSON lines, as the file holds them')
    .addHelpText(
      'after',
      `
Times are the server's clock instant T of each request, in Eastern time. Paths never carry a token.

Examples:
  $ pitchain log --store my-store
  $ pitchain log --store my-store --last 20
  $ pitchain log --store my-store --ray 3f9c0d6a1b2e4c5d-LCL
  $ pitchain log --log /var/log/pitchain/requests.jsonl --json`,
    )
    .action(async (flags: LogFlags) => {
      const file = flags.log ?? (flags.store === undefined ? undefined : defaultLogFile(flags.store));
      if (file === undefined) throw new UsageError('give --store <dir> or --log <file>.');
      const last = flags.last === undefined ? undefined : Number(flags.last);
      if (last !== undefined && !(Number.isInteger(last) && last > 0)) {
        throw new UsageError(`--last must be a positive whole number, not '${flags.last}'.`);
      }
      let text: string;
      try {
        text = await fs.readFile(file, 'utf8');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        throw new UsageError(
          code === 'ENOENT'
            ? `no request log at ${file}: pitchain serve writes one there when the store can be written, or where --log says.`
            : `cannot read the request log ${file}: ${code ?? (error as Error).message}`,
          { cause: error },
        );
      }
      const { entries, unreadable } = readEntries(text);
      if (unreadable > 0) {
        process.stderr.write(`pitchain: ${unreadable} line(s) of ${file} are not log entries; left out.\n`);
      }
      let shown = flags.ray === undefined ? entries : entries.filter((e) => e.ray === flags.ray);
      if (last !== undefined) shown = shown.slice(-last);
      if (flags.ray !== undefined && shown.length === 0) {
        process.stderr.write(`pitchain: no request with ray id ${flags.ray} in ${file}.\n`);
        process.exitCode = 1;
        return;
      }
      if (flags.json) {
        process.stdout.write(shown.map((e) => `${JSON.stringify(e)}\n`).join(''));
        return;
      }
      const rows = shown.map((e) => [
        formatEtTimestamp(e.atSeconds),
        e.ray,
        e.account,
        e.status,
        e.credits,
        printable(e.path),
      ]);
      process.stdout.write(
        `${renderTable(['time (ET)', 'ray', 'account', 'status', 'credits', 'path'], rows)}\n`,
      );
    });
}

/** The entries of a JSON-lines log; a line that is not an entry (a torn last write) is counted, not read. */
export function readEntries(text: string): { entries: LogEntry[]; unreadable: number } {
  const entries: LogEntry[] = [];
  let unreadable = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const entry = JSON.parse(line) as Partial<LogEntry> | null;
      if (
        entry !== null &&
        typeof entry.ray === 'string' &&
        typeof entry.path === 'string' &&
        typeof entry.status === 'number' &&
        typeof entry.credits === 'number' &&
        typeof entry.atSeconds === 'number'
      ) {
        entries.push({ ...entry, account: entry.account ?? '', logId: entry.logId ?? 0 } as LogEntry);
        continue;
      }
    } catch {
      // counted below
    }
    unreadable++;
  }
  return { entries, unreadable };
}

/** A path as a terminal may print it: control characters escaped. */
function printable(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}
