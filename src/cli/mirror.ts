/**
 * `pitchain mirror`: copies what a backtest reads from a service that speaks the API into a store, through
 * `pitchain/client`: the dated chain of every session (`date=D&expiration=all`), the raw daily bars and
 * the minute bars when the service has them. Each answer is staged by the store's own ingest
 * (`marketdata-json`: chains, and candles bodies) and committed in batches as it arrives, its request
 * recorded as the source; a later run asks only for what the store's provenance does not hold yet.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { creditsFor } from '../billing/credits.js';
import { MAX_IN_FLIGHT } from '../client/client.js';
import { type Client, createClient, requestTarget } from '../client/index.js';
import { UsageError } from '../errors.js';
import { stageCandlesBody } from '../ingest/formats/candles-json.js';
import type { IngestFormat } from '../ingest/formats/index.js';
import { marketDataJsonFormat } from '../ingest/formats/marketdata-json.js';
import { commitStaged, stageFiles } from '../ingest/ingest.js';
import { type DataQuality, measureStoredQuality } from '../ingest/quality.js';
import type { AnyParams } from '../library/params.js';
import type { QueryResult } from '../library/result.js';
import { openStore, storeInternals } from '../library/store.js';
import { isIsoDate, toEtDate } from '../market-time/index.js';
import { readManifest } from '../store/manifest.js';
import { WriteTransaction } from '../store/writer.js';
import { examplesHelp, indent, renderTable } from './format.js';
import { renderQuality } from './ingest.js';
import { INTERRUPTED_EXIT } from './interrupt.js';
import { type Progress, startProgress } from './progress.js';

/** What `runMirror` copies, from where, into which store, within what budget. */
export type MirrorOptions = {
  readonly client: Client;
  readonly store: string;
  readonly underlyings: readonly string[];
  /** First and last session, `YYYY-MM-DD` (Eastern). */
  readonly from: string;
  readonly to: string;
  /** Stop before the credits spent (estimate included) would exceed this. */
  readonly budget?: number;
  /** Estimate only: nothing is fetched beyond the cheap endpoints, nothing written. */
  readonly dryRun?: boolean;
  /** Skip the minute bars. */
  readonly noIntraday?: boolean;
  /** Requests of the mirror in flight at once (default 8; the client caps every caller at 50). */
  readonly concurrency?: number;
  /** The most answers staged per commit (default 50): a commit takes what arrived while the last one ran. */
  readonly commitEvery?: number;
  /** Stops the run as a budget would: what arrived is committed. */
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: MirrorProgress) => void;
  /** Called with the estimate (dry run or budget) before anything but the cheap endpoints is fetched. */
  readonly onEstimate?: (estimate: MirrorEstimate, sessions: { missing: number; total: number }) => void;
};

export type MirrorProgress = {
  readonly sessionsDone: number;
  readonly sessions: number;
  readonly credits: number;
};

/** Credits a run is expected to cost, by kind of request, for what the store does not hold yet. */
export type MirrorEstimate = {
  readonly rows: readonly { readonly what: string; readonly requests: number; readonly credits: number }[];
  readonly credits: number;
  /** Credits the estimate itself spent (strikes and a minute-bar probe per underlying). */
  readonly spent: number;
  /** Set when the budget did not cover the estimate's own requests: the figures cover only part. */
  readonly partial?: true;
};

export type MirrorReport = {
  /** Sessions in the range, and those whose chains (every underlying) the store holds after the run. */
  readonly sessions: number;
  readonly sessionsDone: number;
  /** Sessions this run completed (their last missing chain arrived). */
  readonly sessionsMirrored: number;
  /** Requests the run sent for data, and those it skipped as already in the store. */
  readonly fetched: number;
  readonly skipped: number;
  /** Credits the service reported for every request of the run (`X-Api-Ratelimit-Consumed`, summed). */
  readonly credits: number;
  readonly estimate: MirrorEstimate | undefined;
  /** Why the run ended early, if it did; `failure` holds the error. */
  readonly stopped: 'budget' | 'failure' | 'interrupt' | undefined;
  readonly failure: unknown;
  /** The store's data version after the run (undefined when nothing was ever committed). */
  readonly dataVersion: string | undefined;
  /** The data-quality summary of the range's option rows in the store, once the run wrote something. */
  readonly quality: DataQuality | undefined;
  readonly seconds: number;
};

