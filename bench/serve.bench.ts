/**
 * Serve benchmark: `pitchain serve` on the embedded sample, in its own process as users run it (the
 * built CLI), loaded over keep-alive HTTP from this process. It measures the front-month chain over
 * distinct sessions in random order (no response-cache help) against the same requests through
 * `store.request` in process, repeated requests (the response cache's path), and a 60-second load of
 * 64 connections over a mix of endpoints: errors, p50/p99 latency, and the server's RSS (medians of the
 * last third against the first). It also splits a distinct chain's server CPU between the main thread
 * and the rest (DuckDB's threads and the collector's helpers): the share more serving processes could
 * spread over the cores. Then it measures that option: distinct chains on one fresh server against the
 * same load spread over two fresh servers of the same store, with the cores both runs kept busy.
 */
import { writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/library/store.js';
import { sessionsBetween } from '../src/market-time/index.js';
import { ensureBuilt } from '../test/helpers/build.js';
import { type BenchContext, defineBenchmark, loadAverage, perSecond, ratioRow, summarise } from './lib.js';
import { Connection, cpuSeconds, RssTrace, type Server, startServer } from './serve-lib.js';

const NOW = '2020-12-31T15:45:00-05:00';
/** Every session of the sample but the last (a dated request needs a past session). */
const SESSIONS = sessionsBetween('2019-01-02', '2020-12-30');
const LOAD_SECONDS = Number(process.env['SERVE_BENCH_SECONDS'] ?? 60);

/** A seeded shuffle (the same order every run). */
function shuffled<T>(items: readonly T[], seed = 20_200_316): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const frontMonth = (session: string) => `/v1/options/chain/SPY/?date=${session}`;

/** A mix of the API's endpoints over the sample, dated and current (some answered from the cache). */
function mixTarget(i: number): string {
  const session = SESSIONS[(i * 7919) % SESSIONS.length]!;
  switch (i % 8) {
    case 0:
      return frontMonth(session);
    case 1:
      return `/v1/options/chain/AAPL/?date=${session}&side=call&strikeLimit=4`;
    case 2:
      return '/v1/options/chain/SPY/?dte=30&side=put&strikeLimit=5';
    case 3:
      return `/v1/options/expirations/SPX/?date=${session}`;
    case 4:
      return `/v1/stocks/candles/D/SPY/?from=2019-01-02&to=${session}`;
    case 5:
      return '/v1/stocks/quotes/?symbols=SPY,AAPL';
    case 6:
      return `/v1/options/strikes/SPY/?date=${session}`;
    default:
      return '/v1/markets/status/?from=2020-01-01&to=2020-12-31';
  }
}

/**
 * The accounts the load is spread over: the service allows an account 50 requests in flight, so 64
 * connections of one account would mostly measure 429s. Four paid accounts with credits to spare.
 */
const TOKENS = ['bench-token-a1', 'bench-token-b2', 'bench-token-c3', 'bench-token-d4'];

type Load = {
  requests: number;
  errors: number;
  seconds: number;
  latenciesMs: number[];
  statuses: Map<number, number>;
};

/** A load's statuses as `200×12 404×1`, to see at a glance that the answers are the expected ones. */
function statusText(run: Load): string {
  return [...run.statuses]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ');
}

/**
 * Sends targets from `next` over `connections` kept-alive connections until it returns undefined or
 * `seconds` pass. An error is a failed connection or a status of 500 and above.
 */
async function load(
  base: string,
  connections: number,
  next: (i: number) => string | undefined,
  seconds = Number.POSITIVE_INFINITY,
): Promise<Load> {
  const port = Number(new URL(base).port);
  const latenciesMs: number[] = [];
  const statuses = new Map<number, number>();
  let errors = 0;
  let issued = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async (n: number) => {
    const connection = new Connection(port, TOKENS[n % TOKENS.length]!);
    try {
      for (;;) {
        if (performance.now() > deadline) return;
        const target = next(issued++);
        if (target === undefined) return;
        const sent = performance.now();
        const status = await connection.get(target);
        latenciesMs.push(performance.now() - sent);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 0 || status >= 500) errors++;
        if (status === 0) return;
      }
    } finally {
      connection.close();
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, n) => worker(n)));
  return {
    requests: latenciesMs.length,
    errors,
    seconds: (performance.now() - started) / 1000,
    latenciesMs,
    statuses,
  };
}

/**
 * Distinct chains for the processes comparison: every session's front month and a one-sided chain, of
 * SPY and AAPL (some 2,000 requests, none repeated: no response-cache help), in a seeded order.
 */
