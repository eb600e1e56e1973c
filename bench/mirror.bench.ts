/**
 * Mirror benchmark: `pitchain mirror`'s throughput (sessions/s) from a local `pitchain serve` (the built
 * CLI, its own process) of a generated SPY+AAPL store, EOD snapshots, into an empty store: every dated
 * chain, the daily and the minute bars, ingested and committed as they arrive. The baseline, measured in
 * the same run, downloads the same requests with the same concurrency and ingests nothing: the ratio is
 * what the ingest and commits cost on top of the transfer.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createClient, requestTarget } from '../src/client/index.js';
import { sessionsBetween } from '../src/market-time/index.js';
import { runMirror } from '../src/mirror/run.js';
import { ensureBuilt, runCommand } from '../test/helpers/build.js';
import { defineBenchmark, perSecond, ratioRow } from './lib.js';

const FROM = '2020-01-02';
const TO = process.env['MIRROR_BENCH_TO'] ?? '2020-04-30';
const UNDERLYINGS = ['SPY', 'AAPL'];
const CONCURRENCY = 8;

function startServer(bin: string, store: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [bin, 'serve', '--store', store, '--port', '0', '--now', '2020-06-01T12:00:00-04:00', '--no-log'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match !== null) resolve({ child, url: match[1]! });
    });
    child.once('exit', (code) => reject(new Error(`pitchain serve exited with ${code}: ${out}`)));
  });
}

export default defineBenchmark({
  name: 'mirror',
  description: `pitchain mirror of ${UNDERLYINGS.join('+')} ${FROM}..${TO} from a local server, sessions/s`,
  async run(ctx) {
    await ensureBuilt();
    const bin = join(ctx.repoRoot, 'dist/cli/bin.js');
    const dir = await ctx.tempDir('pitchain-bench-mirror-');
    const source = join(dir, 'source');
    ctx.log(`generating ${UNDERLYINGS.join(', ')} ${FROM}..${TO}`);
    const generated = await runCommand(process.execPath, [
      bin,
      'generate',
      '--store',
      source,
      '--underlyings',
      UNDERLYINGS.join(','),
      '--from',
      FROM,
      '--to',
      TO,
      '--snapshots',
      'eod',
    ]);
    if (generated.code !== 0) throw new Error(`generate failed: ${generated.stderr}`);
    const sessions = sessionsBetween(FROM, TO);
    const server = await startServer(bin, source);
    try {
      // Baseline: the same chain and candle requests, downloaded with the same concurrency, nothing kept.
      const targets = [
        ...UNDERLYINGS.map((u) =>
          requestTarget({
            service: '/v1/stocks/candles/',
            path: { resolution: 'D', symbol: u },
            params: { from: FROM, to: TO, adjustsplits: false, adjustdividends: false },
          }),
        ),
        ...sessions.flatMap((d) =>
          UNDERLYINGS.map((u) =>
            requestTarget({
              service: '/v1/options/chain/',
              path: { underlying: u },
              params: { date: d, expiration: 'all', nonstandard: true },
            }),
          ),
        ),
      ];
      const raw = createClient({ baseUrl: server.url });
      await raw.get(targets[targets.length - 1]!); // warm the connection and the server's first read
      const downloadStart = performance.now();
      const queue = [...targets];
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let target = queue.shift(); target !== undefined; target = queue.shift())
            await raw.get(target);
        }),
      );
      const downloadMs = performance.now() - downloadStart;

      ctx.log(`mirroring ${sessions.length} sessions`);
      const client = createClient({ baseUrl: server.url });
      const started = performance.now();
      const report = await runMirror({
        client,
        store: join(dir, 'copy'),
        underlyings: UNDERLYINGS,
        from: FROM,
        to: TO,
        noIntraday: true,
        concurrency: CONCURRENCY,
      });
      const mirrorMs = performance.now() - started;
      if (report.sessionsDone !== sessions.length || report.stopped !== undefined) {
        throw new Error(`mirror incomplete: ${JSON.stringify(report)}`);
      }
      const withMinutes = await runMirror({
        client,
        store: join(dir, 'copy'),
        underlyings: UNDERLYINGS,
        from: FROM,
        to: TO,
        concurrency: CONCURRENCY,
      });
      return [
        ratioRow({
          name: 'mirror chains+daily bars (sessions/s)',
          ours: perSecond(sessions.length, mirrorMs),
          baseline: perSecond(sessions.length, downloadMs),
          unit: 'sessions/s',
          target: '≥ 0.25× baseline',
          note: `${sessions.length} sessions × ${UNDERLYINGS.length} underlyings, ${report.credits} credits; baseline: download only`,
        }),
        ratioRow({
          name: 'mirror minute bars after (s)',
          ours: withMinutes.seconds,
          unit: 's',
          target: '≤ 60 s',
          note: `${withMinutes.fetched} requests, ${withMinutes.credits} credits`,
        }),
      ];
    } finally {
      server.child.kill('SIGTERM');
    }
  },
});
