import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { listen } from '../http/index.js';
import { openStore } from '../library/store.js';
import { readInstant } from '../service/service.js';
import { chooseLogFile } from './request-log.js';

type ServeFlags = {
  store: string;
  host: string;
  port: string;
  now?: string;
  replay?: string;
  speed: string;
  accounts?: string;
  adminToken?: string;
  log?: string | boolean;
  greeks?: string;
};

/** `pitchain serve`: the store as the market-data service, over HTTP, for tools and the service's SDKs. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Serve a store over HTTP exactly as the market-data service answers (a time-travel replay).')
    .requiredOption('--store <dir>', 'store directory')
    .option('--host <host>', 'address to bind (loopback unless you say otherwise)', '127.0.0.1')
    .option('--port <port>', 'port to listen on; 0 takes a free one', '8787')
    .option('--now <instant>', 'pin the clock T, e.g. 2020-03-16T15:45:00-04:00 (default: real time)')
    .option('--replay <start>', 'a replay clock: starts at this instant when the server starts, then runs')
    .option('--speed <x>', 'how fast the replay clock runs against real time', '1')
    .option(
      '--admin-token <token>',
      'lets a request set its own clock with X-Pitchain-Now (sent with X-Pitchain-Admin: <token>); env PITCHAIN_ADMIN_TOKEN',
    )
    .option(
      '--accounts <file>',
      'accounts file: JSON { "<token>": { plan, userType, opra } }; default: one local account',
    )
    .option(
      '--log <file>',
      'append the request log (ray id, clock time, path without the token, status, credits) to this JSON-lines file; default: <store>/logs/requests.jsonl when the store can be written',
    )
    .option('--no-log', 'keep the request log in memory only')
    .option(
      '--greeks <source>',
      "vendor (the service's rule, default) or computed (IV and Greeks from the quotes, marked X-Pitchain-Greeks)",
    )
    .addHelpText(
      'after',
      `
It prints "listening on http://HOST:PORT" when ready and stops on Ctrl-C or SIGTERM once the requests in
flight are answered. Every metered request is appended to the request log, which \`pitchain log\` reads;
the embedded sample and a store that cannot be written keep it in memory unless --log names a file.

Examples:
  $ pitchain serve --store data/sample --now 2020-03-16T15:45:00-04:00
  $ curl 'http://127.0.0.1:8787/v1/options/chain/SPY/?dte=30&side=put'
  $ pitchain serve --store my-store --port 0 --accounts accounts.json
  $ pitchain serve --store data/sample --replay 2020-03-02T09:30:00-05:00 --speed 60
  $ pitchain serve --store data/sample --admin-token "$(openssl rand -hex 16)"
  $ curl -H 'X-Pitchain-Admin: <token>' -H 'X-Pitchain-Now: 2020-03-16T15:45:00-04:00' \\
      'http://127.0.0.1:8787/v1/options/chain/SPY/?dte=30'
  $ curl 'http://127.0.0.1:8787/v1/options/chain/SPY/?dte=30&side=put'
  $ pitchain serve --store my-store --log /var/log/pitchain/requests.jsonl
  $ pitchain log --store my-store --ray <CF-Ray of a response>`,
    )
    .action(async (flags: ServeFlags) => {
      const port = Number(flags.port);
      if (!/^\d{1,5}$/.test(flags.port) || port > 65_535) {
        throw new UsageError(`--port must be a port number from 0 to 65535, not '${flags.port}'.`);
      }
      const now = flags.now === undefined ? undefined : readInstant(flags.now);
      if (flags.now !== undefined && now === undefined) {
        throw new UsageError(
          `--now must be an instant, not '${flags.now}': give a date and time such as 2020-03-16T15:45:00-04:00.`,
        );
      }
      if (flags.now !== undefined && flags.replay !== undefined) {
        throw new UsageError('--now and --replay cannot be combined: pin the clock or replay it.');
      }
      const start = flags.replay === undefined ? undefined : readInstant(flags.replay);
      if (flags.replay !== undefined && start === undefined) {
        throw new UsageError(
          `--replay must be an instant such as 2020-03-02T09:30:00-05:00, not '${flags.replay}'.`,
        );
      }
      const speed = Number(flags.speed);
      if (!Number.isFinite(speed) || speed <= 0 || speed > 1e6) {
        throw new UsageError(`--speed must be a positive number (1 = real time), not '${flags.speed}'.`);
      }
      const adminToken = flags.adminToken ?? process.env['PITCHAIN_ADMIN_TOKEN'];
      if (adminToken !== undefined && adminToken.length < 8) {
        throw new UsageError('--admin-token must be at least 8 characters.');
      }
      const log = await chooseLogFile(flags.store, flags.log);
      if (log.warning !== undefined) process.stderr.write(`pitchain: ${log.warning}\n`);
      if (flags.greeks !== undefined && flags.greeks !== 'vendor' && flags.greeks !== 'computed') {
        throw new UsageError(`--greeks takes vendor or computed, not '${flags.greeks}'.`);
      }
      const store = await openStore(flags.store, {
        threads: 2,
        ...(log.file === undefined ? {} : { ledgerFile: log.file }),
        ...(now === undefined ? {} : { now }),
        ...(flags.accounts === undefined ? {} : { accounts: flags.accounts }),
        ...(flags.greeks === undefined ? {} : { greeks: flags.greeks as 'vendor' | 'computed' }),
      });
      if (
        adminToken !== undefined &&
        flags.accounts !== undefined &&
        store.api.authenticate(adminToken) !== undefined
      ) {
        store.close();
        throw new UsageError(
          '--admin-token is a data token of the accounts file: the admin token must be another.',
        );
      }
      const startedMs = Date.now();
      const server = await listen(store, {
        host: flags.host,
        port,
        ...(start === undefined ? {} : { clock: () => start + ((Date.now() - startedMs) / 1000) * speed }),
        ...(adminToken === undefined ? {} : { adminToken }),
        onError: (detail, path) => process.stderr.write(`pitchain: 500 for ${path}: ${detail}\n`),
      }).catch((error: unknown) => {
        store.close();
        throw new UsageError(`cannot listen on ${flags.host}:${flags.port}: ${(error as Error).message}`, {
          cause: error,
        });
      });
      process.stdout.write(`listening on ${server.url}\n`);
      if (log.file !== undefined) process.stdout.write(`request log: ${log.file}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void server
            .close()
            .then(() => store.api.close())
            .then(() => {
              store.close();
              resolve();
            });
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
