import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { backtest } from '../backtest/runner.js';
import type { BacktestOptions, BacktestReport, FillModel, Strategy } from '../backtest/types.js';
import { UsageError } from '../errors.js';
import { openStore } from '../library/store.js';
import {
  addReportOptions,
  checkReportFlags,
  finishRun,
  type ReportFlags,
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
  json?: boolean;
} & ReportFlags;

/** What a strategy module may export beside its default strategy: options the run starts from. */
type StrategyModule = {
  default?: unknown;
  options?: Partial<Omit<BacktestOptions, 'store' | 'strategy'>>;
};

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
    .option('--at <hh:mm>', 'decision time, Eastern (default 15:45; the same time before an early close)')
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
    .option('--json', 'print the whole report as JSON')
    .addHelpText(
      'after',
      [
        '',
        'The strategy sees only store.at(now) under the strict look-ahead policy, and its positions marked',
        'with the prices known then. Options the module exports as `options` are defaults; flags override them.',
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
      const module = await loadStrategy(file);
      const strategy = module.default as Strategy;
      const run = { ...(module.options ?? {}), ...optionsOf(flags) };
      checkReportFlags(flags);
      if (flags.grid !== undefined) {
        process.stdout.write(await runSweepCommand(file, flags, optionsOf(flags)));
        return;
      }
      const store = await openStore(path.resolve(flags.store));
      const progress = startProgress('backtest', 0, 'sessions');
      try {
        const report = await backtest({
          ...run,
          store,
          strategy,
          from: flags.from,
          to: flags.to,
          onProgress: (done, total) => progress.update(done, total),
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

/** Loads a strategy module; TypeScript through tsx's loader, which the package ships with. */
async function loadStrategy(file: string): Promise<StrategyModule> {
  const resolved = path.resolve(file);
  if (!existsSync(resolved)) throw new UsageError(`no strategy file ${file}`);
  if (/\.[cm]?ts$/.test(resolved) && typeof (globalThis as { Deno?: unknown }).Deno === 'undefined') {
    const { register } = await import('tsx/esm/api');
    register();
  }
  const module = (await import(pathToFileURL(resolved).href)) as StrategyModule;
  const strategy = module.default as Partial<Strategy> | undefined;
  if (strategy === undefined || typeof strategy.onSession !== 'function') {
    throw new UsageError(
      `${file}: the default export is not a strategy (an object with onSession; see defineStrategy)`,
    );
  }
  return module;
}

/** The run options the flags state, refusing values that are not what they should be. */
function optionsOf(flags: Flags): Partial<BacktestOptions> {
  const options: { -readonly [K in keyof BacktestOptions]?: BacktestOptions[K] } = {};
  const amount = (name: string, text: string) => {
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value) || value < 0) {
      throw new UsageError(`--${name} takes a non-negative number, not '${text}'`);
    }
    return value;
  };
  if (flags.at !== undefined) {
    if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(flags.at))
      throw new UsageError(`--at takes a time such as 15:45, not '${flags.at}'`);
    options.at = flags.at;
  }
  if (flags.fill !== undefined) {
    let fill: FillModel;
    if (flags.fill === 'mid' || flags.fill === 'bid-ask') fill = flags.fill;
    else {
      const fraction = amount('fill', flags.fill);
      if (fraction > 1)
        throw new UsageError(`--fill takes mid, bid-ask or a fraction from 0 to 1, not '${flags.fill}'`);
      fill = { spread: fraction };
    }
    options.fill = fill;
  }
  if (flags.fillAt !== undefined) {
    if (flags.fillAt !== 'decision' && flags.fillAt !== 'next') {
      throw new UsageError(`--fill-at takes decision or next, not '${flags.fillAt}'`);
    }
    options.fillAt = flags.fillAt;
  }
  if (flags.slippage !== undefined) options.slippage = amount('slippage', flags.slippage);
  if (flags.commission !== undefined) options.commission = { option: amount('commission', flags.commission) };
  if (flags.cash !== undefined) options.cash = amount('cash', flags.cash);
  if (flags.greeks !== undefined) {
    if (flags.greeks !== 'vendor' && flags.greeks !== 'computed') {
      throw new UsageError(`--greeks takes vendor or computed, not '${flags.greeks}'`);
    }
    options.greeks = flags.greeks;
  }
  return options;
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
  ];
  for (const warning of report.warnings) lines.push(`warning: ${warning}`);
  lines.push('', 'session     symbol                  qty       price   commission     cash flow  reason');
  for (const t of report.trades) {
    lines.push(
      `${t.session}  ${t.symbol.padEnd(20)} ${String(t.quantity).padStart(6)} ${t.price.toFixed(4).padStart(11)} ${t.commission.toFixed(2).padStart(12)} ${money(t.cashFlow).padStart(13)}  ${t.reason}${t.tag === undefined ? '' : ` (${t.tag})`}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