function distinctChains(): string[] {
  const variants = ['SPY/?', 'AAPL/?', 'SPY/?side=put&', 'AAPL/?side=call&'];
  return shuffled(
    variants.flatMap((variant) => SESSIONS.map((s) => `/v1/options/chain/${variant}date=${s}`)),
  );
}

/** What serving the distinct chains cost with `count` fresh servers of the sample sharing the load. */
type Served = { rate: number; serverMs: number; cores: number; statuses: string };

/**
 * Starts `count` servers of the sample, sends them the distinct chains together over 32 connections in
 * all (after 20 to warm each), and stops them: requests per second, server CPU per request (every thread
 * of every server), and the cores the run kept busy (the servers' CPU and this process's, over the wall).
 */
async function servedBy(ctx: BenchContext, accounts: string, count: number): Promise<Served> {
  const targets = distinctChains();
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await startServer(ctx.repoRoot, serveArgs(ctx, accounts)));
    for (const server of servers) await load(server.url, 4, (i) => (i < 20 ? targets[i] : undefined));
    let next = 20;
    const take = () => targets[next++];
    const cpu = () => servers.reduce((sum, server) => sum + cpuSeconds(server.child.pid!).all, 0);
    const [serverBefore, ownBefore] = [cpu(), process.cpuUsage()];
    const started = performance.now();
    const runs = await Promise.all(servers.map((server) => load(server.url, 32 / count, take)));
    const seconds = (performance.now() - started) / 1000;
    const own = process.cpuUsage(ownBefore);
    const serverSeconds = cpu() - serverBefore;
    const requests = runs.reduce((sum, run) => sum + run.requests, 0);
    const statuses = new Map<number, number>();
    for (const run of runs)
      for (const [status, n] of run.statuses) statuses.set(status, (statuses.get(status) ?? 0) + n);
    return {
      rate: requests / seconds,
      serverMs: (serverSeconds * 1000) / requests,
      cores: (serverSeconds + (own.user + own.system) / 1e6) / seconds,
      statuses: statusText({ requests, errors: 0, seconds, latenciesMs: [], statuses }),
    };
  } finally {
    for (const server of servers) server.child.kill('SIGTERM');
  }
}

/** `pitchain serve` of the sample at the pinned clock on a free port, with the bench's accounts. */
function serveArgs(ctx: BenchContext, accounts: string): string[] {
  return [
    '--store',
    join(ctx.repoRoot, 'data/sample'),
    '--port',
    '0',
    '--now',
    NOW,
    '--no-log',
    '--accounts',
    accounts,
  ];
}

/** The same targets through `store.request` in process, `parallel` at a time: requests per second. */
async function inProcess(repoRoot: string, targets: readonly string[], parallel: number): Promise<number> {
  const store = await openStore(join(repoRoot, 'data/sample'), { now: NOW, threads: 2 });
  try {
    await store.request(targets[0]!);
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < targets.length) {
          const response = await store.request(targets[next++]!);
          if (response.status >= 500) throw new Error(`${response.status} in process`);
        }
      }),
    );
    return perSecond(targets.length, performance.now() - started);
  } finally {
    store.close();
  }
}

