import path from 'node:path';
import type { Command } from 'commander';
import { loadStrategyModule } from '../backtest/load-strategy.js';
import { backtest } from '../backtest/runner.js';
import type { BacktestOptions, BacktestReport, FillModel, StrategyParameters } from '../backtest/types.js';
import { InvalidInputError, UsageError } from '../errors.js';
import { openStore } from '../library/store.js';
import { isIsoDate } from '../market-time/index.js';
import {
  addReportOptions,
  checkReportFlags,
  finishRun,
  type ReportFlags,
  riskFreeOf,
  runSweepCommand,
} from './backtest-report.js';
import { examplesHelp } from './format.js';
import { startProgress } from './progress.js';

type Flags = {
  store: string;
  from: string;
  to: string;
  at?: string;
  fill?: string;
  fillAt?: string;
  slippage?: string;
  commission?: string;
  cash?: string;
  greeks?: string;
  maxQuoteAge?: string;
  account?: string;
  cashRate?: string;
  missingSettlement?: string;
  param?: string[];
  json?: boolean;
} & ReportFlags;

/** The command line every usage error shows, so that a mistyped flag comes with one that works. */
const EXAMPLE =
  'e.g. pitchain backtest examples/spy-short-put.ts --store data/sample --from 2019-01-02 --to 2019-06-28';

/** A usage error that ends with a working example. */
function usage(message: string): UsageError {
  return new UsageError(`${message}\n  ${EXAMPLE}`);
}

