import type { Command } from 'commander';
import { AccountBook } from '../billing/accounts.js';
import { UsageError } from '../errors.js';
import { DEFAULT_GRACE_MS, listen, type RunningServer } from '../http/index.js';
import type { ChainParams } from '../library/params.js';
import { openStore, type Store, storeInternals } from '../library/store.js';
import { formatEtTimestamp, formatInstant, toEtDate } from '../market-time/index.js';
import { withoutTokens } from '../service/service.js';
import { renderTable } from './format.js';
import { SAMPLE_STORE } from './sample.js';
import { boundServingHeap } from './serve.js';
import { untilStopped } from './until-stopped.js';

const NOW = '2020-03-16T15:45:00-04:00';
/** The tour's account: a paid, non-professional account with OPRA (live options), served to curl and SDKs. */
export const DEMO_TOKEN = 'demo-token';

/** One question of the tour: the raw request, and the same question for the typed face (its known-at). */
type Question = { readonly target: string; readonly params: ChainParams };

const NEAR: Question = {
  target: '/v1/options/chain/SPY/?dte=2&side=put&strikeLimit=3',
  params: { dte: 2, side: 'put', strikeLimit: 3 },
};
const MONTH: Question = {
  target: '/v1/options/chain/SPY/?dte=30&side=put&strikeLimit=3',
  params: { dte: 30, side: 'put', strikeLimit: 3 },
};
const DATED: Question = {
  target: `${MONTH.target}&date=2020-03-13`,
  params: { ...MONTH.params, date: '2020-03-13' },
};

type DemoFlags = { store?: string; serve?: boolean; port: string };

/** `pitchain demo`: the newcomer's tour — what the sample answers at a past instant, then the sample served. */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'Show what pitchain answers at a past instant, then serve the sample to curl and the SDKs (the `npm start` tour).',
    )
    .option('--store <dir>', 'store directory (default: the embedded sample)')
    .option('--serve', 'then serve the store with a demo account until Ctrl-C (the default in a terminal)')
    .option('--no-serve', 'print the answers and exit (the default when output is not a terminal)')
    .option('--port <port>', 'port to serve on (a free one if it is taken); 0 takes a free one', '8787')
    .addHelpText(
      'after',
      `
Examples:
  $ npm start
  $ pitchain demo --no-serve
  $ pitchain demo --serve --port 0
  $ pitchain demo --store my-store --no-serve`,
    )
    .action(async (flags: DemoFlags) => {
      const port = Number(flags.port);
      if (!/^\d{1,5}$/.test(flags.port) || port > 65_535) {
        throw new UsageError(`--port must be a port number from 0 to 65535, not '${flags.port}'.`);
      }
      const serve = flags.serve ?? process.stdout.isTTY === true;
      const store = await openStore(flags.store ?? SAMPLE_STORE, {
        now: NOW,
        threads: 2,
        token: DEMO_TOKEN,
        accounts: new AccountBook({ [DEMO_TOKEN]: { plan: 'trader', userType: 'nonpro', opra: true } }),
      });
      try {
        process.stdout.write(`${(await tour(store, flags.store)).join('\n')}\n`);
        if (!serve) {
          process.stdout.write(`${nextSteps().join('\n')}\n`);
          return;
        }
        await serveUntilStopped(store, port);
      } finally {
        store.close();
      }
    });
}

