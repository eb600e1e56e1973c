/**
 * Session loop: the backtest loop as users write it — every session of `data/sample`, the SPY chain with
 * `dte=30`, puts, asked through `store.at(<session> 15:45 ET)` — against the same loop through
 * `store.request` (URL in, JSON text out) in the same run, each on a freshly opened store. A second pair
 * of rows times the typed face against the endpoint function it calls, for a whole SPY chain. On the chain
 * bench's 26 M-row store (when built), the 2019 loop, and the same loop with the blocks it reads by default
 * (for a chain this dense, the date asked's block of each session) against blocks of the whole chain,
 * answer by answer.
 *
 * The loops users write run on the built package (`installedOpenStore`), as an install runs them; the
 * rows that reach inside a store (the typed face against its endpoint function, one loop's blocks
 * against another's) run both sides from the sources.
 */
import { join } from 'node:path';
import { openStore, storeInternals } from '../src/library/store.js';
import { etWallToSeconds, sessionsBetween } from '../src/market-time/index.js';
import { currentAsOf } from '../src/pit/as-of.js';
import { chain } from '../src/query/endpoints/options-chain.js';
import { StoreCache } from '../src/store/cache.js';
import { readManifest } from '../src/store/manifest.js';
import { CHAIN_STORE_DIR } from './generated-store.js';
import {
  type BenchRow,
  defineBenchmark,
  installedOpenStore,
  loadAverage,
  ratioRow,
  rssPeakMb,
} from './lib.js';

/** The chain bench's 26-million-row store, when it has been built (`npm run bench -- chain`). */
const BIG_STORE = CHAIN_STORE_DIR;

/**
 * The same typed loop over 2019 of the chain bench's store, SPY's dense listing: per session and the
 * process's peak RSS (this process has run the sample's loops before). No rows when the store is not built.
 */
async function bigStoreLoop(repoRoot: string, log: (line: string) => void): Promise<BenchRow[]> {
  const dir = join(repoRoot, ...BIG_STORE);
  if ((await readManifest(dir).catch(() => undefined)) === undefined) {
    log(`no ${BIG_STORE.join('/')}: the 26 M-row loop is skipped (npm run bench -- chain builds it)`);
    return [];
  }
  // The store's deep LEAPS go unquoted from one generated year to the next: the loop's blocks carry
  // their last snapshots (block-carry.ts carriedRows), so the whole year is answered from blocks.
  const sessions = sessionsBetween('2019-01-02', '2019-12-31');
  log(`typed loop over ${sessions.length} sessions of ${BIG_STORE.join('/')}, three times`);
  const typedLoop = async () => {
    const store = await installedOpenStore(dir);
    try {
      let rows = 0;
      const started = performance.now();
      for (const session of sessions) {
        const T = etWallToSeconds(session, '15:45');
        rows += (await store.at(T).options.chain('SPY', { dte: 30, side: 'put' })).length;
      }
      return { ms: performance.now() - started, rows };
    } finally {
      store.close();
    }
  };
  // Three times, each on a freshly opened store, the best of three, as the big-store bench's 2019 loop (the
  // first run also warms the operating system's cache of the files, which the chain bench's reads left
  // cold, and the second still runs partly unoptimised code: the better of two flapped around the target,
  // 1.56, 1.95 and 2.14 ms in three runs).
  const { value: first, peakMb } = await rssPeakMb(typedLoop);
  const runs = [first, await typedLoop(), await typedLoop()];
  const value = runs.reduce((best, run) => (run.ms < best.ms ? run : best));
  const perSession = (run: { ms: number }) => (run.ms / sessions.length).toFixed(2);
  const load = loadAverage();
  return [
    ratioRow({
      name: 'loop: store.at(T).options.chain per session, 26 M-row store',
      ours: value.ms / sessions.length,
      unit: 'ms',
      target: '≤ 2 ms',
      note: `SPY dte=30 puts at 15:45, 2019 (${sessions.length} sessions, ${value.rows} rows); the best of three runs (${runs.map(perSession).join(', ')}); load ${load}`,
    }),
    ratioRow({
      name: 'loop: peak RSS, 26 M-row store',
      ours: peakMb,
      unit: 'MB',
      target: '< 512 MB',
      note: 'the whole process, after the sample loops; the first run',
    }),
  ];
}