/** One request of the plan: what it fetches, the source name it is recorded under, its predicted cost. */
type Item = {
  readonly kind: 'chain' | 'daily' | 'minute';
  readonly underlying: string;
  /** The session of a chain; the first session of a month of minute bars. */
  readonly session: string | undefined;
  readonly sessions: number;
  readonly source: string;
  readonly fetch: () => Promise<QueryResult>;
  /** Rows expected (chain contracts, bars), from the estimate; undefined when not estimated. */
  expectedRows?: number;
};

const CHAIN = '/v1/options/chain/';
const CANDLES = '/v1/stocks/candles/';
/** Budget headroom on a chain's expected size: chains grow from session to session. */
const CHAIN_MARGIN = 1.25;
/** Chain rows a commit takes at most (at least one chain): bounds the chains held in memory and merged. */
const BATCH_ROWS = 200_000;

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

/** Every request the range needs: per underlying its daily bars, its minute bars by month, and a chain per session. */
function planItems(client: Client, options: MirrorOptions, sessions: readonly string[]): Item[] {
  const items: Item[] = [];
  for (const underlying of options.underlyings) {
    const daily: AnyParams = {
      from: options.from,
      to: options.to,
      adjustsplits: false,
      adjustdividends: false,
    };
    items.push({
      kind: 'daily',
      underlying,
      session: undefined,
      sessions: sessions.length,
      source: requestTarget({
        service: CANDLES,
        path: { resolution: 'D', symbol: underlying },
        params: daily,
      }),
      fetch: () => client.stocks.candles('D', underlying, daily),
    });
    if (!options.noIntraday) {
      for (const month of monthWindows(sessions)) {
        const minute: AnyParams = { from: month.from, to: month.to, extended: true };
        items.push({
          kind: 'minute',
          underlying,
          session: month.from,
          sessions: month.sessions,
          source: requestTarget({
            service: CANDLES,
            path: { resolution: '1', symbol: underlying },
            params: minute,
          }),
          fetch: () => client.stocks.candles('1', underlying, minute),
        });
      }
    }
  }
  for (const session of sessions) {
    for (const underlying of options.underlyings) {
      const params: AnyParams = { date: session, expiration: 'all', nonstandard: true };
      items.push({
        kind: 'chain',
        underlying,
        session,
        sessions: 1,
        source: requestTarget({ service: CHAIN, path: { underlying }, params }),
        fetch: () => client.options.chain(underlying, params),
      });
    }
  }
  return items;
}

/** The sessions grouped by calendar month: one minute-bar request each (its own source, so a rerun resumes by month). */
function monthWindows(sessions: readonly string[]): { from: string; to: string; sessions: number }[] {
  const months = new Map<string, string[]>();
  for (const session of sessions) {
    const key = session.slice(0, 7);
    const list = months.get(key) ?? [];
    list.push(session);
    months.set(key, list);
  }
  return [...months.values()].map((list) => ({ from: list[0]!, to: list.at(-1)!, sessions: list.length }));
}

/**
 * The credits the missing requests will cost, from the cheap endpoints: the strikes of the first and last
 * missing session per underlying (a chain holds a call and a put per listed strike; sessions between are
 * interpolated) and one session's minute bars. Sets each item's `expectedRows`.
 */
