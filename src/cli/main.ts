/** The `pitchain` command line: one subcommand per file, each with its own `--help`. */
import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { IngestError, MarketDataError, StoreError, UsageError } from '../errors.js';
import { registerBacktest } from './backtest.js';
import { registerDemo } from './demo.js';
import { registerExport } from './export.js';
import { examplesHelp } from './format.js';
import { registerGenerate } from './generate.js';
import { registerInfo } from './info.js';
import { registerIngest } from './ingest.js';
import { registerLog } from './log.js';
import { registerMirror } from './mirror.js';
import { registerRequest } from './request.js';
import { registerServe } from './serve.js';
import { registerVerify } from './verify.js';

export function buildProgram(): Command {
  const program = new Command('pitchain')
    .description('Point-in-time option chains and stock bars, answered as the market-data REST API would.')
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError()
    .exitOverride()
    .addHelpText(
      'after',
      examplesHelp([
        'pitchain demo',
        "pitchain request --store data/sample --now 2020-03-16T15:45:00-04:00 '/v1/options/chain/SPY/?dte=30&side=put'",
        'pitchain ingest --store my-store --format hod SPX_2018.csv',
        'pitchain serve --store data/sample --now 2020-03-16T15:45:00-04:00',
        'pitchain ingest --help',
      ]),
    );
  registerBacktest(program);
  registerDemo(program);
  registerExport(program);
  registerGenerate(program);
  registerInfo(program);
  registerIngest(program);
  registerLog(program);
  registerMirror(program);
  registerRequest(program);
  registerServe(program);
  registerVerify(program);
  return program;
}

function packageVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('../../package.json') as { version: string }).version;
}

/** Runs the CLI; returns the process exit code instead of exiting so that tests can call it in process. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv as string[], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode;
    }
    if (error instanceof UsageError || error instanceof IngestError || error instanceof StoreError) {
      process.stderr.write(`pitchain: ${error.message}\n`);
      return error instanceof UsageError ? 2 : 1;
    }
    if (error instanceof MarketDataError) {
      process.stderr.write(`pitchain: ${error.status} ${error.message}\n`);
      return 1;
    }
    process.stderr.write(
      `pitchain: unexpected error: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    return 70;
  }
}
