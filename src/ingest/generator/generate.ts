/**
 * `generateMarket`: a deterministic synthetic options market written into the store's staging tables.
 * The JS half computes the small and the sequential things (underlying paths, minute bars, volatility,
 * listings, strike ladders) and appends them as work tables; the SQL half (statements.ts) expands them
 * into option snapshots, open interest and stock bars in a few set-based statements.
 */
import type { SqlSession } from '../../store/sql.js';
import { type ListingsPlan, planListings } from './listings-plan.js';
import { EWMA_DECAY, REALISED_WEIGHT, TERM_REVERSION, VOL_PREMIUM } from './model.js';
import { type GeneratorOptions, type GeneratorSummary, validGeneratorOptions } from './options.js';
import {
  contractRowsSql,
  contractSessionsSql,
  copyMinuteBarsSql,
  dailyBarsSql,
  expirationSnapshotsSql,
  MINUTE_DB,
  minuteBarsSql,
  openInterestSql,
  quotesSql,
  snapSql,
} from './statements.js';
import { planTimeline, type TimelinePlan } from './timeline.js';
import { createWorkTables, dropWork } from './work-tables.js';

/** The snap numbers of a session's 15:45 and end-of-day snapshots (the grid's start at `GRID_SNAP`). */
const INTRADAY_SNAP = 0;
const EOD_SNAP = 1;

/** The steps `generateMarket` reports through its `onProgress`. */
export const GENERATOR_STEPS = 8;

/**
 * Fills the staging tables `option_quotes`, `open_interest` and `stock_bars` (and `splits`, when the
 * session has such a table) that already exist in `sql` with a synthetic market over [from, to].
 * The same options always give the same rows. `onProgress` is called after each of its steps.
 */
export async function generateMarket(
  sql: SqlSession,
  options: GeneratorOptions,
  onProgress?: (stepsDone: number, steps: number) => void,
): Promise<GeneratorSummary> {
  const valid = validGeneratorOptions(options);
  let done = 0;
  const step = () => onProgress?.(++done, GENERATOR_STEPS);
  return fill(sql, valid, await planTimeline(valid), step);
}

/**
 * Runs the SQL half. The work tables are built and committed first, since DuckDB scans a table written
 * in the open transaction on one thread. The minute bars are loaded and expanded on a second connection
 * while this one runs the small single-threaded statements. The staging inserts then run in one
 * transaction (unless the caller already holds one), so a failure leaves the staging tables as they were.
 */