/**
 * The same 2019 loop through the chain endpoint on the 26 M-row store, with the blocks it reads by default
 * (for a chain this dense, the date asked's block of each session, `ONE_DATE_SESSION_ROWS`) and with
 * blocks of the whole chain, on caches of their own:
 * per session each way, and how many sessions' answers differ. No rows when the store is not built.
 */
async function defaultVsWhole(repoRoot: string, log: (line: string) => void): Promise<BenchRow[]> {
  const dir = join(repoRoot, ...BIG_STORE);
  if ((await readManifest(dir).catch(() => undefined)) === undefined) return [];
  const sessions = sessionsBetween('2019-01-02', '2019-12-31');
  log(
    `the 2019 loop with its default blocks and with blocks of the whole chain, ${sessions.length} sessions each`,
  );
  const store = await openStore(dir);
  try {
    const loop = async (whole: boolean) => {
      // Blocks of the whole chain: no blocks of some dates, and no dates' session blocks either.
      const cache = new StoreCache(
        () => store.dataVersion,
        whole
          ? { loopWindowRows: Number.POSITIVE_INFINITY, oneDateSessionRows: Number.POSITIVE_INFINITY }
          : {},
      );
      const answers: string[] = [];
      const started = performance.now();
      for (const session of sessions) {
        const T = etWallToSeconds(session, '15:45');
        const answer = await chain.run({
          sql: storeInternals(store).reader.sql,
          cache,
          nowSeconds: T,
          path: { underlying: 'SPY' },
          query: { dte: '30', side: 'put' },
          asOf: currentAsOf('live', T),
          mode: 'live',
          greeks: 'vendor',
        });
        answers.push(JSON.stringify(answer.kind === 'ok' ? answer.fields : answer));
      }
      return { ms: (performance.now() - started) / sessions.length, answers };
    };
    // Whole first: it also warms the operating system's cache of the files for the second.
    const whole = await loop(true);
    const byDefault = await loop(false);
    const wholeAgain = await loop(true);
    const differing = byDefault.answers.filter((answer, i) => answer !== whole.answers[i]).length;
    const load = loadAverage();
    return [
      ratioRow({
        name: 'loop: blocks of the date asked vs of the whole chain, 26 M-row store',
        ours: byDefault.ms,
        baseline: Math.min(whole.ms, wholeAgain.ms),
        unit: 'ms',
        target: '≤ 1× baseline time',
        note: `chain endpoint, SPY dte=30 puts at 15:45, ${sessions.length} sessions of 2019, per session; whole-chain blocks ${whole.ms.toFixed(1)} then ${wholeAgain.ms.toFixed(1)} ms; load ${load}`,
      }),
      ratioRow({
        name: 'loop: sessions answered differently, date vs whole chain',
        ours: differing,
        unit: 'sessions',
        target: '≤ 0 sessions',
        note: `of ${sessions.length}`,
      }),
    ];
  } finally {
    store.close();
  }
}

const FIRST = '2019-01-02';
const LAST = '2020-12-31';

