import { setFlagsFromString } from 'node:v8';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { DEFAULT_GRACE_MS, listen } from '../http/index.js';
import { openStore, storeInternals } from '../library/store.js';
import { readLimit } from '../service/limits.js';
import { DEFAULT_RESPONSE_CACHE_BYTES } from '../service/response-cache.js';
import { DEFAULT_LIMITS, readInstant, withoutTokens } from '../service/service.js';
import { chooseLogFile } from './request-log.js';
import { untilStopped } from './until-stopped.js';

/**
 * How far V8 lets the heap grow past what a full collection left live, in percent. By default it grows
 * by a factor fitted to the machine's memory (its limit is 4 GB on a large one): a server answering
 * distinct sessions then held 700–950 MB, mostly garbage, although its live data (the session and
 * response caches, the answers in flight) stays near 200 MB. Read at every collection, so setting it
 * once the process runs takes effect; it bounds the whole process, which only serves.
 */
export const SERVE_HEAP_GROWING_PERCENT = 20;

/** Bounds the heap of a process that serves from here on (`serve`, and `demo` once it serves). */
export function boundServingHeap(): void {
  setFlagsFromString(`--heap-growing-percent=${SERVE_HEAP_GROWING_PERCENT}`);
}

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
  grace: string;
  follow: boolean;
  maxAnswerBytes?: string;
  maxRows?: string;
  maxSeconds?: string;
  cacheBytes?: string;
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
      'accounts file: JSON { "<token>": { id?, plan, userType, opra, credits? } }; default: one local account',
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
    .option(
      '--grace <seconds>',
      'on SIGTERM or Ctrl-C, how long the requests in flight may take',
      String(DEFAULT_GRACE_MS / 1000),
    )
    .option('--no-follow', 'keep the version the server started with instead of following new ingests')
    .option(
      '--max-answer-bytes <n>',
      `largest answer body, e.g. 32MB (413 beyond; default ${DEFAULT_LIMITS.maxAnswerBytes / 1024 ** 2}MB)`,
    )
    .option(
      '--max-rows <n>',
      `most rows an endpoint may answer before paging (413 beyond; default ${DEFAULT_LIMITS.maxRows})`,
    )
    .option(
      '--max-seconds <n>',
      `longest a request may take (524 beyond; default ${DEFAULT_LIMITS.maxSeconds})`,
    )
    .option(
      '--cache-bytes <n>',
      `memory of the response cache, e.g. 32MB (default ${DEFAULT_RESPONSE_CACHE_BYTES / 1024 ** 2}MB)`,
    )
    .addHelpText(
      'after',
      `
It prints "listening on http://HOST:PORT" when ready. It follows new ingests into the store between
requests (--no-follow keeps the first version). On Ctrl-C or SIGTERM it stops accepting, answers the
requests in flight and exits, cutting what is left after --grace seconds. Every metered request is
appended to the request log, which \`pitchain log\` reads; the embedded sample and a store that cannot be
written keep it in memory unless --log names a file. To rotate the log, move it away and send SIGHUP
(or just move it: the server notices within a second and starts a new file).

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
      const graceSeconds = Number(flags.grace);
      if (!/^\d+(\.\d+)?$/.test(flags.grace) || graceSeconds > 3600) {
        throw new UsageError(`--grace must be seconds from 0 to 3600, such as 10, not '${flags.grace}'.`);
      }
      const limits = {
        ...limitFlag('--max-answer-bytes', flags.maxAnswerBytes, 'maxAnswerBytes'),
        ...limitFlag('--max-rows', flags.maxRows, 'maxRows'),
        ...limitFlag('--max-seconds', flags.maxSeconds, 'maxSeconds'),
      };
      const cacheBytes = limitFlag('--cache-bytes', flags.cacheBytes, 'bytes')['bytes'];
      const log = await chooseLogFile(flags.store, flags.log);
      if (log.warning !== undefined) process.stderr.write(`pitchain: ${log.warning}\n`);
      if (flags.greeks !== undefined && flags.greeks !== 'vendor' && flags.greeks !== 'computed') {
        throw new UsageError(`--greeks takes vendor or computed, not '${flags.greeks}'.`);
      }
      boundServingHeap();
      const store = await openStore(flags.store, {
        threads: 2,
        follow: flags.follow,
        limits,
        ...(cacheBytes === undefined ? {} : { responseCacheBytes: cacheBytes }),
        ...(log.file === undefined ? {} : { ledgerFile: log.file }),
        ...(now === undefined ? {} : { now }),
        ...(flags.accounts === undefined ? {} : { accounts: flags.accounts }),
        ...(flags.greeks === undefined ? {} : { greeks: flags.greeks as 'vendor' | 'computed' }),
      });
      if (
        adminToken !== undefined &&
        flags.accounts !== undefined &&
        storeInternals(store).api.authenticate(adminToken) !== undefined
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
        onError: (detail, path) =>
          process.stderr.write(`pitchain: failed ${withoutTokens(path, undefined)}: ${detail}\n`),
      }).catch((error: unknown) => {
        store.close();
        throw new UsageError(`cannot listen on ${flags.host}:${flags.port}: ${(error as Error).message}`, {
          cause: error,
        });
      });
      process.stdout.write(`listening on ${server.url}\n`);
      if (log.file !== undefined) process.stdout.write(`request log: ${log.file}\n`);
      await untilStopped(server, {
        graceMs: graceSeconds * 1000,
        // Rotation: the operator moved the log away; the next entry starts a new file by its name.
        onHangup: () => void storeInternals(store).api.ledger.reopen(),
        close: async () => {
          await storeInternals(store).api.close();
          store.close();
        },
      });
    });
}

/** A limit flag as the service option it sets (nothing when not given); a bad value is a usage error. */
function limitFlag<K extends string>(
  flag: string,
  text: string | undefined,
  key: K,
): Partial<Record<K, number>> {
  if (text === undefined) return {};
  const value = readLimit(text);
  if (value === undefined) {
    throw new UsageError(`${flag} must be a positive number (bytes may end in KB, MB or GB), not '${text}'.`);
  }
  return { [key]: value } as Partial<Record<K, number>>;
}
