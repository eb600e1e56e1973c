/**
 * How a mirror run writes what arrives: answers committed in batches while the downloads go on, a batch's
 * chains staged as one merged body, each request still recorded as its own source.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { stageCandlesBody } from '../ingest/formats/candles-json.js';
import type { IngestFormat } from '../ingest/formats/index.js';
import { marketDataJsonFormat } from '../ingest/formats/marketdata-json.js';
import { commitStaged, stageFiles } from '../ingest/ingest.js';
import type { QueryResult } from '../library/result.js';
import { WriteTransaction } from '../store/writer.js';
import type { Item } from './plan.js';

/** Chain rows a commit takes at most (at least one chain): bounds the chains held in memory and merged. */
const BATCH_ROWS = 200_000;

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
export class Ingester {
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