/** `pitchain backtest`: runs a strategy module over a store and prints the report. */
export function registerBacktest(program: Command): void {
  addReportOptions(program.command('backtest'))
    .description(
      'Run a strategy over the sessions of a period without look-ahead, and report its trades, equity and P&L.',
    )
    .argument('<strategy>', 'a module (.ts or .js) whose default export is a strategy (see defineStrategy)')
    .requiredOption('--store <dir>', 'store directory')
    .requiredOption('--from <date>', 'first session, e.g. 2019-01-02')
    .requiredOption('--to <date>', 'last session, e.g. 2020-12-31')
    .option(
      '--at <hh:mm>',
      'decision time, Eastern (default 16:00, the close; before 16:00, the same time before an early close)',
    )
    .option(
      '--fill <model>',
      'mid, bid-ask, or a fraction of the half-spread from the mid such as 0.66 (default mid)',
    )
    .option(
      '--fill-at <when>',
      'decision (the quote the strategy saw) or next (the session close) (default decision)',
    )
    .option('--slippage <dollars>', 'added against every fill, per unit of price (default 0)')
    .option('--commission <dollars>', 'per option contract (default 0.65)')
    .option('--cash <dollars>', 'starting cash (default 100000)')
    .option('--greeks <source>', "vendor (the store's) or computed (point-in-time from the quotes)")
    .option('--max-quote-age <seconds>', 'the oldest quote a fill may use (default 900)')
    .option('--account <kind>', 'margin (Cboe strategy-based margin, default) or cash')
    .option('--cash-rate <rate>', 'annual interest on cash, e.g. 0.02 (default 0)')
    .option(
      '--missing-settlement <rule>',
      'error (default) or last-price: settle at the last underlying price seen, with a warning',
    )
    .option(
      '--param <name=value>',
      'a strategy parameter (repeatable), e.g. --param dte=45',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--json', 'print the whole report as JSON')
    .addHelpText(
      'after',
      [
        '',
        'The strategy sees only store.at(now) under the strict look-ahead policy, and its positions marked',
        'with the prices known then. Options the module exports as `options` are defaults; flags override them.',
        'Orders fill only on valid quotes no older than --max-quote-age, within buying power (docs/backtest.md).',
        examplesHelp([
          'pitchain backtest examples/spy-short-put.ts --store data/sample --from 2019-01-02 --to 2020-12-31',
          'pitchain backtest examples/spx-iron-condor.ts --store data/sample --from 2020-01-02 --to 2020-06-30 --fill bid-ask',
          'pitchain backtest my-strategy.js --store my-store --from 2024-01-02 --to 2024-03-28 --json',
          'pitchain backtest examples/spy-short-put.ts --store data/sample --from 2019-01-02 --to 2020-12-31 --out report',
          "pitchain backtest my-strategy.ts --store data/sample --from 2019-01-02 --to 2020-12-31 --grid 'dte=30,45 delta=0.2,0.3' --sort sortino",
        ]),
      ].join('\n'),
    )
    .action(async (file: string, flags: Flags) => {
      const run = optionsOf(flags);
      checkReportFlags(flags);
      const module = await loadStrategyModule(file).catch((error: unknown) => {
        throw error instanceof UsageError ? usage(error.message) : error;
      });
      if (flags.grid !== undefined) {
        process.stdout.write(await runSweepCommand(file, flags, run));
        return;
      }
      const store = await openStore(path.resolve(flags.store));
      const progress = startProgress('backtest', 0, 'sessions');
      try {
        const report = await backtest({
          ...module.options,
          ...run,
          parameters: { ...module.options.parameters, ...run.parameters },
          store,
          strategy: module.strategy,
          from: flags.from,
          to: flags.to,
          onProgress: (done, total) => progress.update(done, total),
        }).catch((error: unknown) => {
          // What backtest() refuses in its options is a usage error here: exit 2, with an example.
          throw error instanceof InvalidInputError ? usage(error.message) : error;
        });
        progress.stop();
        process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
        process.stdout.write(await finishRun(report, flags));
      } finally {
        progress.stop();
        store.close();
      }
    });
}

/** The run options the flags state, refusing values that are not what they should be. */
function optionsOf(flags: Flags): Partial<BacktestOptions> {
  const options: { -readonly [K in keyof BacktestOptions]?: BacktestOptions[K] } = {};
  const amount = (name: string, text: string) => {
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value) || value < 0) {
      throw usage(`--${name} takes a non-negative number, not '${text}'`);
    }
    return value;
  };
  for (const [name, date] of [
    ['from', flags.from],
    ['to', flags.to],
  ] as const) {
    if (!isIsoDate(date)) {
      throw usage(`--${name} takes a date such as 2019-01-02, not '${date}'`);
    }
  }
  if (flags.at !== undefined) {
    if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(flags.at))
      throw usage(`--at takes a time such as 16:00, not '${flags.at}'`);
    options.at = flags.at;
  }
  if (flags.fill !== undefined) {
    let fill: FillModel;
    if (flags.fill === 'mid' || flags.fill === 'bid-ask') fill = flags.fill;
    else {
      const fraction = amount('fill', flags.fill);
      if (fraction > 1)
        throw usage(`--fill takes mid, bid-ask or a fraction from 0 to 1, not '${flags.fill}'`);
      fill = { spread: fraction };
    }
    options.fill = fill;
  }
  if (flags.fillAt !== undefined) {
    if (flags.fillAt !== 'decision' && flags.fillAt !== 'next') {
      throw usage(`--fill-at takes decision or next, not '${flags.fillAt}'`);
    }
    options.fillAt = flags.fillAt;
  }
  if (flags.slippage !== undefined) options.slippage = amount('slippage', flags.slippage);
  if (flags.commission !== undefined) options.commission = { option: amount('commission', flags.commission) };
  if (flags.cash !== undefined) options.cash = amount('cash', flags.cash);
  if (flags.greeks !== undefined) {
    if (flags.greeks !== 'vendor' && flags.greeks !== 'computed') {
      throw usage(`--greeks takes vendor or computed, not '${flags.greeks}'`);
    }
    options.greeks = flags.greeks;
  }
  if (flags.maxQuoteAge !== undefined) options.maxQuoteAge = amount('max-quote-age', flags.maxQuoteAge);
  if (flags.account !== undefined) {
    if (flags.account !== 'cash' && flags.account !== 'margin') {
      throw usage(`--account takes cash or margin, not '${flags.account}'`);
    }
    options.account = flags.account;
  }
  if (flags.cashRate !== undefined) options.cashRate = amount('cash-rate', flags.cashRate);
  if (flags.missingSettlement !== undefined) {
    if (flags.missingSettlement !== 'error' && flags.missingSettlement !== 'last-price') {
      throw usage(`--missing-settlement takes error or last-price, not '${flags.missingSettlement}'`);
    }
    options.missingSettlement = flags.missingSettlement;
  }
  if (flags.param !== undefined) options.parameters = parametersOf(flags.param);
  const riskFreeRate = riskFreeOf(flags);
  if (riskFreeRate !== undefined) options.riskFreeRate = riskFreeRate;
  return options;
}

