/**
 * Ingest benchmark: the full `pitchain ingest --format hod` path (stageFiles + commit into a fresh store)
 * against DuckDB's own `read_csv` → zstd Parquet `COPY` of the same file, with DuckDB's default options
 * and with the options the store writes its quotes with, all in rows per second. A third baseline has
 * DuckDB alone write what the store writes (sorted quote and open-interest partitions), so that its ratio
 * is what validation and normalisation cost. Run on the real HistoricalOptionData SPXW file, and on a
 * generated CSV of over five million rows in the same L2 layout. Ours and the baseline alternate, so
 * that load from other processes falls on both. The SPXW file takes a few hundred milliseconds a run, so
 * its medians are over 15 runs: five swung with the host's speed by up to a third.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSessionsTable } from '../src/ingest/calendar-table.js';
import { underlyingOfRootSql } from '../src/ingest/formats/hod.js';
import { type GeneratorOptions, generateMarket, sampleOptions } from '../src/ingest/generator/index.js';
import { commitStaged, stageFiles } from '../src/ingest/ingest.js';
import { fileColumns, PARTITION_EXPRESSIONS } from '../src/store/layout.js';
import { parquetOptions } from '../src/store/parquet.js';
import { createStagingTableSql, TABLE_SORT } from '../src/store/schema.js';
import { quoteIdentifier as q, quoteLiteral, SqlSession } from '../src/store/sql.js';
import { WriteTransaction } from '../src/store/writer.js';
import { type BenchContext, defineBenchmark, perSecond, ratioRow, summarise, type Timing } from './lib.js';

const REAL_FILE = 'data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv';
const BIG_ROWS = 5_000_000;
const CACHE_DIR = ['bench', '.cache', 'ingest'] as const;

/** The HistoricalOptionData L2 header, in order, as the vendor prints it (without the BOM). */
export const HOD_L2_HEADER = [
  'underlying',
  'underlying_last',
  ' exchange',
  'optionroot',
  'optionext',
  'type',
  'expiration',
  'quotedate',
  'strike',
  'last',
  'bid',
  'ask',
  'volume',
  'openinterest',
  'impliedvol',
  'delta',
  'gamma',
  'theta',
  'vega',
  'optionalias',
] as const;

/**
 * Writes the staged `option_quotes` of `sql` (with their `open_interest`) to `file` as a HistoricalOptionData
 * L2 CSV, one line per row ordered by session and symbol, and returns the number of rows. Like the vendor:
 * the root in `underlying`, MM/DD/YYYY dates, the open interest settled the session before, theta per year
 * and vega per 1.00 of volatility.
 */
export async function writeHodCsv(sql: SqlSession, file: string): Promise<number> {
  await createSessionsTable(sql);
  const symbol = 'q.option_symbol';
  const at = (from: number, length: number) => `substr(${symbol}, length(${symbol}) - ${from}, ${length})`;
  const values = [
    `left(${symbol}, length(${symbol}) - 15)`,
    'CAST(q.underlying_price AS DOUBLE)',
    `'*'`,
    symbol,
    'NULL',
    `CASE ${at(8, 1)} WHEN 'C' THEN 'call' ELSE 'put' END`,
    `${at(12, 2)} || '/' || ${at(10, 2)} || '/20' || ${at(14, 2)}`,
    `strftime(q.session_date, '%m/%d/%Y')`,
    `CAST(right(${symbol}, 8) AS DOUBLE) / 1000`,
    'CAST(q.last AS DOUBLE)',
    'CAST(q.bid AS DOUBLE)',
    'CAST(q.ask AS DOUBLE)',
    'q.volume',
    'oi.open_interest',
    'CAST(q.iv AS DOUBLE)',
    'CAST(q.delta AS DOUBLE)',
    'CAST(q.gamma AS DOUBLE)',
    'round(CAST(q.theta AS DOUBLE) * 365, 4)',
    'round(CAST(q.vega AS DOUBLE) * 100, 4)',
    symbol,
  ];
  const columns = values.map((value, i) => `${value} AS ${q(HOD_L2_HEADER[i]!)}`);
  const rows = await sql.value<number>(
    `COPY (
       SELECT ${columns.join(', ')}
       FROM option_quotes q JOIN sessions s USING (session_date)
       LEFT JOIN open_interest oi ON oi.option_symbol = q.option_symbol AND oi.settled_session = s.previous_session
       ORDER BY q.session_date, q.option_symbol
     ) TO ${quoteLiteral(file)} (FORMAT csv, HEADER true)`,
  );
  return Number(rows);
}

