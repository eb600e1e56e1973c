import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MarketDataError } from '../../../src/errors.js';
import { etWallToSeconds } from '../../../src/market-time/index.js';
import type { AsOf, EndpointContext, EndpointResult, Mode } from '../../../src/query/types.js';
import { StoreCache } from '../../../src/store/cache.js';
import { TABLES } from '../../../src/store/schema.js';
import type { SqlSession } from '../../../src/store/sql.js';
import { StoreReader } from '../../../src/store/store.js';
import { WriteTransaction } from '../../../src/store/writer.js';

/** A bar to stage: `t` defaults to 00:00 ET of the session (daily) and must be given for minute bars. */
export type BarRow = {
  readonly symbol: string;
  readonly resolution: 'D' | '1';
  readonly session: string;
  readonly t?: number;
  readonly o: number;
  readonly h: number;
  readonly l: number;
  readonly c: number;
  readonly v: number;
};

/** A store's read side for the tests: its DuckDB with the canonical tables; `close()` releases it. */
export type TestStore = { readonly sql: SqlSession; close(): Promise<void> };

/**
 * Builds a real store in a temp directory from what `stage` puts into the staging tables of a write
 * transaction (`stock_bars`, `splits`, … with `_line` and `_reject`, as `stageFiles` fills them), commits
 * it, and opens it for reading; `close()` releases the reader and removes the directory.
 */
export async function buildStore(stage: (sql: SqlSession) => Promise<void>): Promise<TestStore> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-stocks-'));
  try {
    const tx = await WriteTransaction.begin(dir, { create: true });
    try {
      await stage(tx.sql);
      for (const table of Object.keys(TABLES))
        await tx.sql.run(`DELETE FROM "${table}" WHERE _reject IS NOT NULL`);
    } catch (error) {
      await tx.abort();
      throw error;
    }
    await tx.commit([{ source: 'test', sha256: 'test', format: 'test', rows: {}, rejected: 0 }]);
    const reader = await StoreReader.open(dir, { threads: 1 });
    return {
      sql: reader.sql,
      async close() {
        reader.close();
        await fs.rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Stages bars into the `stock_bars` staging table. */
export async function stageBars(sql: SqlSession, bars: readonly BarRow[]): Promise<void> {
  const column = <T>(pick: (bar: BarRow) => T) => bars.map(pick);
  await sql.append('stock_bars', [
    column((b) => b.symbol),
    column((b) => b.resolution),
    column((b) => b.session),
    column((b) => b.t ?? etWallToSeconds(b.session, '00:00')),
    column((b) => b.o),
    column((b) => b.h),
    column((b) => b.l),
    column((b) => b.c),
    column((b) => b.v),
    bars.map((_, i) => i + 1),
    bars.map(() => null),
  ]);
}

/** Stages splits into the `splits` staging table. */
export async function stageSplits(
  sql: SqlSession,
  splits: readonly { symbol: string; exDate: string; ratio: number }[],
): Promise<void> {
  await sql.append('splits', [
    splits.map((s) => s.symbol),
    splits.map((s) => s.exDate),
    splits.map((s) => s.ratio),
    splits.map((_, i) => i + 1),
    splits.map(() => null),
  ]);
}

/** A live as-of at T (cutoff = T). */
export function live(nowSeconds: number): AsOf {
  return { kind: 'current', cutoffSeconds: nowSeconds, eodOnly: false, maxSession: null };
}

/** What a handler gets: the pinned clock, path and query; live at T unless `asOf` says otherwise. */
export function context(
  sql: SqlSession,
  options: {
    now: number;
    path?: Record<string, string>;
    query?: Record<string, string>;
    asOf?: AsOf;
    mode?: Mode;
  },
): EndpointContext {
  return {
    sql,
    cache: new StoreCache(() => 'test'),
    nowSeconds: options.now,
    greeks: 'vendor',
    path: options.path ?? {},
    query: options.query ?? {},
    asOf: options.asOf ?? live(options.now),
    mode: options.mode ?? 'live',
  };
}

/** The JSON body the service would send (default formats): `s` first, then the arrays in order. */
export function body(result: EndpointResult): Record<string, unknown> {
  if (result.kind === 'no_data') {
    const out: Record<string, unknown> = { s: 'no_data' };
    if (result.errmsg !== undefined) out['errmsg'] = result.errmsg;
    if (result.nextTime !== undefined) out['nextTime'] = result.nextTime;
    if (result.prevTime !== undefined) out['prevTime'] = result.prevTime;
    return out;
  }
  const out: Record<string, unknown> = { s: 'ok' };
  for (const field of result.fields) out[field.key] = field.values;
  return out;
}

/** The status and body of a refusal, or the body of an answer when the handler did not refuse. */
export async function outcome(promise: Promise<EndpointResult>): Promise<{ status: number; body: unknown }> {
  try {
    const result = await promise;
    return { status: result.kind === 'ok' ? 200 : 404, body: body(result) };
  } catch (error) {
    if (!(error instanceof MarketDataError)) throw error;
    return { status: error.status, body: error.body };
  }
}

/** The JSON type of each key's first element (`number`, `string`, `null`), in key order. */
export function shape(json: Record<string, unknown>): [string, string][] {
  return Object.entries(json).map(([key, value]) => {
    const first = Array.isArray(value) ? value[0] : value;
    return [key, first === null ? 'null' : typeof first];
  });
}

/** Epoch seconds of an ET wall time. */
export function et(date: string, time = '00:00'): number {
  return etWallToSeconds(date, time);
}