/** `--param name=value` pairs: numbers and true/false as such, the rest as text. */
function parametersOf(pairs: readonly string[]): StrategyParameters {
  const parameters: Record<string, string | number | boolean> = {};
  for (const pair of pairs) {
    const match = /^([A-Za-z_][\w.-]*)=(.*)$/.exec(pair);
    if (match === null) throw usage(`--param takes name=value, such as dte=45, not '${pair}'`);
    const text = match[2]!;
    const number = Number(text);
    parameters[match[1]!] =
      text === 'true'
        ? true
        : text === 'false'
          ? false
          : text.trim() !== '' && Number.isFinite(number)
            ? number
            : text;
  }
  return parameters;
}

/** The report as text: the summary, then the trades. */
export function formatReport(report: BacktestReport): string {
  const money = (value: number) =>
    value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const lines = [
    `${report.strategy}`,
    `sessions ${report.from} .. ${report.to} at ${report.at} ET; data version ${report.dataVersion}`,
    `fills: ${report.fill}`,
    '',
    `starting cash   ${money(report.startingCash)}`,
    `final equity    ${money(report.startingCash + report.pnl)}`,
    `P&L             ${money(report.pnl)}`,
    `max drawdown    ${money(report.maxDrawdown)} (${(report.maxDrawdownPct * 100).toFixed(2)}%)`,
    `trades          ${report.trades.length} (${report.rejected.length} orders rejected)`,
    `credits         ${report.credits} (strategy ${report.creditsByPart.strategy}, marks and fills ${report.creditsByPart.runner})`,
    `requests        ${report.requests}, look-ahead reads ${report.lookAheadReads}`,
    `marks           ${report.marks.stale} on stale quotes, ${report.marks.model} model, ${report.marks.last} carried`,
    `margin used     ${money(report.equity.at(-1)?.marginUsed ?? 0)} at the end (${report.account} account)`,
  ];
  // Long lists are cut to their first entries here; all of them are in --json.
  const shown = 20;
  const cut = (count: number, what: string) => {
    if (count > shown) lines.push(`${what}: the first ${shown} of ${count} (all in --json)`);
  };
  cut(report.markNotes.length, 'marks not on a fresh quote');
  for (const note of report.markNotes.slice(0, shown)) {
    lines.push(
      `  ${note.source.padEnd(5)} ${note.symbol} on ${note.sessions} session(s), ${note.first} .. ${note.last}`,
    );
  }
  for (const warning of report.warnings) lines.push(`warning: ${warning}`);
  cut(report.rejected.length, 'rejected orders');
  for (const r of report.rejected.slice(0, shown)) {
    const what =
      'legs' in r ? r.legs.map((l) => `${l.quantity} ${l.symbol}`).join(' / ') : `${r.quantity} ${r.symbol}`;
    lines.push(`rejected ${r.session} ${what}: ${r.reason}`);
  }
  lines.push('', 'session     symbol                  qty       price   commission     cash flow  reason');
  for (const t of report.trades) {
    lines.push(
      `${t.session}  ${t.symbol.padEnd(20)} ${String(t.quantity).padStart(6)} ${t.price.toFixed(4).padStart(11)} ${t.commission.toFixed(2).padStart(12)} ${money(t.cashFlow).padStart(13)}  ${t.reason}${t.tag === undefined ? '' : ` (${t.tag})`}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