/** The answers of the tour, each described by what was actually served. */
async function tour(store: Store, storeFlag: string | undefined): Promise<string[]> {
  const summary = await store.summary();
  const out: string[] = [];
  out.push('pitchain — option chains answered as the market-data API would, at any past instant');
  out.push('');
  out.push(`store: ${storeFlag ?? 'embedded sample (synthetic option quotes on real SPY/AAPL daily bars)'}`);
  out.push(`data version: ${summary.dataVersion}`);
  out.push(
    `underlyings: ${summary.underlyings.join(', ')}; sessions ${summary.sessions.first} .. ${summary.sessions.last}; ${summary.optionRows.toLocaleString('en-US')} option rows`,
  );
  out.push('');
  out.push(`1) The clock is ${NOW}: Monday, a quarter of an hour before the close.`);
  out.push(...(await spyMove(store)));
  out.push(`   GET ${NEAR.target}`);
  out.push('   A current request, live mode: each field as last known at the clock instant.');
  out.push(...(await answer(store, NEAR)));
  out.push('');
  out.push('2) The same clock, a month out:');
  out.push(`   GET ${MONTH.target}`);
  out.push(...(await answer(store, MONTH)));
  out.push('');
  out.push('3) The same question as a historical request for Friday 2020-03-13:');
  out.push(`   GET ${DATED.target}`);
  out.push(...(await answer(store, DATED)));
  out.push('');
  const { ledger } = storeInternals(store).api;
  const used = ledger.log.map((e) => `${e.credits}`).join(' + ');
  out.push(`credits billed to the demo account, as the service would: ${used} = ${ledger.totalCredits}`);
  out.push('(a current chain: 1 per contract; a dated one: 1 per 1,000 contracts)');
  return out;
}

/** SPY's close on Friday and on Monday, from the store's bars (known only after the clock instant). */
async function spyMove(store: Store): Promise<string[]> {
  const bars = await store.stocks
    .candles('D', 'SPY', { from: '2020-03-13', to: '2020-03-16' }, { now: '2020-03-17T09:00:00-04:00' })
    .catch(() => undefined);
  const close = bars?.columns.c ?? [];
  if (close.length !== 2 || typeof close[0] !== 'number' || typeof close[1] !== 'number') return [];
  const change = ((close[1] - close[0]) / close[0]) * 100;
  return [
    `   SPY closed at ${close[0]} on Friday; today it will close at ${close[1]} (${change.toFixed(1)}%),`,
    '   which no answer below can know yet.',
  ];
}

/**
 * A question asked as a raw request (billed) and described from its answer: which snapshot was served,
 * what `dte` counts from, when the open interest was published, what is null and why.
 */
async function answer(store: Store, question: Question): Promise<string[]> {
  const response = await store.request(question.target, { token: DEMO_TOKEN });
  if (response.status >= 300) return [`   ${response.status} ${response.body}`];
  const body = JSON.parse(response.body) as Record<string, unknown[]>;
  const clock = storeInternals(store).api.readNow(undefined)!;
  const typed = await store.options.chain('SPY', question.params);
  const lines: string[] = [];
  const updated = unique(body['updated'] as number[]);
  const sessions = unique(updated.map((t) => toEtDate(t)));
  const snapshots = updated.map((t) => `the ${etTime(t)} snapshot of ${toEtDate(t)}`).join(' and ');
  const today = toEtDate(clock);
  const dated = question.params.date !== undefined;
  lines.push(
    dated || sessions.every((s) => s === today)
      ? `   Served: ${snapshots}.`
      : `   Served: ${snapshots}, the latest quotes of these contracts known at ${etTime(clock)}.`,
  );
  const expiries = unique((body['expiration'] as number[]).map((t) => toEtDate(t)));
  const dtes = unique(body['dte'] as number[]);
  lines.push(
    `   dte ${dtes.join(', ')} to the ${expiries.join(', ')} expiry, counted from ${sessions.length === 1 ? 'that session' : 'each snapshot’s session'}${!dated && sessions.some((s) => s !== today) ? ` (${sessions.join(', ')}), not from ${today}` : ''}.`,
  );
  const published = unique(
    (typed.knownAt()?.oiPublishedAt ?? []).filter((t): t is number => t !== null).map(etInstant),
  );
  if (published.length > 0) lines.push(`   Open interest as published ${published.join(', ')} ET.`);
  const nulls: string[] = [];
  if ((body['iv'] as unknown[]).every((v) => v === null)) {
    nulls.push(dated ? 'Greeks null, as on every dated request' : 'Greeks null');
  }
  if ((body['volume'] as unknown[]).every((v) => v === null)) {
    nulls.push(`volume null: not known at ${etTime(clock)} (a snapshot's volume is stamped with the close)`);
  }
  if (nulls.length > 0) lines.push(`   ${nulls.join('; ')}.`);
  lines.push(chainTable(body));
  return lines;
}

