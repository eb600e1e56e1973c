/**
 * `pitchain mirror`: the command line of `mirror/run.ts`, which copies what a backtest reads from a
 * service that speaks the API into a store, within a credit budget.
 */
import type { Command } from 'commander';
import { MAX_IN_FLIGHT } from '../client/client.js';
import { createClient } from '../client/index.js';
import { UsageError } from '../errors.js';
import { isIsoDate } from '../market-time/index.js';
import { runMirror } from '../mirror/run.js';
import type { MirrorEstimate, MirrorOptions, MirrorReport } from '../mirror/types.js';
import { examplesHelp, indent, renderTable } from './format.js';
import { renderQuality } from './ingest.js';
import { INTERRUPTED_EXIT } from './interrupt.js';
import { type Progress, startProgress } from './progress.js';

type MirrorFlags = {
  url?: string;
  token?: string;
  underlyings: string;
  from: string;
  to: string;
  store: string;
  budget?: string;
  dryRun?: boolean;
  intraday: boolean;
  concurrency: string;
};

/** `pitchain mirror`: the service's history into a store, within a credit budget. */
export function registerMirror(program: Command): void {
  program
    .command('mirror')
    .description(
      'Copy dated chains, daily and minute bars from a market-data service into a store, within a credit budget.',
    )
    .option('--url <base>', 'the service (default: $MARKETDATA_BASE_URL, else https://api.marketdata.app)')
    .option('--token <token>', 'API token (default: $MARKETDATA_TOKEN)')
    .requiredOption('--underlyings <list>', 'comma list of underlyings, e.g. SPY,AAPL')
    .requiredOption('--from <date>', 'first session, YYYY-MM-DD')
    .requiredOption('--to <date>', 'last session, YYYY-MM-DD')
    .requiredOption('--store <dir>', 'store directory (created if missing)')
    .option(
      '--budget <credits>',
      'stop before the credits spent would exceed this (the estimate is spent first)',
    )
    .option('--dry-run', 'print the estimated credits (from the cheap endpoints) and fetch nothing else')
    .option('--no-intraday', 'skip the minute bars')
    .option('--concurrency <n>', `requests in flight (1-${MAX_IN_FLIGHT})`, '8')
    .addHelpText(
      'after',
      '\nEach answer is ingested as it arrives and its request recorded in the store, so a second run asks only\n' +
        'for what is missing. Dated chains carry no IV or Greeks: compute them on query (docs/mirror.md).\n' +
        examplesHelp([
          'pitchain mirror --url https://api.marketdata.app --token $TOKEN --underlyings SPY,AAPL --from 2024-01-02 --to 2024-03-28 --store my-store --dry-run',
          'pitchain mirror --underlyings SPY --from 2024-01-02 --to 2024-12-31 --store my-store --budget 5000',
          'pitchain mirror --url http://127.0.0.1:8787 --underlyings SPY --from 2020-03-02 --to 2020-03-13 --store copy',
        ]),
    )
    .action(async (flags: MirrorFlags) => {
      const options = mirrorOptionsFrom(flags);
      const controller = new AbortController();
      const onSigint = () => controller.abort();
      process.once('SIGINT', onSigint);
      // The bar starts with the first progress, after the estimate is printed.
      let bar: Progress | undefined;
      let result: MirrorReport;
      try {
        result = await runMirror({
          ...options,
          signal: controller.signal,
          onEstimate: (estimate, sessions) =>
            process.stdout.write(`${describeEstimate(estimate, sessions, options)}\n`),
          onProgress: (p) => {
            bar ??= startProgress('mirror', p.sessions, 'sessions');
            bar.update(p.sessionsDone, p.sessions, `${p.credits} credits`);
          },
        });
      } finally {
        bar?.stop();
        process.off('SIGINT', onSigint);
      }
      process.stdout.write(`${describeReport(result, options)}\n`);
      if (result.stopped === 'failure') {
        const reason = result.failure instanceof Error ? result.failure.message : String(result.failure);
        process.stderr.write(
          `pitchain: mirror stopped: ${reason}\nwhat arrived is committed; run the same command again to continue\n`,
        );
        process.exitCode = 1;
      } else if (result.stopped === 'interrupt') {
        process.stderr.write(
          'interrupted: what arrived is committed; run the same command again to continue\n',
        );
        process.exitCode = INTERRUPTED_EXIT;
      }
    });
}

