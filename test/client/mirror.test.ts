/**
 * `pitchain mirror` against the real `pitchain serve` on a generated store: a mirror into an empty store
 * answers the dated requests a backtest makes exactly as the served store does, and reports the credits
 * the server logged; a second run fetches nothing; a budget stops it on a whole prefix of sessions; a
 * server killed mid-mirror leaves a store that the resumed run completes with no duplicate and no gap.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressFormat } from '../../src/cli/progress.js';
import { createClient, NetworkError } from '../../src/client/index.js';
import { StoreError } from '../../src/errors.js';
import { openStore, type Store, storeInternals } from '../../src/library/store.js';
import { runMirror } from '../../src/mirror/run.js';
import { acquireWriterLock } from '../../src/store/lock.js';
import { readManifest } from '../../src/store/manifest.js';
import { runCli } from '../helpers/build.js';
import type { ServerProcess } from '../http/helpers/server.js';
import { FROM, generatedStore, loggedCredits, NOW, serve, TO, UNDERLYINGS } from './helpers.js';

const SESSIONS = [
  '2020-03-02',
  '2020-03-03',
  '2020-03-04',
  '2020-03-05',
  '2020-03-06',
  '2020-03-09',
  '2020-03-10',
  '2020-03-11',
  '2020-03-12',
  '2020-03-13',
];

/** Dated requests a backtest makes, every endpoint the mirror feeds. */
const SAMPLE = [
  '/v1/options/chain/SPY/?date=2020-03-05',
  '/v1/options/chain/AAPL/?date=2020-03-10&expiration=all&side=put&strikeLimit=3',
  '/v1/options/chain/SPY/?date=2020-03-02&expiration=all',
  '/v1/options/chain/SPY/?date=2020-03-13&dte=30&range=otm',
  '/v1/options/chain/AAPL/?date=2020-03-09&expiration=2020-03-20&minOpenInterest=100',
  '/v1/options/quotes/SPY200320P00300000/?from=2020-03-02&to=2020-03-14',
  '/v1/options/quotes/AAPL200417C00300000/?date=2020-03-11',
  '/v1/options/expirations/SPY/?date=2020-03-06',
  '/v1/options/strikes/AAPL/?date=2020-03-12',
  '/v1/options/lookup/SPY%203%2F20%2F2020%20300%20Put/',
  '/v1/stocks/candles/D/SPY/?from=2020-03-02&to=2020-03-13',
  '/v1/stocks/candles/D/AAPL/?from=2020-03-02&to=2020-03-13&adjustsplits=false&adjustdividends=false',
  '/v1/stocks/candles/5/AAPL/?from=2020-03-03&to=2020-03-04',
  '/v1/stocks/candles/1/SPY/?date=2020-03-12',
  '/v1/stocks/bulkcandles/D/?symbols=SPY,AAPL&date=2020-03-06',
  '/v1/stocks/quotes/SPY/',
  '/v1/stocks/prices/?symbols=SPY,AAPL',
];

let dir: string;
let source: string;
let server: ServerProcess;
let log: string;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  ({ dir, source } = await generatedStore());
  log = path.join(dir, 'requests.jsonl');
  server = await serve(source, log);
  servers.push(server);
}, 120_000);
afterAll(async () => {
  for (const s of servers) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  }
  if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
});

const noWait = async () => {};
const at = (iso: string) => Date.parse(iso) / 1000;

/** The rows of a store's tables, and whether any natural key repeats. */
async function tableFacts(store: Store) {
  const [quotes] = await storeInternals(store).reader.sql.all<{ rows: number; keys: number }>(
    `SELECT count(*)::INTEGER AS rows, count(DISTINCT (option_symbol, session_date, quote_time))::INTEGER AS keys FROM option_quotes`,
  );
  const [bars] = await storeInternals(store).reader.sql.all<{ rows: number; keys: number }>(
    `SELECT count(*)::INTEGER AS rows, count(DISTINCT (symbol, resolution, t))::INTEGER AS keys FROM stock_bars`,
  );
  const sessions = await storeInternals(store).reader.sql.all<{ d: string; u: string; n: number }>(
    `SELECT CAST(session_date AS VARCHAR) AS d, underlying AS u, count(*)::INTEGER AS n
     FROM option_quotes GROUP BY ALL ORDER BY d, u`,
  );
  return {
    quotes,
    bars,
    sessions: sessions.map((row) => `${row.d} ${row.u}`),
    chainRows: Object.fromEntries(sessions.map((row) => [`${row.d} ${row.u}`, row.n])),
  };
}

