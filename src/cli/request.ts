import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { openStore } from '../library/store.js';
import { readInstant, statusText } from '../service/service.js';
import { examplesHelp } from './format.js';

type RequestFlags = {
  store: string;
  now?: string;
  token?: string;
  include?: boolean;
  accounts?: string;
  fail?: boolean;
  greeks?: string;
};

/** `pitchain request`: answers one API request from a store and prints it as the server would send it. */
export function registerRequest(program: Command): void {
  program
    .command('request')
    .description(
      'Answer one API request from a store, exactly as the server would (the body; -i adds status and headers).',
    )
    .argument('<target>', "request path and query, e.g. '/v1/options/chain/SPY/?date=2020-03-16&side=put'")
    .requiredOption('--store <dir>', 'store directory')
    .option('--now <instant>', 'clock instant T, e.g. 2020-03-16T15:45:00-04:00 (default: now)')
    .option('--token <token>', 'API token (checked against --accounts)')
    .option('--accounts <file>', 'accounts file: JSON { "<token>": { id?, plan, userType, opra, credits? } }')
    .option('-i, --include', 'print the status line and headers before the body, like curl -i')
    .option('-f, --fail', 'exit with code 22 when the status is 400 or above, like curl -f')
    .option(
      '--greeks <source>',
      "vendor (the service's rule, default) or computed (IV and Greeks from the quotes)",
    )
    .addHelpText(
      'after',
      examplesHelp([
        "pitchain request --store data/sample --now 2020-03-16T15:45:00-04:00 '/v1/options/chain/SPY/?dte=30&side=put'",
        "pitchain request --store data/sample --now 2020-03-16T15:45:00-04:00 -i '/v1/stocks/candles/D/SPY/?from=2020-03-09&to=2020-03-13'",
        "pitchain request --store my-store --accounts accounts.json --token <token> -f '/user/'",
        "pitchain request --store data/sample --now 2020-03-16T15:45:00-04:00 --greeks computed '/v1/options/chain/SPY/?date=2020-03-13&delta=.30&side=put'",
      ]),
    )
    .action(async (target: string, flags: RequestFlags) => {
      const now = flags.now === undefined ? undefined : readInstant(flags.now);
      if (flags.now !== undefined && now === undefined) {
        throw new UsageError(
          `--now must be an instant, not '${flags.now}': give a date and time such as 2020-03-16T15:45:00-04:00, or epoch seconds such as 1584387900.`,
        );
      }
      if (flags.greeks !== undefined && flags.greeks !== 'vendor' && flags.greeks !== 'computed') {
        throw new UsageError(`--greeks takes vendor or computed, not '${flags.greeks}'.`);
      }
      const store = await openStore(flags.store, {
        threads: 2,
        ...(now === undefined ? {} : { now }),
        ...(flags.accounts === undefined ? {} : { accounts: flags.accounts }),
        ...(flags.greeks === undefined ? {} : { greeks: flags.greeks }),
      });
      try {
        const response = await store.request(
          target.startsWith('/') ? target : `/${target}`,
          flags.token === undefined ? {} : { token: flags.token },
        );
        let out = '';
        if (flags.include) {
          out += `HTTP/1.1 ${response.status} ${statusText(response.status)}\r\n`;
          for (const [name, value] of Object.entries(response.headers)) out += `${name}: ${value}\r\n`;
          out += `Content-Length: ${Buffer.byteLength(response.body)}\r\n\r\n`;
        }
        out += response.body;
        if (!flags.include && response.body !== '' && !response.body.endsWith('\n')) out += '\n';
        process.stdout.write(out);
        if (flags.fail && response.status >= 400) process.exitCode = 22;
        // For operators: what a 500 hides from its body (the failure, its causes and SQL).
        if (response.detail !== undefined) process.stderr.write(`pitchain: ${response.detail}\n`);
      } finally {
        store.close();
      }
    });
}
