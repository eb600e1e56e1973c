/**
 * Soak benchmark: `pitchain serve` as an operator runs it for days, compressed into minutes. A copy of
 * the sample is served (built CLI, its own process) to 64 kept-alive connections of mixed small requests,
 * with heavy answers among them (50,000 minute candles in CSV with a column named 900 times, in full CSV
 * and in JSON); an ingest lands in the served store every `SOAK_INGEST_SECONDS` (30), with the garbage
 * grace shortened to `SOAK_GRACE_MS` (2,000), so replaced files go while the server runs; the request log
 * is rotated twice (moved and SIGHUP, moved alone). It reports 5xx answers, answers that differ from a
 * fresh reader's at the same version, the server's RSS at the end against after warm-up, log lines lost
 * or torn, the p99 of small requests while 4 heavy ones run against alone, and token lookup among
 * 200,000 accounts against among 1. `SOAK_SECONDS` (default 70, about 2 minutes in all) sets the length of the mixed phase.
 */
import { cp, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AccountBook } from '../src/billing/accounts.js';
import { openStore } from '../src/library/store.js';
import { ensureBuilt } from '../test/helpers/build.js';
import { writeSyntheticBatch } from '../test/store/fixtures/synthetic.js';
import { type BenchContext, defineBenchmark, ratioRow } from './lib.js';
import { Connection, RssTrace, startServer } from './serve-lib.js';

const NOW = '2024-01-10T12:00:00-05:00';
const SOAK_SECONDS = Number(process.env['SOAK_SECONDS'] ?? 70);
const INGEST_SECONDS = Number(process.env['SOAK_INGEST_SECONDS'] ?? 30);
const GRACE_MS = Number(process.env['SOAK_GRACE_MS'] ?? 2_000);
const CONNECTIONS = 64;
const HEAVY = 4;
const TOKENS = ['soak-token-a1', 'soak-token-b2', 'soak-token-c3', 'soak-token-d4'];

/** The ingested underlying: its quotes change with every ingest. */
const PROBES = [
  '/v1/options/quotes/ZZZ250117C00400000/?date=2024-01-03',
  '/v1/options/chain/ZZZ/?date=2024-01-04&format=csv',
  '/v1/options/chain/SPY/?date=2020-03-13&side=put&strikeLimit=6',
  '/v1/stocks/candles/D/SPY/?from=2020-01-02&to=2020-06-30',
];

function small(i: number): string {
  switch (i % 6) {
    case 0:
      return '/v1/options/chain/SPY/?date=2020-03-13&side=call&strikeLimit=4';
    case 1:
      return PROBES[0]!;
    case 2:
      return `/v1/stocks/candles/D/SPY/?from=2020-01-02&to=2020-0${1 + (i % 9)}-20`;
    case 3:
      return `/v1/options/expirations/SPY/?date=2020-03-${10 + (i % 4)}`;
    case 4:
      return '/v1/markets/status/?from=2020-01-01&to=2020-12-31';
    default:
      return `/v1/options/chain/ZZZ/?date=2024-01-0${3 + (i % 2)}&strikeLimit=2`;
  }
}

const REPEATED = Array.from({ length: 900 }, () => 't').join(',');
/** Heavy answers: 50,000 minute candles, in CSV with `t` named 900 times (the answer that used to exhaust the heap), in full CSV and in JSON. */
function heavy(i: number): string {
  switch (i % 3) {
    case 0:
      return `/v1/stocks/candles/1/SPY/?from=2020-01-02&to=2020-12-28&limit=50000&format=csv&columns=${REPEATED},c`;
    case 1:
      return '/v1/stocks/candles/1/SPY/?from=2019-01-02&to=2019-12-30&limit=50000&format=csv';
    default:
      return '/v1/stocks/candles/1/SPY/?from=2020-01-02&to=2020-12-28&limit=50000';
  }
}

type Tally = { statuses: Map<number, number>; smallMs: number[]; answered: number };