/**
 * Over five million end-of-day rows: SPY (simulated), SPX/SPXW from it, QQQ and AAPL (simulated) over
 * 2015-2020, strikes out to 2.5 σ√T, one year of LEAPS, every vendor Greek.
 */
function bigMarket(): GeneratorOptions {
  const sample = sampleOptions();
  const wide = { nearSd: 1.0, farSd: 2.5, leapsYears: 1 };
  const [spy, spx, aapl] = sample.underlyings;
  return {
    ...sample,
    from: '2015-01-02',
    to: '2020-12-31',
    snapshots: ['eod'],
    minuteBars: false,
    greeks: 'all',
    underlyings: [
      {
        symbol: 'SPY',
        style: 'etf',
        series: { kind: 'simulated', startPrice: 200, volatility: 0.16 },
        listing: { ...spy!.listing, ...wide },
      },
      {
        symbol: 'SPX',
        style: 'index',
        series: { kind: 'derived', from: 'SPY', factor: 10 },
        listing: { ...spx!.listing, ...wide },
      },
      {
        symbol: 'QQQ',
        style: 'etf',
        series: { kind: 'simulated', startPrice: 100, volatility: 0.2 },
        listing: { ...spy!.listing, ...wide },
      },
      {
        symbol: 'AAPL',
        style: 'stock',
        series: { kind: 'simulated', startPrice: 100, volatility: 0.3 },
        listing: { ...aapl!.listing, ...wide },
      },
    ],
  };
}

/** What `pitchain ingest --format hod <file>` does into a fresh store; returns the source rows read. */
async function ingest(file: string, store: string): Promise<number> {
  const tx = await WriteTransaction.begin(store, { create: true });
  let committed = false;
  try {
    const staged = await stageFiles(tx.sql, [file], 'hod');
    if (staged.rejects.length > 0) throw new Error(`${file}: ${staged.rejects.length} rejects`);
    await commitStaged(tx, staged);
    committed = true;
    return staged.files.reduce((sum, f) => sum + f.sourceRows, 0);
  } finally {
    if (!committed) await tx.abort();
  }
}

/** DuckDB's own Parquet options: zstd at its default level. */
const DUCKDB_DEFAULT = 'FORMAT parquet, COMPRESSION zstd';
/** The options the store writes its quotes with (zstd level 3, 65,536-row groups, tiny dictionaries). */
const STORE_OPTIONS = parquetOptions('option_quotes');

/** DuckDB alone: the file read with `read_csv` (types detected) and written as one Parquet file. */
async function copyToParquet(file: string, target: string, options: string): Promise<number> {
  const sql = await SqlSession.open();
  try {
    return Number(
      await sql.value(
        `COPY (SELECT * FROM read_csv(${quoteLiteral(file)})) TO ${quoteLiteral(target)} (${options})`,
      ),
    );
  } finally {
    sql.close();
  }
}

/**
 * DuckDB alone writing what the store writes of a hod L2 file, in the store's layout: the file read with
 * `read_csv` (types detected) into a table, with the end-of-day instants and the open interest's settled
 * session and publication joined from the sessions table and the index roots mapped to their underlying;
 * then the quote and open-interest rows sorted as the store sorts them and written in its partitions
 * (underlying, year) with its Parquet options. No validation, contracts, content hashes or manifest:
 * against it, the ratio is what those and the rest of the normalisation cost. Returns the quote rows.
 */
async function copyToStoreLayout(file: string, dir: string): Promise<number> {
  const sql = await SqlSession.open();
  try {
    await createSessionsTable(sql);
    const greek = (x: string) => `TRY_CAST(${x} AS DECIMAL(10,6))`;
    await sql.run(
      `CREATE TABLE rows AS
       SELECT ${underlyingOfRootSql('underlying')} AS underlying, optionroot AS option_symbol, quotedate AS session_date,
              s.eod_at AS quote_time, CAST(bid AS DECIMAL(12,2)) AS bid, CAST(ask AS DECIMAL(12,2)) AS ask,
              CAST(NULL AS INTEGER) AS bid_size, CAST(NULL AS INTEGER) AS ask_size,
              CAST("last" AS DECIMAL(12,2)) AS "last", CAST(volume AS BIGINT) AS volume, s.eod_at AS volume_time,
              CAST(underlying_last AS DECIMAL(14,4)) AS underlying_price, ${greek('impliedvol')} AS iv,
              ${greek('delta')} AS delta, ${greek('gamma')} AS gamma, ${greek('theta / 365')} AS theta,
              ${greek('vega / 100')} AS vega, s.previous_session AS settled_session, s.open_at AS published_at,
              CAST(openinterest AS BIGINT) AS open_interest
       FROM read_csv(${quoteLiteral(file)}, dateformat = '%m/%d/%Y') JOIN sessions s ON s.session_date = quotedate`,
    );
    const copy = (table: 'option_quotes' | 'open_interest') =>
      sql.value(
        `COPY (SELECT underlying, ${PARTITION_EXPRESSIONS[table]['year']} AS year, ${fileColumns(table).map(q).join(', ')}
               FROM rows ORDER BY ${TABLE_SORT[table].map(q).join(', ')})
         TO ${quoteLiteral(join(dir, table))} (${parquetOptions(table)}, PARTITION_BY (underlying, year))`,
      );
    const quotes = await copy('option_quotes');
    await copy('open_interest');
    return Number(quotes);
  } finally {
    sql.close();
  }
}