async function withStore<T>(dir: string, use: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(dir, { now: NOW, threads: 1 });
  try {
    return await use(store);
  } finally {
    store.close();
  }
}

const everySession = SESSIONS.flatMap((d) => [...UNDERLYINGS].sort().map((u) => `${d} ${u}`));
/** The first `n` chains in the order a mirror asks for them (sessions in order, underlyings as given), sorted. */
const firstChains = (n: number) =>
  SESSIONS.flatMap((d) => UNDERLYINGS.map((u) => `${d} ${u}`))
    .slice(0, n)
    .sort();

describe('pitchain mirror', () => {
  let full: Awaited<ReturnType<typeof tableFacts>>;

  it('mirrors into an empty store that answers as the service did, for the credits the service logged', async () => {
    const copy = path.join(dir, 'copy');
    const client = createClient({ baseUrl: server.url, token: 'mirror-token' });
    const report = await runMirror({ client, store: copy, underlyings: UNDERLYINGS, from: FROM, to: TO });
    expect(report).toMatchObject({
      sessions: 10,
      sessionsDone: 10,
      sessionsMirrored: 10,
      stopped: undefined,
      skipped: 0,
    });
    expect(report.credits).toBe(await loggedCredits(log));
    expect(report.credits).toBeGreaterThan(20);

    const again = await runMirror({ client, store: copy, underlyings: UNDERLYINGS, from: FROM, to: TO });
    expect(again).toMatchObject({
      fetched: 0,
      sessionsMirrored: 0,
      skipped: report.fetched,
      dataVersion: report.dataVersion,
    });
    expect(report.credits + again.credits).toBe(await loggedCredits(log));

    full = await withStore(copy, async (mirror) => {
      for (const target of SAMPLE) {
        const [served, mirrored] = await Promise.all([
          fetch(`${server.url}${target}`).then(async (r) => ({ status: r.status, body: await r.text() })),
          mirror.request(target),
        ]);
        // The server may answer from its response cache (203) what the mirror asked before: same body.
        expect([target, mirrored.body]).toEqual([target, served.body]);
        expect([target, mirrored.status, served.status === 203 ? 200 : served.status]).toEqual([
          target,
          200,
          200,
        ]);
      }
      return tableFacts(mirror);
    });
    expect(full.sessions).toEqual(everySession);
    expect(full.quotes!.rows).toBe(full.quotes!.keys);
    // The data quality is measured once, over the run's range, not per answer.
    expect(report.quality).toMatchObject({ rows: full.quotes!.rows, sessions: 10 });
    expect(again.quality).toBeUndefined();
    const manifest = await readManifest(copy);
    expect(manifest!.provenance.filter((p) => p.quality !== undefined)).toEqual([]);
    // Chains are staged a batch at a time, yet each request keeps its own record: its rows and its digest.
    const chains = manifest!.provenance.filter((p) => p.source.startsWith('/v1/options/chain/'));
    const chainKey = (source: string) => {
      const match = /^\/v1\/options\/chain\/([^/]+)\/\?date=([\d-]+)&/.exec(source)!;
      return `${match[2]} ${match[1]}`;
    };
    expect(Object.fromEntries(chains.map((p) => [chainKey(p.source), p.rows['option_quotes']]))).toEqual(
      full.chainRows,
    );
    expect(new Set(chains.map((p) => p.sha256)).size).toBe(everySession.length);
    // The service's dated chains carry each session's closing snapshot (not the store's 15:45 ones).
    const sourceFacts = await withStore(source, async (store) => ({
      ...(await tableFacts(store)),
      closing: await storeInternals(store).reader.sql.value<number>(
        `SELECT count(*)::INTEGER FROM option_quotes q WHERE quote_time =
           (SELECT max(quote_time) FROM option_quotes p WHERE p.session_date = q.session_date)`,
      ),
    }));
    expect([full.quotes!.rows, full.bars]).toEqual([sourceFacts.closing, sourceFacts.bars]);
    expect(sourceFacts.sessions).toEqual(everySession);
  });

  it('stops before a budget, on whole sessions, and a later run completes the range', async () => {
    const copy = path.join(dir, 'budget');
    const client = createClient({ baseUrl: server.url, token: 'mirror-token' });
    const stopped = await runMirror({
      client,
      store: copy,
      underlyings: UNDERLYINGS,
      from: FROM,
      to: TO,
      budget: 22,
      concurrency: 2,
    });
    expect(stopped.stopped).toBe('budget');
    expect(stopped.credits).toBeLessThanOrEqual(22);
    expect(stopped.estimate!.credits).toBeGreaterThan(22);
    const partial = await withStore(copy, tableFacts);
    expect(partial.sessions.length).toBeGreaterThan(0);
    expect(partial.sessions).toEqual(firstChains(partial.sessions.length));

    // A budget that does not even cover the estimate stops there, within it.
    const tiny = await runMirror({
      client,
      store: copy,
      underlyings: UNDERLYINGS,
      from: FROM,
      to: TO,
      budget: 2,
    });
    expect(tiny).toMatchObject({ stopped: 'budget', fetched: 0, estimate: { partial: true } });
    expect(tiny.credits).toBeLessThanOrEqual(2);

    const rest = await runMirror({ client, store: copy, underlyings: UNDERLYINGS, from: FROM, to: TO });
    expect(rest).toMatchObject({ stopped: undefined, sessionsDone: 10 });
    expect(rest.sessionsMirrored).toBe(10 - stopped.sessionsDone);
    const done = await withStore(copy, tableFacts);
    expect(done).toEqual(full);
  });

  it('commits what arrived when the server dies, and the resumed run leaves no duplicate and no gap', async () => {
    const copy = path.join(dir, 'killed');
    const doomed = await serve(source, path.join(dir, 'doomed.jsonl'));
    servers.push(doomed);
    let chains = 0;
    const client = createClient({
      baseUrl: doomed.url,
      wait: noWait,
      onResponse: (event) => {
        if (event.target.startsWith('/v1/options/chain/') && ++chains === 7) doomed.child.kill('SIGKILL');
      },
    });
    const cut = await runMirror({
      client,
      store: copy,
      underlyings: UNDERLYINGS,
      from: FROM,
      to: TO,
      commitEvery: 3,
    });
    expect(cut.stopped).toBe('failure');
    expect(cut.failure).toBeInstanceOf(NetworkError);
    const partial = await withStore(copy, tableFacts);
    expect(partial.sessions.length).toBeGreaterThan(0);
    expect(partial.sessions.length).toBeLessThan(everySession.length);

    const revived = await serve(source, path.join(dir, 'revived.jsonl'));
    servers.push(revived);
    const resumed = await runMirror({
      client: createClient({ baseUrl: revived.url }),
      store: copy,
      underlyings: UNDERLYINGS,
      from: FROM,
      to: TO,
    });
    expect(resumed).toMatchObject({ stopped: undefined, sessionsDone: 10 });
    expect(resumed.skipped).toBeGreaterThan(0);
    const done = await withStore(copy, tableFacts);
    expect(done).toEqual(full);
  });
});