/** Runs `connections` workers until `until()` is false; the first `heavyCount` send heavy requests. */
async function drive(
  port: number,
  connections: number,
  heavyCount: number,
  until: () => boolean,
): Promise<Tally> {
  const tally: Tally = { statuses: new Map(), smallMs: [], answered: 0 };
  let issued = 0;
  const worker = async (n: number) => {
    const connection = new Connection(port, TOKENS[n % TOKENS.length]!);
    try {
      while (until()) {
        const isHeavy = n < heavyCount;
        const target = isHeavy ? heavy(issued++) : small(issued++);
        const sent = performance.now();
        const status = await connection.get(target);
        if (!isHeavy) tally.smallMs.push(performance.now() - sent);
        tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
        if (status !== 0) tally.answered++;
        if (status === 0) return;
      }
    } finally {
      connection.close();
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, n) => worker(n)));
  return tally;
}

function p99(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(0.99 * sorted.length) - 1)] ?? 0;
}

function statusText(statuses: Map<number, number>): string {
  return [...statuses]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ');
}

/** A book of `size` accounts and the last of its tokens. */
function book(size: number): { book: AccountBook; probe: string } {
  const accounts: Record<string, { plan: 'trader'; userType: 'nonpro'; opra: boolean }> = {};
  for (let i = 0; i < size; i++)
    accounts[`lookup-token-${i}-0123456789abcdef`] = { plan: 'trader', userType: 'nonpro', opra: true };
  return { book: new AccountBook(accounts), probe: `lookup-token-${size - 1}-0123456789abcdef` };
}

/**
 * Token lookup in a book of 1 and of 200,000 accounts: rounds of `perRound` lookups, alternating between
 * the two books so both see the same machine; the median round of each, in ms.
 */