async function estimateItems(
  client: Client,
  items: readonly Item[],
  spent: () => number,
  budget: number | undefined,
): Promise<MirrorEstimate> {
  const before = spent();
  // Each request of the estimate costs at most one credit (strikes; one session of minute bars).
  let partial = false;
  const affordable = () => {
    const yes = budget === undefined || spent() + 1 <= budget;
    partial ||= !yes;
    return yes;
  };
  const totals = new Map<string, { requests: number; credits: number }>();
  const add = (what: string, credits: number) => {
    const row = totals.get(what) ?? { requests: 0, credits: 0 };
    totals.set(what, { requests: row.requests + 1, credits: row.credits + credits });
  };
  for (const underlying of new Set(items.map((item) => item.underlying))) {
    const mine = items.filter((item) => item.underlying === underlying);
    const chains = mine.filter((item) => item.kind === 'chain');
    if (!affordable()) break;
    if (chains.length > 0) {
      const first = await contractsOn(client, underlying, chains[0]!.session!);
      const last =
        chains.length === 1 || !affordable()
          ? first
          : await contractsOn(client, underlying, chains.at(-1)!.session!);
      chains.forEach((item, i) => {
        item.expectedRows = Math.round(first + ((last - first) * i) / Math.max(chains.length - 1, 1));
        add('option chains', estimatedCredits(item.expectedRows));
      });
    }
    const minutes = mine.filter((item) => item.kind === 'minute');
    const probeDay = minutes[0]?.session;
    const perSession =
      probeDay === undefined || !affordable()
        ? undefined
        : (await client.stocks.candles('1', underlying, { date: probeDay })).length;
    for (const item of perSession === undefined ? [] : minutes) {
      item.expectedRows = perSession! * item.sessions;
      if (item.expectedRows > 0) add('minute bars', estimatedCredits(item.expectedRows));
    }
    for (const item of mine.filter((i) => i.kind === 'daily')) {
      item.expectedRows = item.sessions;
      add('daily bars', estimatedCredits(item.sessions));
    }
  }
  const rows = [...totals].map(([what, row]) => ({ what, ...row }));
  return {
    rows,
    credits: rows.reduce((sum, row) => sum + row.credits, 0),
    spent: spent() - before,
    ...(partial ? { partial: true as const } : {}),
  };
}

/** The service's credits for an answer of `rows` chain or candle rows (the `per-1000-rows` rule). */
function perThousandRows(rows: number): number {
  return creditsFor('per-1000-rows', rows, [], false);
}

/** The estimate's credits for `rows` expected rows: none when none are expected. */
function estimatedCredits(rows: number): number {
  return rows > 0 ? perThousandRows(rows) : 0;
}

/** Contracts listed on `session`: a call and a put per strike of every expiration (0 when none). */
async function contractsOn(client: Client, underlying: string, session: string): Promise<number> {
  const strikes = await client.options.strikes(underlying, { date: session });
  let count = 0;
  for (const [key, values] of Object.entries(strikes.columns)) {
    if (isIsoDate(key)) count += 2 * values.length;
  }
  return count;
}

/** The most an item may cost, for the budget: its expected rows (chains with headroom) per 1,000. */
function predictCredits(item: Item, chainSeen: ReadonlyMap<string, number>): number {
  if (item.kind !== 'chain') return perThousandRows(item.expectedRows ?? 1);
  const rows = Math.max(item.expectedRows ?? 1, chainSeen.get(item.underlying) ?? 0) * CHAIN_MARGIN;
  return perThousandRows(rows);
}

/** An answer written for the ingest, with what its format needs to read it. */
type Spooled = {
  readonly file: string;
  readonly source: string;
  readonly candles?: { symbol: string; resolution: string };
};

/** A chain answer held for the batch's one merged chain body: its columns and its own body's digest. */
type HeldChain = {
  readonly source: string;
  readonly columns: Readonly<Record<string, unknown>>;
  readonly rows: number;
  readonly sha256: string;
};

