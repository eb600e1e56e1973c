/** The `pitchain` command line: one subcommand per file, each with its own `--help`. */
import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { EXIT_INTERNAL, EXIT_STATUS, isPitchainError, MarketDataError } from '../errors.js';
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
    // Commander has printed its own message already: help and version end well, anything else is a
    // command line the caller got wrong.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_STATUS.usage;
    const { status, message } = exitOf(error);
    process.stderr.write(`pitchain: ${message}\n`);
    return status;
  }
}

/**
 * The exit status and message of a failure: the project's errors through `EXIT_STATUS` with their message
 * (a refusal of the service with its HTTP status first), anything else as a defect with its stack.
 */
export function exitOf(error: unknown): { status: number; message: string } {
  if (isPitchainError(error)) {
    const message = error instanceof MarketDataError ? `${error.status} ${error.message}` : error.message;
    return { status: EXIT_STATUS[error.code], message };
  }
  return {
    status: EXIT_INTERNAL,
    message: `unexpected error: ${error instanceof Error ? error.stack : String(error)}`,
  };
}