describe('an interrupted mirror', () => {
  it('commits what arrived before it stopped, and the next run completes the range', async () => {
    const copy = path.join(dir, 'interrupted');
    const controller = new AbortController();
    let chains = 0;
    const client = createClient({
      baseUrl: server.url,
      onResponse: (event) => {
        if (event.target.startsWith('/v1/options/chain/') && ++chains === 5) controller.abort();
      },
    });
    const first = await runMirror({
      client,
      store: copy,
      underlyings: UNDERLYINGS,
      from: FROM,
      to: TO,
      concurrency: 1,
      signal: controller.signal,
    });
    expect(first).toMatchObject({ stopped: 'interrupt', sessionsDone: 2 });
    // Chains go in session order, underlyings as given (SPY, then AAPL): the fifth was SPY's of 03-04.
    expect((await withStore(copy, tableFacts)).sessions).toEqual([
      ...everySession.slice(0, 4),
      '2020-03-04 SPY',
    ]);
    const rest = await runMirror({ client, store: copy, underlyings: UNDERLYINGS, from: FROM, to: TO });
    expect(rest).toMatchObject({ stopped: undefined, sessionsDone: 10 });
  });
});

describe('a mirror of a range that starts after the contracts were listed', () => {
  it('answers the service’s firstTraded, not its own first session', async () => {
    const copy = path.join(dir, 'late');
    const client = createClient({ baseUrl: server.url });
    const late = { client, store: copy, underlyings: ['SPY'], from: '2020-03-09', to: TO, noIntraday: true };
    expect(await runMirror(late)).toMatchObject({ stopped: undefined, sessionsDone: 5 });
    const target = '/v1/options/chain/SPY/?date=2020-03-10&expiration=all';
    const served = (await (await fetch(`${server.url}${target}`)).json()) as { firstTraded: number[] };
    // Listed on the generated store's first session, before the mirrored range began.
    const opening = at('2020-03-02T09:30:00-05:00');
    expect(served.firstTraded).toContain(opening);
    const mirrored = await withStore(copy, (store) => store.request(target));
    expect(JSON.parse(mirrored.body).firstTraded).toEqual(served.firstTraded);

    // Its answers recorded no data quality of their own: pitchain info measures the store's rows instead.
    const rows = (await withStore(copy, tableFacts)).quotes!.rows;
    const info = await runCli(['info', '--store', copy], { env: { ...process.env, TZ: 'UTC' } });
    expect(info.code).toBe(0);
    expect(info.stdout).toMatch(new RegExp(`\\n +the store \\(measured now\\) +${rows} +5 +\\d+ `));
  });
});