function chainTable(body: Record<string, unknown[]>): string {
  const keys = [
    'optionSymbol',
    'updated',
    'dte',
    'bid',
    'ask',
    'mid',
    'openInterest',
    'volume',
    'iv',
    'delta',
  ];
  const rows = (body['optionSymbol'] ?? []).map((_, i) =>
    keys.map((k) => {
      const value = body[k]?.[i];
      if (k === 'updated' && typeof value === 'number')
        return String(formatInstant(value, 'timestamp')).slice(0, 16);
      return value === null ? '—' : value;
    }),
  );
  return renderTable(keys, rows)
    .split('\n')
    .map((line) => `   ${line}`)
    .join('\n');
}

function nextSteps(): string[] {
  return [
    '',
    'Next:',
    '  npx pitchain demo --serve        serves this store at http://127.0.0.1:8787 with a demo account, for curl',
    '                                   and the official SDKs (what `npm start` does in a terminal)',
    "  npx pitchain request --store data/sample --now 2020-03-16T15:45:00-04:00 -i '/v1/options/chain/SPY/?dte=2&side=put&strikeLimit=3'",
    '  npx pitchain --help',
  ];
}

/**
 * Serves the tour's store with its demo account on loopback until Ctrl-C or SIGTERM, printing working
 * `curl` lines, how to point an SDK at it, and each request as the request log records it.
 */
async function serveUntilStopped(store: Store, port: number): Promise<void> {
  const handler = {
    request: async (target: string, options?: Parameters<Store['request']>[1]) => {
      const response = await store.request(target, options);
      const path = withoutTokens(target.split('?')[0] ?? '', undefined);
      const ray = response.headers['CF-Ray'] ?? '';
      process.stdout.write(
        `  ${response.status}  ${String(response.credits).padStart(3)} credit(s)  ${path}${ray === '' ? '' : `  ray ${ray}`}\n`,
      );
      return response;
    },
  };
  boundServingHeap();
  let server: RunningServer;
  try {
    server = await listen(handler, { port });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0) throw error;
    server = await listen(handler, { port: 0 });
  }
  const url = server.url;
  const auth = `-H 'Authorization: Bearer ${DEMO_TOKEN}'`;
  process.stdout.write(
    [
      '',
      `Serving it as the service at ${url}, the clock pinned at ${NOW} (Ctrl-C stops).`,
      `Demo account: token ${DEMO_TOKEN} (a trader plan, 100,000 credits a day); a request without it is a 401.`,
      '',
      `  curl ${auth} '${url}${NEAR.target}'`,
      `  curl -i ${auth} '${url}/v1/stocks/candles/D/SPY/?from=2020-03-09&to=2020-03-13'`,
      `  curl '${url}/v1/options/quotes/SPY200417P00250000/?date=2020-03-13&token=${DEMO_TOKEN}'`,
      `  curl ${auth} '${url}/user/'`,
      '',
      'Point the official JS SDK at it (it reads these two variables):',
      `  MARKETDATA_BASE_URL=${url} MARKETDATA_TOKEN=${DEMO_TOKEN} node my-script.js`,
      '',
      'Requests, as the request log records them:',
      '',
    ].join('\n'),
  );
  await untilStopped(server, { graceMs: DEFAULT_GRACE_MS });
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

/** `HH:MM` of an instant in Eastern time. */
function etTime(seconds: number): string {
  return formatEtTimestamp(seconds).slice(11, 16);
}

/** `YYYY-MM-DD HH:MM` of an instant in Eastern time. */
function etInstant(seconds: number): string {
  return `${toEtDate(seconds)} ${etTime(seconds)}`;
}