export default defineBenchmark({
  name: 'serve',
  description: `pitchain serve over HTTP on the sample: chains, the cache path, a ${LOAD_SECONDS}-second mixed load`,
  async run(ctx: BenchContext) {
    await ensureBuilt();
    const distinct = shuffled(SESSIONS).map(frontMonth);

    const accounts = join(await ctx.tempDir('pitchain-bench-serve-'), 'accounts.json');
    const paid = { plan: 'prime', opra: true, credits: { limit: 1_000_000_000_000, period: 'day' } };
    await writeFile(accounts, JSON.stringify(Object.fromEntries(TOKENS.map((token) => [token, paid]))));
    const server = await startServer(ctx.repoRoot, serveArgs(ctx, accounts));
    const pid = server.child.pid!;
    try {
      ctx.log('front-month chains over distinct sessions, over HTTP (32 connections)');
      await load(server.url, 4, (i) => (i < 20 ? distinct[i] : undefined));
      const cpuBefore = cpuSeconds(pid);
      const chains = await load(server.url, 32, (i) => distinct[i]);
      const cpuAfter = cpuSeconds(pid);
      const chainRate = chains.requests / chains.seconds;
      // Where a chain's CPU goes: the main thread's share is what more serving processes could spread (the
      // rest already runs on DuckDB's threads and the collector's helpers, over every core). Whether they
      // do is measured directly below (one serving process against two).
      const mainMs = ((cpuAfter.main - cpuBefore.main) * 1000) / chains.requests;
      const allMs = ((cpuAfter.all - cpuBefore.all) * 1000) / chains.requests;

      ctx.log('one request repeated: the response cache');
      const repeated = '/v1/options/chain/SPY/?dte=30&side=put&strikeLimit=5';
      await load(server.url, 32, (i) => (i < 1000 ? repeated : undefined));
      const cached = await load(server.url, 32, () => repeated, 10);
      const cachedRate = cached.requests / cached.seconds;

      ctx.log(`mixed load: ${LOAD_SECONDS} s over 64 connections`);
      await load(server.url, 64, mixTarget, Math.min(10, LOAD_SECONDS / 6));
      const trace = new RssTrace(pid);
      const mixed = await load(server.url, 64, mixTarget, LOAD_SECONDS);
      const rss = trace.stop();
      const latency = summarise(mixed.latenciesMs);
      const sorted = [...mixed.latenciesMs].sort((a, b) => a - b);
      const p99 = sorted[Math.max(0, Math.ceil(0.99 * sorted.length) - 1)]!;

      server.child.kill('SIGTERM');
      // More serving processes over the same store, measured: would they use the cores better than one?
      ctx.log('distinct chains on one fresh server, then spread over two');
      const one = await servedBy(ctx, accounts, 1);
      const two = await servedBy(ctx, accounts, 2);
      // In process last: a store opened in this process keeps DuckDB's threads, which would compete with
      // the server for the cores during the HTTP runs.
      ctx.log('front-month chains over distinct sessions, in process');
      const baseline = await inProcess(ctx.repoRoot, distinct, 32);

      return [
        ratioRow({
          name: 'serve: front-month chain, distinct sessions, HTTP vs in process',
          ours: chainRate,
          baseline,
          unit: 'req/s',
          target: '≥ 0.7× baseline throughput',
          note: `${chains.requests} sessions in random order, keep-alive, 32 connections; ${statusText(chains)}`,
        }),
        ratioRow({
          name: 'serve: front-month chain, distinct sessions',
          ours: chainRate,
          unit: 'req/s',
          target: '≥ 500 req/s',
        }),
        ratioRow({
          name: 'serve: distinct chains, one serving process vs two over the same store',
          ours: one.rate,
          baseline: two.rate,
          unit: 'req/s',
          target: '≥ 0.9× baseline throughput',
          note: `server CPU per request ${one.serverMs.toFixed(2)} vs ${two.serverMs.toFixed(2)} ms (in the HTTP run above, ${mainMs.toFixed(2)} of ${allMs.toFixed(2)} ms on the main thread, the rest on DuckDB's threads and the collector's helpers); cores busy (servers and load) ${one.cores.toFixed(2)} vs ${two.cores.toFixed(2)} of ${availableParallelism()}; ${one.statuses} vs ${two.statuses}; load ${loadAverage()}`,
        }),
        ratioRow({
          name: 'serve: one request repeated (response cache)',
          ours: cachedRate,
          unit: 'req/s',
          target: '≥ 5000 req/s',
          note: `${cached.requests} in ${cached.seconds.toFixed(1)} s; ${statusText(cached)}`,
        }),
        ratioRow({
          name: `serve: mixed load, ${LOAD_SECONDS} s at 64 connections, errors`,
          ours: mixed.errors,
          unit: 'errors',
          target: '≤ 0 errors',
          note: `${mixed.requests} requests, ${(mixed.requests / mixed.seconds).toFixed(0)} req/s; ${statusText(mixed)}`,
        }),
        ratioRow({
          name: 'serve: mixed load p50 latency',
          ours: latency.p50Ms,
          unit: 'ms',
          target: '≤ 1000 ms',
          note: `p99 ${p99.toFixed(1)} ms`,
        }),
        ratioRow({
          name: 'serve: server RSS, last third of the mixed load vs first third',
          ours: rss.lastMb,
          baseline: rss.firstMb,
          unit: 'MB',
          target: '≤ 1.1× baseline',
          note: `medians of ${rss.count} samples, one a second`,
        }),
        ratioRow({
          name: 'serve: server RSS at the end of the mixed load (median of the last third)',
          ours: rss.lastMb,
          unit: 'MB',
          target: '< 512 MB',
          note: `peak ${rss.peakMb.toFixed(0)} MB, after the distinct-session chains and the cache path`,
        }),
      ];
    } finally {
      server.child.kill('SIGTERM');
    }
  },
});