/**
 * Commits answers in batches while the downloads go on: a commit starts as soon as the one before it has
 * ended and an answer waits, and takes every answer waiting (at most `most`), so batches grow with the
 * commit's cost and the last one, after the downloads, is small. An answer arriving while a batch's worth
 * waits (`most` answers, or chains of `BATCH_ROWS` rows: they are held in memory until their commit)
 * holds its worker until the commit under way ends (bounded memory). After a failed commit nothing more
 * is committed; the failure surfaces in `add` and `flush`.
 */
class Ingester {
  private chains: HeldChain[] = [];
  private pending: Spooled[] = [];
  private committing: Promise<void> | undefined;
  private failed: { error: unknown } | undefined;
  private count = 0;

  constructor(
    private readonly store: string,
    private readonly spool: string,
    private readonly most: number,
  ) {}

  async add(item: Item, result: QueryResult): Promise<void> {
    this.throwIfFailed();
    const text = JSON.stringify({ s: 'ok', ...result.columns, ...result.meta.scalars });
    if (item.kind === 'chain') {
      const sha256 = createHash('sha256').update(text).digest('hex');
      this.chains.push({ source: item.source, columns: result.columns, rows: result.length, sha256 });
    } else {
      const file = path.join(this.spool, `${++this.count}.json`);
      await fs.writeFile(file, text);
      const resolution = item.kind === 'daily' ? 'D' : '1';
      this.pending.push({ file, source: item.source, candles: { symbol: item.underlying, resolution } });
    }
    this.next();
    while (this.committing !== undefined && this.full()) {
      await this.committing;
    }
    this.throwIfFailed();
  }

  /** Commits everything still waiting, after the commit under way. */
  async flush(): Promise<void> {
    // A commit that ends starts the next one itself: wait until none is under way and nothing waits.
    for (;;) {
      while (this.committing !== undefined) await this.committing;
      this.throwIfFailed();
      if (this.chains.length + this.pending.length === 0) return;
      this.next();
    }
  }

  /** Starts the next commit, unless one is under way, nothing waits or a commit failed. */
  private next(): void {
    if (this.committing !== undefined || this.failed !== undefined) return;
    let take = 0;
    for (let rows = 0; take < Math.min(this.chains.length, this.most) && rows < BATCH_ROWS; take++) {
      rows += this.chains[take]!.rows;
    }
    const chains = this.chains.splice(0, take);
    const batch = this.pending.splice(0, Math.max(this.most - chains.length, 0));
    if (chains.length + batch.length === 0) return;
    const file = path.join(this.spool, `${++this.count}-chains.json`);
    this.committing = commitBatch(this.store, file, chains, batch).then(
      () => {
        this.committing = undefined;
        this.next();
      },
      (error: unknown) => {
        this.failed = { error };
        this.committing = undefined;
      },
    );
  }

  /** Whether a batch's worth waits: `most` answers, or chains of `BATCH_ROWS` rows. */
  private full(): boolean {
    const rows = this.chains.reduce((sum, chain) => sum + chain.rows, 0);
    return this.chains.length + this.pending.length >= this.most || rows >= BATCH_ROWS;
  }

  private throwIfFailed(): void {
    if (this.failed !== undefined) throw this.failed.error;
  }
}

/**
 * Commits one batch. Its chains are staged as ONE body (their columns end to end), since the ingest's
 * cost is mostly per file; each chain's request is still recorded as its own source, with its own body's
 * digest and the rows staged from its lines (`_line` ranges of the merged body), so a rerun resumes by
 * request exactly as before. The merged body is staged first, straight into the empty staging tables,
 * so its `_line` values are its own line numbers.
 */