describe('pitchain mirror on the command line', () => {
  const pitchain = (...args: string[]) =>
    runCli(['mirror', ...args], {
      env: { ...process.env, TZ: 'UTC' },
      timeoutMs: 60_000,
    });

  it('prints the estimate of a dry run, and writes nothing', async () => {
    const target = path.join(dir, 'dry');
    const run = await pitchain(
      '--url',
      server.url,
      '--underlyings',
      'SPY',
      '--from',
      FROM,
      '--to',
      TO,
      '--store',
      target,
      '--dry-run',
    );
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toMatch(
      /^estimate for SPY 2020-03-02\.\.2020-03-13 \(10 of 10 sessions missing\):\nwhat +requests +credits\noption chains +10 +\d+\n/,
    );
    expect(run.stdout).toMatch(/\ndry run: spent \d+ credits in all/);
    await expect(fs.stat(target)).rejects.toThrow();
  });

  it('shows sessions and credits on its progress bar', () => {
    expect(progressFormat('mirror', 'sessions', 10, true)).toBe(
      'mirror [{bar}] {percentage}% | {value}/{total} sessions | {note} | {duration_formatted}',
    );
    expect(progressFormat('ingest', 'rows', 10)).toBe(
      'ingest [{bar}] {percentage}% | {value}/{total} rows | {rate} rows/s | {duration_formatted}',
    );
  });

  it('refuses bad flags with exit 2 and an example', async () => {
    const run = await pitchain(
      '--underlyings',
      'SPY',
      '--from',
      '2020-03-13',
      '--to',
      '2020-03-02',
      '--store',
      'x',
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'pitchain: --from 2020-03-13 is after --to 2020-03-02 (e.g. --underlyings SPY,AAPL --from 2024-01-02 --to 2024-03-28)\n',
    );
    const help = await pitchain('--help');
    expect(help.stdout).toContain('Examples:\n  $ pitchain mirror --url https://api.marketdata.app');
  });
});

describe('a mirror whose commit fails', () => {
  it('stops with the commit’s error, and a later run completes the range', async () => {
    const copy = path.join(dir, 'locked');
    await fs.mkdir(copy);
    // Another writer holds the store: every commit of this run is refused.
    const lock = await acquireWriterLock(copy);
    const client = createClient({ baseUrl: server.url });
    let stopped: Awaited<ReturnType<typeof runMirror>>;
    try {
      stopped = await runMirror({ client, store: copy, underlyings: UNDERLYINGS, from: FROM, to: TO });
    } finally {
      await lock.release();
    }
    expect(stopped.stopped).toBe('failure');
    expect(stopped.failure).toBeInstanceOf(StoreError);
    expect(String((stopped.failure as Error).message)).toMatch(/one writer at a time/);
    expect(await readManifest(copy)).toBeUndefined();

    const rest = await runMirror({ client, store: copy, underlyings: UNDERLYINGS, from: FROM, to: TO });
    expect(rest).toMatchObject({ stopped: undefined, sessionsDone: 10, skipped: 0 });
  });
});