/** The baseline a race runs: DuckDB reading `file` and writing into the empty directory `dir`; returns its rows. */
type Baseline = (file: string, dir: string) => Promise<number>;

/** Wall times of both sides, and the CPU time (all threads of this process) each used, median. */
type Pair = { ours: Timing; baseline: Timing; oursCpuMs: number; baselineCpuMs: number; rows: number };

/** Runs `fn` and returns its result with its wall and CPU milliseconds. */
async function measured<T>(fn: () => Promise<T>): Promise<{ value: T; wallMs: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await fn();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { value, wallMs, cpuMs: (used.user + used.system) / 1000 };
}

/** Times ours and `copy`, DuckDB's side, in alternation, after `warmup` unmeasured rounds; both must see `rows`. */
async function race(
  ctx: BenchContext,
  file: string,
  options: { warmup: number; iterations: number },
  copy: Baseline,
): Promise<Pair> {
  const ours: number[] = [];
  const baseline: number[] = [];
  const oursCpu: number[] = [];
  const baselineCpu: number[] = [];
  let rows: number | undefined;
  const check = (label: string, count: number) => {
    rows ??= count;
    if (count !== rows) throw new Error(`${label} read ${count} rows of ${file}, expected ${rows}`);
  };
  const runOurs = async (record: boolean) => {
    const store = await ctx.tempDir('pitchain-ingest-store-');
    const run = await measured(() => ingest(file, store));
    if (record) {
      ours.push(run.wallMs);
      oursCpu.push(run.cpuMs);
    }
    check('ingest', run.value);
  };
  const runBaseline = async (record: boolean) => {
    const dir = await ctx.tempDir('pitchain-ingest-parquet-');
    const run = await measured(() => copy(file, dir));
    if (record) {
      baseline.push(run.wallMs);
      baselineCpu.push(run.cpuMs);
    }
    check('read_csv', run.value);
  };
  for (let i = 0; i < options.warmup + options.iterations; i++) {
    const record = i >= options.warmup;
    if (i % 2 === 0) {
      await runOurs(record);
      await runBaseline(record);
    } else {
      await runBaseline(record);
      await runOurs(record);
    }
    if (record) {
      ctx.log(
        `  round ${i + 1}: ours ${ours.at(-1)!.toFixed(0)} ms, baseline ${baseline.at(-1)!.toFixed(0)} ms`,
      );
    }
  }
  return {
    ours: summarise(ours),
    baseline: summarise(baseline),
    oursCpuMs: summarise(oursCpu).p50Ms,
    baselineCpuMs: summarise(baselineCpu).p50Ms,
    rows: rows!,
  };
}

function throughputRow(name: string, pair: Pair, note: string) {
  return ratioRow({
    name,
    ours: perSecond(pair.rows, pair.ours.p50Ms),
    baseline: perSecond(pair.rows, pair.baseline.p50Ms),
    unit: 'rows/s',
    target: '≥ 0.6× baseline throughput',
    note: `${note}; p50 ${pair.ours.p50Ms.toFixed(0)} vs ${pair.baseline.p50Ms.toFixed(0)} ms over ${pair.ours.iterations} runs, CPU ${(pair.oursCpuMs / 1000).toFixed(1)} vs ${(pair.baselineCpuMs / 1000).toFixed(1)} s`,
  });
}

/**
 * The generated L2 CSV, cached in `bench/.cache/` beside a note of the generator options it came from and
 * its row count: rebuilt only when the options change (building it takes minutes, reading it seconds).
 */