async function commitBatch(
  store: string,
  chainFile: string,
  chains: readonly HeldChain[],
  batch: readonly Spooled[],
): Promise<void> {
  const byFile = new Map(batch.map((spooled) => [spooled.file, spooled]));
  const files = [...byFile.keys()];
  if (chains.length > 0) {
    await fs.writeFile(chainFile, JSON.stringify(mergedChainBody(chains)));
    files.unshift(chainFile);
  }
  const tx = await WriteTransaction.begin(store, { create: true });
  let committed = false;
  try {
    // Measured once per run over its range (`measureRange`), not per answer.
    const staged = await stageFiles(tx.sql, files, mirrorFormat(byFile), { measureQuality: false });
    const chainRows = chains.length === 0 ? [] : await rowsByChain(tx, chains);
    const others = staged.files.filter((f) => f.source !== chainFile);
    await commitStaged(
      tx,
      {
        ...staged,
        files: [
          ...chains.map((chain, i) => ({
            source: chain.source,
            sha256: chain.sha256,
            bytes: 0,
            format: marketDataJsonFormat.name,
            rows: chainRows[i]!,
            sourceRows: chain.rows,
            rejected: 0,
            sessions: [],
            underlyings: [],
            quality: undefined,
          })),
          ...others,
        ],
      },
      (file) => byFile.get(file)?.source ?? file,
    );
    committed = true;
  } finally {
    if (!committed) await tx.abort();
  }
  await Promise.all([chainFile, ...batch.map((s) => s.file)].map((file) => fs.rm(file, { force: true })));
}

/** The chains' columns end to end, as one chain body (a column some chain lacks is null on its rows). */
function mergedChainBody(chains: readonly HeldChain[]): Record<string, unknown> {
  const keys = new Set(chains.flatMap((chain) => Object.keys(chain.columns)));
  const body: Record<string, unknown> = { s: 'ok' };
  for (const key of keys) {
    const merged: unknown[] = [];
    for (const chain of chains) {
      const values = chain.columns[key];
      if (Array.isArray(values)) for (const value of values) merged.push(value);
      else for (let i = 0; i < chain.rows; i++) merged.push(null);
    }
    body[key] = merged;
  }
  return body;
}

/** The rows each chain staged, per table, from the `_line` range its body holds in the merged body. */
async function rowsByChain(
  tx: WriteTransaction,
  chains: readonly HeldChain[],
): Promise<Record<string, number>[]> {
  const ranges: string[] = [];
  let line = 1;
  chains.forEach((chain, i) => {
    ranges.push(`(${i}, ${line}, ${line + chain.rows - 1})`);
    line += chain.rows;
  });
  const rows = chains.map(() => ({}) as Record<string, number>);
  for (const table of ['option_quotes', 'open_interest']) {
    const counts = await tx.sql.all<{ i: number; n: number }>(
      `SELECT r.i::INTEGER AS i, count(*)::INTEGER AS n
       FROM ${table} t JOIN (VALUES ${ranges.join(', ')}) r(i, lo, hi) ON t._line BETWEEN r.lo AND r.hi
       GROUP BY r.i`,
    );
    for (const { i, n } of counts) if (n > 0) rows[i]![table] = n;
  }
  return rows;
}

/** The `marketdata-json` format, reading candles bodies too (their symbol and resolution come from the request). */
function mirrorFormat(byFile: ReadonlyMap<string, Spooled>): IngestFormat {
  return {
    name: marketDataJsonFormat.name,
    description: marketDataJsonFormat.description,
    async stage(sql, file, options) {
      const candles = byFile.get(file)?.candles;
      if (candles === undefined) return marketDataJsonFormat.stage(sql, file, options);
      const body: unknown = JSON.parse(await fs.readFile(file, 'utf8'));
      return stageCandlesBody(sql, body, { ...options, file, ...candles });
    },
  };
}

type MirrorFlags = {
  url?: string;
  token?: string;
  underlyings: string;
  from: string;
  to: string;
  store: string;
  budget?: string;
  dryRun?: boolean;
  intraday: boolean;
  concurrency: string;
};

