/**
 * Copies what a backtest reads from a service that speaks the API into a store, through
 * `pitchain/client`: the dated chain of every session (`date=D&expiration=all`), the raw daily bars and
 * the minute bars when the service has them. Each answer is staged by the store's own ingest
 * (`marketdata-json`: chains, and candles bodies) and committed in batches as it arrives
 * (`ingester.ts`), its request recorded as the source; a later run asks only for what the store's
 * provenance does not hold yet. `pitchain mirror` (`cli/mirror.ts`) is its command line.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAX_IN_FLIGHT } from '../client/client.js';
import type { Client } from '../client/index.js';
import { type DataQuality, measureStoredQuality } from '../ingest/quality.js';
import { openStore, storeInternals } from '../library/store.js';
import { toEtDate } from '../market-time/index.js';
import { readManifest } from '../store/manifest.js';
import { estimateItems, predictCredits } from './estimate.js';
import { Ingester } from './ingester.js';
import { planItems } from './plan.js';
import type { MirrorOptions, MirrorReport } from './types.js';

/** Copies the service's history for `underlyings` over `from`…`to` into `store` (see the module comment). */
export async function runMirror(options: MirrorOptions): Promise<MirrorReport> {
  const started = Date.now();
  const { client } = options;
  const spentAtStart = client.credits.spent;
  const spent = () => client.credits.spent - spentAtStart;
  const sessions = await sessionsOf(client, options.from, options.to);
  const manifest = await readManifest(path.resolve(options.store));
  const held = new Set((manifest?.provenance ?? []).map((p) => p.source));
  const plan = planItems(client, options, sessions);
  const missing = plan.filter((item) => !held.has(item.source));
  const estimate =
    options.dryRun || options.budget !== undefined
      ? await estimateItems(client, missing, spent, options.budget)
      : undefined;
  const todo =
    estimate === undefined
      ? missing
      : missing.filter((item) => item.expectedRows !== 0 || item.kind === 'chain');

  // A session is done once the chain of every underlying is in the store.
  const chainsLeft = new Map<string, number>();
  for (const item of missing) {
    if (item.kind === 'chain') chainsLeft.set(item.session!, (chainsLeft.get(item.session!) ?? 0) + 1);
  }
  const sessionsBefore = sessions.length - chainsLeft.size;
  let sessionsDone = sessionsBefore;
  if (estimate !== undefined)
    options.onEstimate?.(estimate, { missing: chainsLeft.size, total: sessions.length });
  const report = (
    stopped: MirrorReport['stopped'],
    failure: unknown,
    dataVersion: string | undefined,
    fetched: number,
    quality?: DataQuality,
  ): MirrorReport => ({
    sessions: sessions.length,
    sessionsDone,
    sessionsMirrored: sessionsDone - sessionsBefore,
    fetched,
    skipped: plan.length - missing.length,
    credits: spent(),
    estimate,
    stopped,
    failure,
    dataVersion,
    quality,
    seconds: (Date.now() - started) / 1000,
  });
  if (options.dryRun) return report(undefined, undefined, manifest?.dataVersion, 0);

  const spool = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-mirror-'));
  const ingest = new Ingester(options.store, spool, options.commitEvery ?? 50);
  const progress = () => options.onProgress?.({ sessionsDone, sessions: sessions.length, credits: spent() });
  progress();
  let stopped: MirrorReport['stopped'];
  let failure: unknown;
  let fetched = 0;
  let reserved = 0;
  const expectedByUnderlying = new Map<string, number>();
  const queue = [...todo];
  const worker = async (): Promise<void> => {
    while (stopped === undefined) {
      if (options.signal?.aborted) {
        stopped = 'interrupt';
        return;
      }
      const item = queue.shift();
      if (item === undefined) return;
      const predicted = options.budget === undefined ? 0 : predictCredits(item, expectedByUnderlying);
      if (options.budget !== undefined && spent() + reserved + predicted > options.budget) {
        stopped = 'budget';
        return;
      }
      reserved += predicted;
      try {
        const result = await item.fetch();
        fetched++;
        if (item.kind === 'chain') {
          const seen = Math.max(expectedByUnderlying.get(item.underlying) ?? 0, result.length);
          expectedByUnderlying.set(item.underlying, seen);
        }
        if (!result.meta.noData) await ingest.add(item, result);
        if (item.kind === 'chain') {
          const left = chainsLeft.get(item.session!)! - 1;
          chainsLeft.set(item.session!, left);
          if (left === 0) sessionsDone++;
        }
        progress();
      } catch (error) {
        stopped ??= 'failure';
        failure ??= error;
      } finally {
        reserved -= predicted;
      }
    }
  };
  try {
    const workers = Math.max(1, Math.min(options.concurrency ?? 8, MAX_IN_FLIGHT));
    await Promise.all(Array.from({ length: workers }, worker));
  } finally {
    // What arrived is committed whatever stopped the run, so that the next run starts after it.
    await ingest.flush().catch((error: unknown) => {
      stopped = 'failure';
      failure ??= error;
    });
    await fs.rm(spool, { recursive: true, force: true });
  }
  const after = await readManifest(path.resolve(options.store));
  const wrote = after !== undefined && after.dataVersion !== manifest?.dataVersion;
  const quality = wrote ? await measureRange(options) : undefined;
  return report(stopped, failure, after?.dataVersion, fetched, quality);
}

/**
 * The data-quality summary of the store's option rows of the run's underlyings and range: measured once
 * per run, where each answer's own (one session of one underlying) would cost a query per request.
 */
async function measureRange(options: MirrorOptions): Promise<DataQuality> {
  const store = await openStore(options.store, { threads: 1 });
  try {
    return await measureStoredQuality(storeInternals(store).reader.sql, options);
  } finally {
    store.close();
  }
}

/** The sessions of `from`…`to` as the service's market status gives them. */
async function sessionsOf(client: Client, from: string, to: string): Promise<string[]> {
  const status = await client.markets.status({ from, to });
  const dates = (status.columns['date'] ?? []) as number[];
  const states = (status.columns['status'] ?? []) as string[];
  return dates.flatMap((date, i) => (states[i] === 'open' ? [toEtDate(date)] : [])).sort();
}