async function fill(
  sql: SqlSession,
  options: GeneratorOptions,
  timeline: TimelinePlan,
  step: () => void,
): Promise<GeneratorSummary> {
  const params = { seed: options.seed };
  const names = options.snapshots ?? ['eod'];
  const snapshots = [
    ...new Set(
      names.filter((s) => s === 'eod' || s === '15:45').map((s) => (s === 'eod' ? EOD_SNAP : INTRADAY_SNAP)),
    ),
  ].sort();
  const grid = timeline.tables.grid !== undefined;
  const { minutes, minuteDays, ...timelineTables } = timeline.tables;
  const minuteBars = minutes !== undefined;
  // A database attached for the minutes cannot be detached inside the caller's transaction.
  const callerTransaction = await inOpenTransaction(sql);
  const attached = minuteBars && !callerTransaction;
  let side: SqlSession | undefined;
  let preparing: Promise<void> | undefined;
  let expanding: Promise<void> | undefined;
  try {
    await dropWork(sql);
    await createWorkTables(sql, timelineTables);
    const listings = planListings(options, timeline);
    await createWorkTables(sql, listings.tables);
    step();
    // Without bound parameters the three run in one call, on DuckDB's threads, while this one appends.
    preparing = sql.run(
      [
        snapSql(
          snapshots.includes(INTRADAY_SNAP),
          { decay: EWMA_DECAY, weight: REALISED_WEIGHT, premium: VOL_PREMIUM },
          grid,
        ),
        expirationSnapshotsSql(TERM_REVERSION),
        contractRowsSql(),
      ].join(';\n'),
    );
    preparing.catch(() => undefined);
    if (attached) {
      side = await sql.connect();
      await side.run(
        `DETACH DATABASE IF EXISTS ${MINUTE_DB}; ATTACH ':memory:' AS ${MINUTE_DB}; USE ${MINUTE_DB}`,
      );
      await createWorkTables(side, { minuteDays, minutes }, 'TABLE');
      expanding = side.run(minuteBarsSql('TABLE'));
      expanding.catch(() => undefined);
    }
    await preparing;
    step();
    if (minuteBars && !attached) {
      await createWorkTables(sql, { minuteDays, minutes });
      await sql.run(minuteBarsSql('TEMP TABLE'));
    }
    await sql.run(contractSessionsSql(), params);
    step();
    // An INSERT answers the number of rows it wrote.
    const inserted = async (statement: string, bind?: typeof params) => {
      const rows = Number(await sql.value<number | bigint>(statement, bind));
      step();
      return rows;
    };
    const skipped = () => {
      step();
      return 0;
    };
    const copyMinuteBars = async () => {
      await expanding;
      return inserted(copyMinuteBarsSql('stock_bars', attached));
    };
    const written = await inTransaction(sql, !callerTransaction, async () => ({
      openInterestRows: await inserted(openInterestSql('open_interest')),
      optionRows: await inserted(
        quotesSql('option_quotes', {
          snaps: snapshots,
          intradayMaxDte: options.intradayMaxDte ?? null,
          greeks: options.greeks ?? 'all',
          grid,
        }),
        params,
      ),
      dailyBars: await inserted(dailyBarsSql('stock_bars')),
      minuteBars: minuteBars ? await copyMinuteBars() : skipped(),
      splits: await insertSplits(sql, listings.splits).finally(step),
    }));
    return {
      sessions: timeline.toIndex - timeline.fromIndex + 1,
      expirations: listings.expirationCount,
      contracts: listings.symbolCount,
      optionRows: written.optionRows,
      openInterestRows: written.openInterestRows,
      dailyBars: written.dailyBars,
      minuteBars: written.minuteBars,
      splits: written.splits,
    };
  } finally {
    await Promise.allSettled([preparing, expanding]);
    if (side !== undefined) {
      side.close();
      await sql.run(`DETACH DATABASE IF EXISTS ${MINUTE_DB}`).catch(() => undefined);
    }
    await dropWork(sql).catch(() => undefined);
  }
}

/**
 * Whether the caller holds a transaction open on `sql`: outside one every statement gets a new
 * transaction id (probing with BEGIN would abort the caller's transaction when it fails).
 */
async function inOpenTransaction(sql: SqlSession): Promise<boolean> {
  const first = await sql.value<number>('SELECT txid_current()');
  return (await sql.value<number>('SELECT txid_current()')) === first;
}

/** Runs `body` in a transaction of its own (`own`), or else in the caller's. */
async function inTransaction<T>(sql: SqlSession, own: boolean, body: () => Promise<T>): Promise<T> {
  if (own) await sql.run('BEGIN TRANSACTION');
  try {
    const result = await body();
    if (own) await sql.run('COMMIT');
    return result;
  } catch (error) {
    if (own) await sql.run('ROLLBACK');
    throw error;
  }
}

async function insertSplits(sql: SqlSession, splits: ListingsPlan['splits']): Promise<number> {
  if (splits.length === 0) return 0;
  const exists = await sql.value<number>(
    "SELECT count(*) FROM information_schema.tables WHERE table_name = 'splits' AND table_schema <> 'temp'",
  );
  if (Number(exists) === 0) return 0;
  for (const split of splits) {
    await sql.run('INSERT INTO splits (symbol, ex_date, ratio) VALUES ($1, $2::DATE, $3)', [
      split.symbol,
      split.exDate,
      split.ratio,
    ]);
  }
  return splits.length;
}