export default defineBenchmark({
  name: 'loop',
  description: 'a 505-session backtest loop on data/sample: store.at(T).options.chain vs store.request',
  async run(ctx) {
    const dir = `${ctx.repoRoot}data/sample`;
    const sessions = sessionsBetween(FIRST, LAST);
    const instant = (session: string) => etWallToSeconds(session, '15:45');

    const typedLoop = async () => {
      let rows = 0;
      const store = await installedOpenStore(dir);
      try {
        const started = performance.now();
        for (const session of sessions) {
          const result = await store.at(instant(session)).options.chain('SPY', { dte: 30, side: 'put' });
          rows += result.length;
        }
        return { ms: performance.now() - started, rows };
      } finally {
        store.close();
      }
    };
    const requestLoop = async () => {
      let rows = 0;
      const store = await installedOpenStore(dir);
      try {
        const started = performance.now();
        for (const session of sessions) {
          const response = await store.request('/v1/options/chain/SPY/?dte=30&side=put', {
            now: instant(session),
          });
          if (response.status === 200) rows += (JSON.parse(response.body).optionSymbol as unknown[]).length;
        }
        return { ms: performance.now() - started, rows };
      } finally {
        store.close();
      }
    };
    // Each loop twice, alternating, each on a freshly opened store; the better of two (the first run
    // also warms the operating system's cache of the files for whichever loop comes second).
    ctx.log(`typed loop and store.request loop over ${sessions.length} sessions, twice each`);
    const { value: firstTyped, peakMb } = await rssPeakMb(typedLoop);
    const firstRequest = await requestLoop();
    const secondTyped = await typedLoop();
    const secondRequest = await requestLoop();
    const rows = firstTyped.rows;
    if (rows !== firstRequest.rows || rows !== secondTyped.rows || rows !== secondRequest.rows) {
      throw new Error(`the loops disagree: ${rows} rows typed, ${firstRequest.rows} by request`);
    }
    const typedMs = Math.min(firstTyped.ms, secondTyped.ms);
    const requestMs = Math.min(firstRequest.ms, secondRequest.ms);

    ctx.log('typed face vs the endpoint function: whole SPY chains at 60 instants, each asked once');
    const instants = sessions.slice(100, 160).map((session) => instant(session));
    const wholeChainViaEndpoint = async () => {
      const store = await openStore(dir);
      try {
        const cache = new StoreCache(() => store.dataVersion);
        const started = performance.now();
        for (const T of instants) {
          await chain.run({
            sql: storeInternals(store).reader.sql,
            cache,
            nowSeconds: T,
            path: { underlying: 'SPY' },
            query: { expiration: 'all' },
            asOf: currentAsOf('live', T),
            mode: 'live',
            greeks: 'vendor',
          });
        }
        return performance.now() - started;
      } finally {
        store.close();
      }
    };
    const wholeChainTyped = async () => {
      const store = await openStore(dir);
      try {
        const started = performance.now();
        for (const T of instants) await store.options.chain('SPY', { expiration: 'all' }, { now: T });
        return performance.now() - started;
      } finally {
        store.close();
      }
    };
    const endpointRuns: number[] = [];
    const typedRuns: number[] = [];
    for (let run = 0; run < 3; run++) {
      endpointRuns.push(await wholeChainViaEndpoint());
      typedRuns.push(await wholeChainTyped());
    }
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
    const big = await bigStoreLoop(ctx.repoRoot, ctx.log);
    const dates = await defaultVsWhole(ctx.repoRoot, ctx.log);
    const endpointMs = median(endpointRuns) / instants.length;
    const typedChainMs = median(typedRuns) / instants.length;
    return [
      ratioRow({
        name: 'loop: store.at(T).options.chain per session',
        ours: typedMs / sessions.length,
        baseline: requestMs / sessions.length,
        unit: 'ms',
        target: '≤ 2 ms',
        note: `${sessions.length} sessions, ${rows} rows; store.request ${(requestMs / 1000).toFixed(1)} s in all`,
      }),
      ratioRow({
        name: 'loop: typed loop vs store.request loop',
        ours: typedMs,
        baseline: requestMs,
        unit: 'ms',
        target: '≤ 0.05× baseline time',
        note: `${(requestMs / typedMs).toFixed(1)}× faster`,
      }),
      ratioRow({
        name: 'loop: peak RSS of the typed loop',
        ours: peakMb,
        unit: 'MB',
        target: '< 512 MB',
        note: 'DuckDB may hold up to its 256 MB reader limit',
      }),
      ratioRow({
        name: 'loop: typed face vs endpoint, whole SPY chain',
        ours: typedChainMs,
        baseline: endpointMs,
        unit: 'ms',
        target: '≤ 1.1× baseline time',
        note: `per instant, median of 3 runs over ${instants.length} instants`,
      }),
      ...big,
      ...dates,
    ];
  },
});