function mirrorOptionsFrom(flags: MirrorFlags): Omit<MirrorOptions, 'signal' | 'onProgress'> {
  const example = 'e.g. --underlyings SPY,AAPL --from 2024-01-02 --to 2024-03-28';
  const underlyings = flags.underlyings
    .split(',')
    .map((u) => u.trim().toUpperCase())
    .filter((u) => u !== '');
  if (underlyings.length === 0 || underlyings.some((u) => !/^[A-Z0-9.^/-]+$/.test(u))) {
    throw new UsageError(
      `--underlyings must be a comma list of tickers, not '${flags.underlyings}' (${example})`,
    );
  }
  for (const [name, value] of [
    ['--from', flags.from],
    ['--to', flags.to],
  ] as const) {
    if (!isIsoDate(value)) {
      throw new UsageError(`${name} must be a date YYYY-MM-DD, not '${value}' (${example})`);
    }
  }
  if (flags.from > flags.to)
    throw new UsageError(`--from ${flags.from} is after --to ${flags.to} (${example})`);
  const budget = flags.budget === undefined ? undefined : Number(flags.budget);
  if (budget !== undefined && !(Number.isInteger(budget) && budget > 0)) {
    throw new UsageError(
      `--budget must be a whole number of credits above 0, not '${flags.budget}' (e.g. --budget 5000)`,
    );
  }
  const concurrency = Number(flags.concurrency);
  if (!(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= MAX_IN_FLIGHT)) {
    throw new UsageError(
      `--concurrency must be a whole number from 1 to ${MAX_IN_FLIGHT}, not '${flags.concurrency}'`,
    );
  }
  const client = createClient({
    ...(flags.url === undefined ? {} : { baseUrl: flags.url }),
    ...(flags.token === undefined ? {} : { token: flags.token }),
  });
  return {
    client,
    store: flags.store,
    underlyings,
    from: flags.from,
    to: flags.to,
    ...(budget === undefined ? {} : { budget }),
    ...(flags.dryRun ? { dryRun: true } : {}),
    ...(flags.intraday ? {} : { noIntraday: true }),
    concurrency,
  };
}

function describeEstimate(
  estimate: MirrorEstimate,
  sessions: { missing: number; total: number },
  options: { underlyings: readonly string[]; from: string; to: string },
): string {
  const range = `${options.underlyings.join(', ')} ${options.from}..${options.to}`;
  return [
    `estimate for ${range} (${sessions.missing} of ${sessions.total} sessions missing):`,
    renderTable(
      ['what', 'requests', 'credits'],
      [
        ...estimate.rows.map((row) => [row.what, row.requests, row.credits]),
        ['total', estimate.rows.reduce((n, row) => n + row.requests, 0), estimate.credits],
      ],
    ),
    `the estimate spent ${estimate.spent} credits (strikes, one session of minute bars)`,
    ...(estimate.partial ? ['partial estimate: the budget did not cover its own requests'] : []),
    '',
  ].join('\n');
}

function describeReport(result: MirrorReport, options: { budget?: number; dryRun?: boolean }): string {
  if (options.dryRun) {
    return `dry run: spent ${result.credits} credits in all (market status and the estimate); nothing written`;
  }
  const lines: string[] = [];
  const rate = result.seconds > 0 ? result.sessionsMirrored / result.seconds : 0;
  lines.push(
    renderTable(
      ['what', 'count'],
      [
        ['sessions in range', result.sessions],
        ['sessions mirrored now', result.sessionsMirrored],
        ['sessions in the store', result.sessionsDone],
        ['requests sent', result.fetched],
        ['requests skipped (in the store)', result.skipped],
        ['credits spent', result.credits],
      ],
    ),
  );
  lines.push(`time: ${result.seconds.toFixed(1)} s (${rate.toFixed(1)} sessions/s)`);
  if (result.stopped === 'budget') {
    lines.push(
      `budget: stopped before exceeding ${options.budget} credits; ${result.sessions - result.sessionsDone} sessions left (run again with a larger --budget to continue)`,
    );
  }
  lines.push(
    result.dataVersion === undefined ? 'no store was written' : `data version: ${result.dataVersion}`,
  );
  if (result.quality !== undefined) {
    lines.push(
      '',
      'data quality of the range (quotes the store keeps as sent, which a backtest must not take as prices):',
      indent(renderQuality([{ source: 'mirrored', quality: result.quality }])),
    );
  }
  return lines.join('\n');
}