function lookupMs(perRound: number, rounds: number): { one: number; many: number } {
  const books = [book(1), book(200_000)];
  const times: number[][] = [[], []];
  for (let round = -2; round < rounds; round++) {
    books.forEach(({ book, probe }, b) => {
      const started = performance.now();
      for (let i = 0; i < perRound; i++) if (book.find(probe) === undefined) throw new Error('lost a token');
      if (round >= 0) times[b]!.push(performance.now() - started);
    });
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return { one: median(times[0]!), many: median(times[1]!) };
}

export default defineBenchmark({
  name: 'soak',
  description: `pitchain serve for ${SOAK_SECONDS} s beside ingests every ${INGEST_SECONDS} s, log rotations and garbage collection`,
  async run(ctx: BenchContext) {
    await ensureBuilt();
    const dir = await ctx.tempDir('pitchain-bench-soak-');
    const store = join(dir, 'store');
    await cp(join(ctx.repoRoot, 'data/sample'), store, { recursive: true });
    // The ingested underlying, and the first writer: it makes the store's leases directory.
    process.env['PITCHAIN_GARBAGE_GRACE_MS'] = String(GRACE_MS);
    let batch = 0;
    await writeSyntheticBatch(store, batch++, 3, 40, 'ZZZ');
    const accounts = join(dir, 'accounts.json');
    const paid = { plan: 'prime', opra: true, credits: { limit: 1_000_000_000_000, period: 'day' } };
    await writeFile(accounts, JSON.stringify(Object.fromEntries(TOKENS.map((token) => [token, paid]))));
    const log = join(dir, 'requests.jsonl');
    const server = await startServer(
      ctx.repoRoot,
      ['--store', store, '--port', '0', '--now', NOW, '--accounts', accounts, '--log', log],
      { ...process.env, PITCHAIN_GARBAGE_GRACE_MS: String(GRACE_MS) },
    );
    const pid = server.child.pid!;
    const port = Number(new URL(server.url).port);
    let probesSent = 0;
    try {
      ctx.log('warm-up: 20 s of the mixed load');
      let stopAt = performance.now() + 20_000;
      const warm = await drive(port, CONNECTIONS, HEAVY, () => performance.now() < stopAt);

      ctx.log('small requests alone: 15 s at 60 connections');
      stopAt = performance.now() + 15_000;
      const alone = await drive(port, CONNECTIONS - HEAVY, 0, () => performance.now() < stopAt);

      ctx.log(
        `mixed load with ${HEAVY} heavy: ${SOAK_SECONDS} s, an ingest every ${INGEST_SECONDS} s, two rotations`,
      );
      const started = performance.now();
      stopAt = started + SOAK_SECONDS * 1000;
      const mixed = drive(port, CONNECTIONS, HEAVY, () => performance.now() < stopAt);
      const trace = new RssTrace(pid);
      let mismatches = 0;
      let ingests = 0;
      let rotations = 0;
      const checkProbes = async () => {
        const fresh = await openStore(store, { now: NOW, threads: 1, accounts });
        try {
          for (const target of PROBES) {
            const [served, expected] = await Promise.all([
              fetch(`${server.url}${target}`, { headers: { Authorization: `Bearer ${TOKENS[0]}` } }).then(
                (r) => r.text(),
              ),
              fresh.request(target, { token: TOKENS[0]! }).then((r) => r.body),
            ]);
            probesSent++;
            if (served !== expected) mismatches++;
          }
        } finally {
          fresh.close();
        }
      };
      while (performance.now() < stopAt) {
        const next = Math.min(stopAt, performance.now() + INGEST_SECONDS * 1000);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
        if (performance.now() >= stopAt) break;
        await writeSyntheticBatch(store, batch++, 3, 40, 'ZZZ');
        ingests++;
        await checkProbes();
        // Rotations: moved then SIGHUP; later moved alone (the server notices the file is gone).
        if (rotations < 2) {
          await rename(log, `${log}.${rotations + 1}`).catch(() => undefined);
          if (rotations === 0) server.child.kill('SIGHUP');
          rotations++;
        }
      }
      const tally = await mixed;
      const rss = trace.stop();
      await checkProbes();

      server.child.kill('SIGTERM');
      await new Promise<void>((resolve) => server.child.once('exit', () => resolve()));
      let lines: string[] = [];
      for (const file of [`${log}.1`, `${log}.2`, log]) {
        const text = await readFile(file, 'utf8').catch(() => '');
        lines = lines.concat(text.split('\n').filter((line) => line !== ''));
      }
      let torn = 0;
      const ids = new Set<number>();
      for (const line of lines) {
        try {
          ids.add((JSON.parse(line) as { logId: number }).logId);
        } catch {
          torn++;
        }
      }
      const metered = warm.answered + alone.answered + tally.answered + probesSent;
      const fivexx = [warm, alone, tally].reduce(
        (n, t) => n + [...t.statuses].filter(([s]) => s >= 500 || s === 0).reduce((m, [, c]) => m + c, 0),
        0,
      );

      ctx.log('token lookup: 200,000 accounts against 1');
      const { one, many } = lookupMs(20_000, 21);

      return [
        ratioRow({
          name: 'soak: 5xx answers (and lost connections)',
          ours: fivexx,
          unit: 'errors',
          target: '≤ 0 errors',
          note: `${tally.answered} requests in ${SOAK_SECONDS} s, ${ingests} ingests; ${statusText(tally.statuses)}`,
        }),
        ratioRow({
          name: 'soak: answers unlike a fresh reader at the same version',
          ours: mismatches,
          unit: 'answers',
          target: '≤ 0 answers',
          note: `${probesSent} probes after ${ingests} ingests`,
        }),
        ratioRow({
          name: 'soak: server RSS, last third of the load vs first third',
          ours: rss.lastMb,
          baseline: rss.firstMb,
          unit: 'MB',
          target: '≤ 1.1× baseline',
          note: `medians of ${rss.count} samples, one a second`,
        }),
        ratioRow({
          name: 'soak: server RSS at the end (median of the last third)',
          ours: rss.lastMb,
          unit: 'MB',
          target: '< 512 MB',
          note: `peak ${rss.peakMb.toFixed(0)} MB while heavy answers were built`,
        }),
        ratioRow({
          name: 'soak: request-log lines lost or torn',
          ours: Math.abs(metered - lines.length) + torn + (lines.length - ids.size),
          unit: 'lines',
          target: '≤ 0 lines',
          note: `${lines.length} lines in 3 files for ${metered} answers, ${rotations} rotations, ${torn} torn, ${ids.size} distinct ids`,
        }),
        ratioRow({
          name: 'soak: p99 of small requests with 4 heavy vs alone',
          ours: p99(tally.smallMs),
          baseline: p99(alone.smallMs),
          unit: 'ms',
          target: '≤ 5× baseline',
        }),
        ratioRow({
          name: 'soak: token lookup, 200,000 accounts vs 1',
          ours: many,
          baseline: one,
          unit: 'ms',
          target: '≤ 1.1× baseline',
          note: 'median of 21 rounds of 20,000 lookups, alternating',
        }),
      ];
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  },
});