/** `pitchain mirror`: the service's history into a store, within a credit budget. */
export function registerMirror(program: Command): void {
  program
    .command('mirror')
    .description(
      'Copy dated chains, daily and minute bars from a market-data service into a store, within a credit budget.',
    )
    .option('--url <base>', 'the service (default: $MARKETDATA_BASE_URL, else https://api.marketdata.app)')
    .option('--token <token>', 'API token (default: $MARKETDATA_TOKEN)')
    .requiredOption('--underlyings <list>', 'comma list of underlyings, e.g. SPY,AAPL')
    .requiredOption('--from <date>', 'first session, YYYY-MM-DD')
    .requiredOption('--to <date>', 'last session, YYYY-MM-DD')
    .requiredOption('--store <dir>', 'store directory (created if missing)')
    .option(
      '--budget <credits>',
      'stop before the credits spent would exceed this (the estimate is spent first)',
    )
    .option('--dry-run', 'print the estimated credits (from the cheap endpoints) and fetch nothing else')
    .option('--no-intraday', 'skip the minute bars')
    .option('--concurrency <n>', `requests in flight (1-${MAX_IN_FLIGHT})`, '8')
    .addHelpText(
      'after',
      '\nEach answer is ingested as it arrives and its request recorded in the store, so a second run asks only\n' +
        'for what is missing. Dated chains carry no IV or Greeks: compute them on query (docs/mirror.md).\n' +
        examplesHelp([
          'pitchain mirror --url https://api.marketdata.app --token $TOKEN --underlyings SPY,AAPL --from 2024-01-02 --to 2024-03-28 --store my-store --dry-run',
          'pitchain mirror --underlyings SPY --from 2024-01-02 --to 2024-12-31 --store my-store --budget 5000',
          'pitchain mirror --url http://127.0.0.1:8787 --underlyings SPY --from 2020-03-02 --to 2020-03-13 --store copy',
        ]),
    )
    .action(async (flags: MirrorFlags) => {
      const options = mirrorOptionsFrom(flags);
      const controller = new AbortController();
      const onSigint = () => controller.abort();
      process.once('SIGINT', onSigint);
      // The bar starts with the first progress, after the estimate is printed.
      let bar: Progress | undefined;
      let result: MirrorReport;
      try {
        result = await runMirror({
          ...options,
          signal: controller.signal,
          onEstimate: (estimate, sessions) =>
            process.stdout.write(`${describeEstimate(estimate, sessions, options)}\n`),
          onProgress: (p) => {
            bar ??= startProgress('mirror', p.sessions, 'sessions');
            bar.update(p.sessionsDone, p.sessions, `${p.credits} credits`);
          },
        });
      } finally {
        bar?.stop();
        process.off('SIGINT', onSigint);
      }
      process.stdout.write(`${describeReport(result, options)}\n`);
      if (result.stopped === 'failure') {
        const reason = result.failure instanceof Error ? result.failure.message : String(result.failure);
        process.stderr.write(
          `pitchain: mirror stopped: ${reason}\nwhat arrived is committed; run the same command again to continue\n`,
        );
        process.exitCode = 1;
      } else if (result.stopped === 'interrupt') {
        process.stderr.write(
          'interrupted: what arrived is committed; run the same command again to continue\n',
        );
        process.exitCode = INTERRUPTED_EXIT;
      }
    });
}

