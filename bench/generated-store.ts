/**
 * The generated stores the chain, loop and big-store benches share: built once into `bench/.cache/`,
 * commit by commit, and reused while their manifest is intact and their provenance holds exactly the plan.
 */
import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import {
  type DailyBar,
  type GeneratorOptions,
  generateMarket,
  parseLeanDailyBars,
} from '../src/ingest/generator/index.js';
import { sessionsBetween } from '../src/market-time/index.js';
import { computeDataVersion, readManifest } from '../src/store/manifest.js';
import { WriteTransaction } from '../src/store/writer.js';
import { type BenchContext, storeCodeDigest } from './lib.js';

/** Years of the chain bench's generated market, one commit each (keeps the writer's memory small). */
export const CHAIN_YEARS = [2015, 2016, 2017, 2018, 2019, 2020] as const;
/** The chain bench's 26-million-row store. */
export const CHAIN_STORE_DIR = ['bench', '.cache', 'chain-store'] as const;

/** One commit of a generated store: the generator's options, a digest of them and the code, a label. */
export type StorePlanItem = {
  readonly options: GeneratorOptions;
  readonly digest: string;
  readonly label: string;
};

/** Daily bars from the June before `year` to its end (the volatility warm-up and the listings made before). */
export function yearWindow(bars: readonly DailyBar[], year: number): DailyBar[] {
  return bars.filter((bar) => bar.date >= `${year - 1}-06-01` && bar.date <= `${year}-12-31`);
}

/**
 * One year of the chain store, on the shared Lean daily bars: SPY with the generator's dense ETF listing
 * (every weekly seven weeks out, a year of monthlies, LEAPS), SPX/SPXW and AAPL with the sample's lighter
 * listings; EOD and 15:45 snapshots of every contract, vendor iv only.
 */
export function chainYearOptions(
  year: number,
  spy: readonly DailyBar[],
  aapl: readonly DailyBar[],
): GeneratorOptions {
  return {
    from: `${year}-01-01`,
    to: `${year}-12-31`,
    seed: 20150102 + year,
    underlyings: [
      { symbol: 'SPY', style: 'etf', series: { kind: 'bars', bars: yearWindow(spy, year) } },
      {
        symbol: 'SPX',
        style: 'index',
        series: { kind: 'derived', from: 'SPY', factor: 10 },
        listing: { weeklyDays: 14, midweekDays: 5, monthlyMonths: 2, quarterlyMonths: 3, leapsYears: 0 },
      },
      {
        symbol: 'AAPL',
        style: 'stock',
        series: { kind: 'bars', bars: yearWindow(aapl, year) },
        splits: [{ exDate: '2020-08-31', ratio: 4 }],
        listing: { weeklyDays: 21, monthlyMonths: 3, quarterlyMonths: 3, leapsYears: 0 },
      },
    ],
    snapshots: ['15:45', 'eod'],
    minuteBars: false,
    greeks: 'iv',
  };
}

/** Lean daily bars from the shared data. */
export async function sharedBars(ctx: BenchContext, file: string): Promise<DailyBar[]> {
  const path = ctx.sharedFile(`data/stocks/${file}`);
  return parseLeanDailyBars(await readFile(path, 'utf8'), path);
}

/** The shared SPY and AAPL daily bars the generated stores are made on. */
export async function chainStoreBars(ctx: BenchContext): Promise<{ spy: DailyBar[]; aapl: DailyBar[] }> {
  return {
    spy: await sharedBars(ctx, 'lean_daily_spy_raw_19980102_20210331.csv'),
    aapl: await sharedBars(ctx, 'lean_daily_aapl_raw_19980102_20210331.csv'),
  };
}

/** A plan item: the options with a digest of them and of the store's code (a change of either rebuilds). */
export function planItem(code: string, options: GeneratorOptions, label: string): StorePlanItem {
  return {
    options,
    digest: createHash('sha256').update(code).update(JSON.stringify(options)).digest('hex'),
    label,
  };
}

/** The chain store's plan: one commit a year. */
export async function chainStorePlan(ctx: BenchContext): Promise<StorePlanItem[]> {
  const { spy, aapl } = await chainStoreBars(ctx);
  const code = await storeCodeDigest(ctx.repoRoot);
  return CHAIN_YEARS.map((year) =>
    planItem(code, chainYearOptions(year, spy, aapl), `chain benchmark store, ${year}`),
  );
}

/**
 * The generated store in `dir`: reused when its manifest is intact (its data version is that of its
 * files) and its provenance holds only this plan's commits; a commit missing from it is generated and
 * committed on top, anything else rebuilds the store.
 */
export async function ensureGeneratedStore(
  ctx: BenchContext,
  dir: string,
  plan: readonly StorePlanItem[],
): Promise<{ dir: string; rows: number; built: number }> {
  const wanted = new Set(plan.map((item) => item.digest));
  let manifest = await readManifest(dir).catch(() => undefined);
  const usable =
    manifest !== undefined &&
    manifest.dataVersion === computeDataVersion(manifest) &&
    manifest.provenance.every((p) => wanted.has(p.sha256));
  if (!usable) await rm(dir, { recursive: true, force: true });
  const present = new Set(usable ? manifest!.provenance.map((p) => p.sha256) : []);
  let built = 0;
  for (const { options, digest, label } of plan) {
    if (present.has(digest)) continue;
    const started = performance.now();
    const tx = await WriteTransaction.begin(dir, { create: true });
    let committed = false;
    try {
      const summary = await generateMarket(tx.sql, options);
      await tx.commit([
        {
          source: label,
          sha256: digest,
          format: 'generator',
          rows: { option_quotes: summary.optionRows, open_interest: summary.openInterestRows },
          rejected: 0,
        },
      ]);
      committed = true;
      built++;
      ctx.log(
        `built ${label}: ${summary.optionRows.toLocaleString('en-US')} option rows in ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
    } finally {
      if (!committed) await tx.abort();
    }
  }
  manifest = await readManifest(dir);
  if (
    manifest === undefined ||
    plan.some((item) => !manifest!.provenance.some((p) => p.sha256 === item.digest))
  ) {
    throw new Error(`the store in ${dir} did not build`);
  }
  const rows = manifest.tables.option_quotes.reduce((sum, file) => sum + file.rows, 0);
  return { dir, rows, built };
}

/**
 * `count` distinct sessions of the generated stores' years in a fixed pseudo-random order (the same for
 * a seed, run after run), never `except`.
 */
export function randomSessions(count: number, seed: number, except: string): string[] {
  const all = sessionsBetween(`${CHAIN_YEARS[0]}-01-02`, `${CHAIN_YEARS.at(-1)}-12-31`).filter(
    (s) => s !== except,
  );
  let state = seed;
  const picked: string[] = [];
  while (picked.length < count) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const [session] = all.splice(Math.floor((state / 2 ** 31) * all.length), 1);
    picked.push(session!);
  }
  return picked;
}

/** Runs `fn` and returns its wall and CPU (this process, every thread) milliseconds. */
export async function measure(fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await fn();
  const used = process.cpuUsage(cpu);
  return { wall: performance.now() - started, cpu: (used.user + used.system) / 1000 };
}