export async function ensureBigCsv(ctx: BenchContext): Promise<{ file: string; rows: number }> {
  const dir = join(ctx.repoRoot, ...CACHE_DIR);
  const file = join(dir, 'hod_generated_L2.csv');
  const noteFile = join(dir, 'hod_generated_L2.json');
  const options = bigMarket();
  const digest = createHash('sha256').update(JSON.stringify(options)).digest('hex');
  const note = await readFile(noteFile, 'utf8')
    .then((text) => JSON.parse(text) as { digest: string; rows: number; bytes: number })
    .catch(() => undefined);
  const size = await stat(file)
    .then((s) => s.size)
    .catch(() => undefined);
  if (note?.digest === digest && note.bytes === size) return { file, rows: note.rows };
  await mkdir(dir, { recursive: true });
  const sql = await SqlSession.open();
  let rows: number;
  const temp = `${file}.${process.pid}.tmp`;
  try {
    for (const table of ['option_quotes', 'open_interest', 'stock_bars', 'splits'] as const) {
      await sql.run(createStagingTableSql(table));
    }
    ctx.log('generating the market');
    const summary = await generateMarket(sql, options);
    if (summary.optionRows < BIG_ROWS) {
      throw new Error(`the generated market has ${summary.optionRows} option rows, fewer than ${BIG_ROWS}`);
    }
    ctx.log(`writing ${summary.optionRows.toLocaleString('en-US')} rows as a hod L2 CSV`);
    rows = await writeHodCsv(sql, temp);
  } finally {
    sql.close();
  }
  await rename(temp, file);
  const bytes = (await stat(file)).size;
  await writeFile(noteFile, `${JSON.stringify({ digest, rows, bytes })}\n`);
  return { file, rows };
}

export default defineBenchmark({
  name: 'ingest',
  description:
    'hod ingest (stage + commit) vs DuckDB read_csv → zstd Parquet, and vs DuckDB writing the store’s partitions: the SPXW file and 5 M rows',
  async run(ctx) {
    const real = ctx.sharedFile(REAL_FILE);
    const { file: big, rows: generated } = await ensureBigCsv(ctx);
    const { size } = await stat(big);
    const rows = [];
    // The baseline writes with DuckDB's defaults; the second writes as the store does, so that the
    // ratio is not about the store's Parquet options; the third writes what the store writes, so that the
    // ratio is what validation and normalisation cost. Its note says how DuckDB alone, writing that, fares
    // against its plain copy of the first.
    const plain: Pair[] = [];
    const baselines: [Baseline, string, string, boolean][] = [
      [
        (file, dir) => copyToParquet(file, join(dir, 'copy.parquet'), DUCKDB_DEFAULT),
        '',
        DUCKDB_DEFAULT,
        false,
      ],
      [
        (file, dir) => copyToParquet(file, join(dir, 'copy.parquet'), STORE_OPTIONS),
        ', baseline with the store’s Parquet options',
        STORE_OPTIONS,
        false,
      ],
      [copyToStoreLayout, ', baseline writing the store’s partitions', 'the store’s sorted partitions', true],
    ];
    for (const [copy, label, description, versusPlain] of baselines) {
      ctx.log(`real file ${REAL_FILE}; baseline ${description}`);
      const small = await race(ctx, real, { warmup: 1, iterations: 15 }, copy);
      ctx.log(`${big}: ${(size / 2 ** 20).toFixed(0)} MB; baseline ${description}`);
      const large = await race(ctx, big, { warmup: 0, iterations: 2 }, copy);
      if (large.rows !== generated) throw new Error(`ingested ${large.rows} rows of ${generated} written`);
      if (plain.length === 0) plain.push(small, large);
      const against = (pair: Pair, copied: Pair) =>
        versusPlain
          ? `; DuckDB alone, so written: ${(copied.baseline.p50Ms / pair.baseline.p50Ms).toFixed(2)}× its plain copy's throughput (p50 ${pair.baseline.p50Ms.toFixed(0)} vs ${copied.baseline.p50Ms.toFixed(0)} ms)`
          : '';
      rows.push(
        throughputRow(
          `ingest: hod SPXW file (${small.rows.toLocaleString('en-US')} rows)${label}`,
          small,
          `${REAL_FILE.split('/').at(-1)}${against(small, plain[0]!)}`,
        ),
        throughputRow(
          `ingest: generated hod L2 CSV (${(large.rows / 1e6).toFixed(2)} M rows)${label}`,
          large,
          `CSV ${(size / 2 ** 20).toFixed(0)} MB${against(large, plain[1]!)}`,
        ),
      );
    }
    return rows;
  },
});