function mirrorOptionsFrom(flags: MirrorFlags): Omit<MirrorOptions, 'signal' | 'onProgress'> {
  const example = 'e.g. --underlyings SPY,AAPL --from 2024-01-02 --to 2024-03-28';
  const underlyings = flags.underlyings
    .split(',')
    .map((u) => u.trim().toUpperCase())
    .filter((u) => u !== '');
  if (underlyings.length === 0 || underlyings.some((u) => !/^[A-Z0-9.^/-]+$/.test(u))) {
    throw new UsageError(
      `--underlyings must be a comma list of tickers, not '${flags.underlyings}' (${example})`,
    );
  }
  for (const [name, value] of [
    ['--from', flags.from],
    ['--to', flags.to],
  ] as const) {
    if (!isIsoDate(value)) {
      throw new UsageError(`${name} must be a date YYYY-MM-DD, not '${value}' (${example})`);
    }
  }
  if (flags.from > flags.to)
    throw new UsageError(`--from ${flags.from} is after --to ${flags.to} (${example})`);
  const budget = flags.budget === undefined ? undefined : Number(flags.budget);
  if (budget !== undefined && !(Number.isInteger(budget) && budget > 0)) {
    throw new UsageError(
      `--budget must be a whole number of credits above 0, not '${flags.budget}' (e.g. --budget 5000)`,
    );
  }
  const concurrency = Number(flags.concurrency);
  if (!(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= MAX_IN_FLIGHT)) {
    throw new UsageError(
      `--concurrency must be a whole number from 1 to ${MAX_IN_FLIGHT}, not '${flags.concurrency}'`,
    );
  }
  const client = createClient({
    ...(flags.url === undefined ? {} : { baseUrl: flags.url }),
    ...(flags.token === undefined ? {} : { token: flags.token }),
  });
  return {
    client,
    store: flags.store,
    underlyings,
    from: flags.from,
    to: flags.to,
    ...(budget === undefined ? {} : { budget }),
    ...(flags.dryRun ? { dryRun: true } : {}),
    ...(flags.intraday ? {} : { noIntraday: true }),
    concurrency,
  };
}

function describeEstimate(
  estimate: MirrorEstimate,
  sessions: { missing: number; total: number },
  options: { underlyings: readonly string[]; from: string; to: string },
): string {
  const range = `${options.underlyings.join(', ')} ${options.from}..${options.to}`;
  return [
    `estimate for ${range} (${sessions.missing} of ${sessions.total} sessions missing):`,
    renderTable(
      ['what', 'requests', 'credits'],
      [
        ...estimate.rows.map((row) => [row.what, row.requests, row.credits]),
        ['total', estimate.rows.reduce((n, row) => n + row.requests, 0), estimate.credits],
      ],
    ),
    `the estimate spent ${estimate.spent} credits (strikes, one session of minute bars)`,
    ...(estimate.partial ? ['partial estimate: the budget did not cover its own requests'] : []),
    '',
  ].join('\n');
}

function describeReport(result: MirrorReport, options: { budget?: number; dryRun?: boolean }): string {
  if (options.dryRun) {
    return `dry run: spent ${result.credits} credits in all (market status and the estimate); nothing written`;
  }
  const lines: string[] = [];
  const rate = result.seconds > 0 ? result.sessionsMirrored / result.seconds : 0;
  lines.push(
    renderTable(
      ['what', 'count'],
      [
        ['sessions in range', result.sessions],
        ['sessions mirrored now', result.sessionsMirrored],
        ['sessions in the store', result.sessionsDone],
        ['requests sent', result.fetched],
        ['requests skipped (in the store)', result.skipped],
        ['credits spent', result.credits],
      ],
    ),
  );
  lines.push(`time: ${result.seconds.toFixed(1)} s (${rate.toFixed(1)} sessions/s)`);
  if (result.stopped === 'budget') {
    lines.push(
      `budget: stopped before exceeding ${options.budget} credits; ${result.sessions - result.sessionsDone} sessions left (run again with a larger --budget to continue)`,
    );
  }
  lines.push(
    result.dataVersion === undefined ? 'no store was written' : `data version: ${result.dataVersion}`,
  );
  if (result.quality !== undefined) {
    lines.push(
      '',
      'data quality of the range (quotes the store keeps as sent, which a backtest must not take as prices):',
      indent(renderQuality([{ source: 'mirrored', quality: result.quality }])),
    );
  }
  return lines.join('\n');
}
