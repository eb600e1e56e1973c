/**
 * Chain benchmark (the API face on a big store): a 25-million-row generated store, built once into
 * `bench/.cache/`, answering `date=D&expiration=all` and front-month chains through `store.request`,
 * against one hand-written DuckDB statement over the same Parquet files that returns the same JSON body;
 * and front-month and whole chains at random current instants (`store.at(T)`) against the query that
 * answered them before blocks did. The timed requests run on the built package (`dist/`), as installed.
 */
import { join } from 'node:path';
import { openStore, type Store, storeInternals } from '../src/library/store.js';
import { etWallToSeconds, previousSession } from '../src/market-time/index.js';
import { currentAsOf } from '../src/pit/as-of.js';
import { asDouble, SYMBOL_KEY } from '../src/query/options/block-sql.js';
import { OPTION_COLUMNS, type OptionField } from '../src/query/options/columns.js';
import { assemble, scopeRows } from '../src/query/options/scope-answer.js';
import { rowSource } from '../src/query/options/snapshot-sql.js';
import { DEFAULT_LIMIT } from '../src/service/format.js';
import { type Manifest, readManifest } from '../src/store/manifest.js';
import type { TableName } from '../src/store/schema.js';
import { quoteLiteral, SqlSession } from '../src/store/sql.js';
import { ensureBuilt } from '../test/helpers/build.js';
import {
  CHAIN_STORE_DIR,
  chainStorePlan,
  ensureGeneratedStore,
  measure,
  randomSessions as randomStoreSessions,
  CHAIN_YEARS as YEARS,
} from './generated-store.js';
import { defineBenchmark, installedOpenStore, loadAverage, ratioRow, summarise, timeIt } from './lib.js';
import { forkMemoryJob, type MemoryFigures } from './memory-job.js';

/**
 * The manifest's files of one partition of a table, as absolute paths: with `session`, only those whose
 * sessions hold it, as the store's reader picks them.
 */
function partitionFiles(
  dir: string,
  manifest: Manifest,
  table: TableName,
  partition: Record<string, string>,
  session?: string,
): string[] {
  const holds = (sessions: { first: string; last: string } | undefined) =>
    session === undefined ||
    sessions === undefined ||
    (sessions.first <= session && session <= sessions.last);
  return manifest.tables[table]
    .filter((file) => Object.entries(partition).every(([key, value]) => file.partition[key] === value))
    .filter((file) => holds(file.sessions))
    .map((file) => join(dir, file.path));
}

const fileList = (files: readonly string[]) => `[${files.map(quoteLiteral).join(', ')}]`;

/**
 * The rows a dated chain of one date is made of, and nothing else: the session's quote rows of the date's
 * symbols (`symbol` is one of them) and their open interest settled the session before, as the store's own
 * read asks them (each column as DOUBLE, contracts named by their symbols' hashes, only the files whose
 * sessions hold them), with no contract terms, records or JSON: what reading them costs DuckDB alone.
 */
function frontRowsSql(
  dir: string,
  manifest: Manifest,
  underlying: string,
  symbol: string,
  session: string,
): string {
  const previous = previousSession(session);
  const year = (date: string) => ({ underlying, year: date.slice(0, 4) });
  const quotes = partitionFiles(dir, manifest, 'option_quotes', year(session), session);
  const interest = partitionFiles(dir, manifest, 'open_interest', year(previous), previous);
  // The root and date: an OCC symbol ends with the side and eight strike digits.
  const date = symbol.slice(0, -9);
  const symbols = `option_symbol >= ${quoteLiteral(date)} AND option_symbol < ${quoteLiteral(`${date}~`)}`;
  const seconds = (column: string) => asDouble(`epoch_ms(q.${column}) / 1000`);
  const quoteColumns = [
    SYMBOL_KEY('q'),
    seconds('quote_time'),
    ...['bid', 'ask', 'bid_size', 'ask_size', '"last"', 'volume'].map((column) => asDouble(`q.${column}`)),
    seconds('volume_time'),
    asDouble('q.underlying_price'),
  ];
  const interestColumns = [SYMBOL_KEY('q'), seconds('published_at'), asDouble('q.open_interest')];
  const none = Array.from({ length: quoteColumns.length - interestColumns.length }, () => asDouble('NULL'));
  return `
    SELECT ${quoteColumns.join(', ')} FROM read_parquet(${fileList(quotes)}) q
    WHERE session_date = DATE ${quoteLiteral(session)} AND ${symbols}
    UNION ALL
    SELECT ${[...interestColumns, ...none].join(', ')} FROM read_parquet(${fileList(interest)}) q
    WHERE settled_session = DATE ${quoteLiteral(previous)} AND ${symbols}`;
}

/** JSON numbers as JavaScript prints them: DuckDB writes a whole double as `400.0`, JSON.stringify as `400`. */
const jsNumbers = (json: string) => `regexp_replace(${json}, '\\.0([,\\]])', '\\1', 'g')`;

/** A cent-rounded double as the service rounds intrinsic and extrinsic values (nearest decimal to the binary value). */
const cents = (value: string) => `CAST(format('{:.2f}', ${value}) AS DOUBLE)`;

/**
 * The dated chain `date=D&expiration=all` of an underlying as one hand-written DuckDB statement over the
 * store's Parquet files of that partition, returning the JSON body text the service sends: each contract's
 * last snapshot of D, open interest settled on the session before, standard expirations not yet expired,
 * ordered by expiration, side and strike, Greeks null, the first `limit` (default 10,000) rows. Each
 * field is one ordered list aggregate written by to_json (the fastest of the forms tried).
 */
function rawChainSql(dir: string, manifest: Manifest, underlying: string, session: string): string {
  const previous = previousSession(session);
  const quotes = partitionFiles(dir, manifest, 'option_quotes', { underlying, year: session.slice(0, 4) });
  const interest = partitionFiles(dir, manifest, 'open_interest', { underlying, year: previous.slice(0, 4) });
  const contracts = partitionFiles(dir, manifest, 'contracts', { underlying });
  const d = `DATE ${quoteLiteral(session)}`;
  const et = (date: string, time: string) =>
    `epoch(timezone('America/New_York', ${date} + TIME ${quoteLiteral(time)}))`;
  const list = (field: string) => `to_json(list(${field} ORDER BY rn))`;
  const nulls = list('CAST(NULL AS DOUBLE)');
  // Each field's JSON, written in the service's order (OPTION_COLUMNS): a field added there and not here
  // is a type error.
  const json: Record<OptionField, string> = {
    optionSymbol: list('option_symbol'),
    underlying: list('underlying'),
    expiration: jsNumbers(list('expiration')),
    side: list('side'),
    strike: jsNumbers(list('strike')),
    firstTraded: jsNumbers(list('first_traded')),
    dte: list('dte'),
    updated: jsNumbers(list('updated')),
    bid: jsNumbers(list('bid')),
    bidSize: list('bid_size'),
    mid: jsNumbers(list('mid')),
    ask: jsNumbers(list('ask')),
    askSize: list('ask_size'),
    last: jsNumbers(list('"last"')),
    openInterest: list('open_interest'),
    volume: list('volume'),
    inTheMoney: list('itm'),
    intrinsicValue: jsNumbers(list('intrinsic')),
    extrinsicValue: jsNumbers(list('extrinsic')),
    underlyingPrice: jsNumbers(list('spot')),
    iv: nulls,
    delta: nulls,
    gamma: nulls,
    theta: nulls,
    vega: nulls,
  };
  const keys = OPTION_COLUMNS.map(({ key }): [string, string] => [key, json[key]]);
  return `
    WITH snap AS (
      SELECT option_symbol, quote_time, bid, ask, bid_size, ask_size, "last", volume, underlying_price
      FROM read_parquet(${fileList(quotes)})
      WHERE session_date = ${d}
      QUALIFY row_number() OVER (PARTITION BY option_symbol ORDER BY quote_time DESC) = 1
    ), oi AS (
      SELECT option_symbol, open_interest FROM read_parquet(${fileList(interest)})
      WHERE settled_session = DATE ${quoteLiteral(previous)}
    ), base AS (
      SELECT c.option_symbol, ${quoteLiteral(underlying)} AS underlying, epoch(c.expiration_time) AS expiration,
             c.side, CAST(c.strike AS DOUBLE) AS strike, ${et('c.first_traded', '09:30')} AS first_traded,
             date_diff('day', ${d}, c.expiration) AS dte, epoch(s.quote_time) AS updated,
             -- semantics 3.1: half-up to the cent on the exact decimal
             CAST(round((s.bid + s.ask) * 0.5, 2) AS DOUBLE) AS mid,
             CAST(s.bid AS DOUBLE) AS bid, s.bid_size, CAST(s.ask AS DOUBLE) AS ask, s.ask_size,
             CAST(s."last" AS DOUBLE) AS "last", oi.open_interest, s.volume,
             CAST(s.underlying_price AS DOUBLE) AS spot
      FROM snap s
      JOIN read_parquet(${fileList(contracts)}) c ON c.option_symbol = s.option_symbol
      LEFT JOIN oi ON oi.option_symbol = s.option_symbol
      WHERE c.expiration >= ${d} AND NOT c.nonstandard
    ), priced AS (
      SELECT *,
             ${cents(`greatest(0, CASE side WHEN 'call' THEN spot - strike ELSE strike - spot END)`)} AS intrinsic,
             CASE side WHEN 'call' THEN spot > strike ELSE strike > spot END AS itm
      FROM base
    ), numbered AS (
      SELECT *, ${cents('abs(mid - intrinsic)')} AS extrinsic,
             row_number() OVER (ORDER BY expiration, side, strike, option_symbol) AS rn
      FROM priced
    )
    SELECT '{"s":"ok",' || ${keys.map(([key, json]) => `'"${key}":' || ${json}`).join(" || ',' || ")} || '}' AS body
    FROM numbered WHERE rn <= ${DEFAULT_LIMIT}`;
}

/** The clock instant T of every request: after the store's last session, so any session is a past date. */
const NOW = '2021-03-01T12:00:00-05:00';
/** The session of the timed chains: a 2019 session, whose SPY chain (6,358 rows) is near that year's median. */
const SESSION = '2019-06-14';
/** How many sessions the random-access rows ask, each once, in random order over the store's years. */
const RANDOM_SESSIONS = 60;
/** The chain the random current instants ask. */
const SPY = { underlying: 'SPY' };

/** `count` distinct sessions of the store's years in a fixed pseudo-random order (never `SESSION`). */
const randomSessions = (count: number) => randomStoreSessions(count, 20_150_102, SESSION);

/** The chains of the memory series: several sessions and underlyings, whole chains and front months. */
const MEMORY_SESSIONS = ['2015-03-20', '2016-06-24', '2017-09-15', '2018-12-24', '2019-06-14', '2020-03-16'];
const MEMORY_SYMBOLS = ['SPY', 'SPX', 'SPXW', 'AAPL'];
/** Current (undated) chains of the memory series: live and historical mode at instants inside the store. */
const CURRENT_CHAINS: readonly [string, string][] = [
  ['2019-06-14T15:50:00-04:00', '/v1/options/chain/SPY/'],
  ['2020-03-17T10:00:00-04:00', '/v1/options/chain/SPY/?mode=historical&expiration=all'],
  ['2020-09-01T12:00:00-04:00', '/v1/options/chain/AAPL/?expiration=all'],
];
const chainPath = (symbol: string, session: string, all: boolean) =>
  `/v1/options/chain/${symbol}/?date=${session}${all ? '&expiration=all' : ''}`;

/** Answers a request and insists on a 200 (or a 404 no_data when allowed): timing errors measures nothing. */
async function answer(store: Store, path: string, now = NOW, allowNoData = false): Promise<string> {
  const response = await store.request(path, { now });
  const noData = response.status === 404 && response.body.startsWith('{"s":"no_data"');
  if (response.status !== 200 && !(allowNoData && noData)) {
    throw new Error(`${path} answered ${response.status}: ${response.body}`);
  }
  return response.body;
}

type SeriesKind = 'dated' | 'current' | 'raw';

/**
 * One memory series, run in a fresh process (only the store and its chains in it) on the built package
 * under plain Node, as users run it: the RSS peak while answering the dated chains, or the current ones;
 * the `raw` series runs the hand-written statement for the whole chains of the dated sessions instead, as
 * the baseline of what DuckDB alone takes.
 */
async function memorySeries(dir: string, kind: SeriesKind): Promise<MemoryFigures> {
  if (kind === 'raw') {
    const manifest = (await readManifest(dir))!;
    return forkMemoryJob({
      kind: 'raw',
      statements: MEMORY_SESSIONS.flatMap((session) =>
        MEMORY_SYMBOLS.filter((s) => s !== 'SPXW').map((symbol) =>
          rawChainSql(dir, manifest, symbol, session),
        ),
      ),
    });
  }
  const requests: [string, string, boolean][] =
    kind === 'current'
      ? CURRENT_CHAINS.map(([now, path]) => [now, path, false])
      : MEMORY_SESSIONS.flatMap((session) =>
          MEMORY_SYMBOLS.flatMap((symbol) =>
            [true, false].map((all): [string, string, boolean] => [
              NOW,
              chainPath(symbol, session, all),
              true,
            ]),
          ),
        );
  return forkMemoryJob({ kind: 'store', dir, requests });
}

export default defineBenchmark({
  name: 'chain',
  description: 'option chains on a 25-million-row store vs one hand-written DuckDB statement',
  async run(ctx) {
    const built = await ensureGeneratedStore(
      ctx,
      join(ctx.repoRoot, ...CHAIN_STORE_DIR),
      await chainStorePlan(ctx),
    );
    ctx.log(`store ${built.dir}: ${built.rows.toLocaleString('en-US')} option rows`);
    const manifest = (await readManifest(built.dir))!;
    const rawSql = (session: string) => rawChainSql(built.dir, manifest, 'SPY', session);

    ctx.log('memory series, each in a process of its own on the built package');
    await ensureBuilt();
    const dated = await memorySeries(built.dir, 'dated');
    const current = await memorySeries(built.dir, 'current');
    const rawSeries = await memorySeries(built.dir, 'raw');

    // The timed requests go to the built package, as an install runs them (`installedOpenStore`; through
    // tsx each function carries a naming call an install never makes); the source store is opened for
    // what reaches inside it: the query the current instants are compared with.
    const served = await installedOpenStore(built.dir);
    const store = await openStore(built.dir);
    const raw = await SqlSession.open();
    // DuckDB as the store's reader sets it up for small reads: the files' footers kept between statements.
    const floor = await SqlSession.open();
    await floor.run('SET parquet_metadata_cache = true');
    try {
      const all = chainPath('SPY', SESSION, true);
      const front = chainPath('SPY', SESSION, false);
      const body = await answer(served, all);
      const rawBody = await raw.value<string>(rawSql(SESSION));
      if (body !== rawBody)
        throw new Error(`the raw statement's body differs from the chain's for ${SESSION}`);
      const rows = (JSON.parse(body) as { optionSymbol: unknown[] }).optionSymbol.length;
      ctx.log(`chain ${all}: ${rows.toLocaleString('en-US')} rows, ${(body.length / 2 ** 20).toFixed(2)} MB`);

      // Random access: sessions in random order, each asked once (never a response-cache hit), the
      // whole chain, then the raw statement for the same sessions; then the front month likewise. Each
      // series runs whole before its baseline: run alternately, each of our requests was charged with
      // collecting the raw statement's garbage (its 1-2 MB body among it) and with DuckDB's threads
      // finishing its work (16.3 ms of CPU p50 alone, 20.7-23.7 right after a raw statement).
      ctx.log(`random access: ${RANDOM_SESSIONS} sessions in random order, each asked once`);
      const sessions = randomSessions(RANDOM_SESSIONS * 2);
      const wholeOurs: number[] = [];
      const wholeCpu: number[] = [];
      const wholeRaw: number[] = [];
      const wholeSessions = sessions.slice(0, RANDOM_SESSIONS);
      for (const session of wholeSessions) {
        const ours = await measure(() => answer(served, chainPath('SPY', session, true), NOW, true));
        wholeOurs.push(ours.wall);
        wholeCpu.push(ours.cpu);
      }
      for (const session of wholeSessions) {
        wholeRaw.push((await measure(() => raw.value(rawSql(session)))).wall);
      }
      const frontCpu: number[] = [];
      const frontWall: number[] = [];
      const floorCpu: number[] = [];
      const floorStatements: string[] = [];
      for (const session of sessions.slice(RANDOM_SESSIONS)) {
        let body = '';
        const ours = await measure(async () => {
          body = await answer(served, chainPath('SPY', session, false), NOW, true);
        });
        frontWall.push(ours.wall);
        frontCpu.push(ours.cpu);
        // The same session's rows of the date answered, read by one plain DuckDB statement.
        const symbol = (JSON.parse(body) as { optionSymbol?: string[] }).optionSymbol?.[0];
        if (symbol !== undefined)
          floorStatements.push(frontRowsSql(built.dir, manifest, 'SPY', symbol, session));
      }
      for (const rowsSql of floorStatements) {
        floorCpu.push((await measure(() => floor.typedColumns(rowsSql))).cpu);
      }
      // Current instants (15:45 of sessions in random order, each once), as `store.at(T)` asks: the block
      // of the session and the one before against the query that answered them before it.
      ctx.log(`current instants: ${RANDOM_SESSIONS} sessions in random order, 15:45 ET, each asked once`);
      const { reader } = storeInternals(store);
      const instantCpu: number[] = [];
      const instantWall: number[] = [];
      const queryCpu: number[] = [];
      for (const session of randomSessions(RANDOM_SESSIONS * 3).slice(RANDOM_SESSIONS * 2)) {
        const T = etWallToSeconds(session, '15:45');
        const ours = await measure(() => served.at(T).options.chain('SPY'));
        instantCpu.push(ours.cpu);
        instantWall.push(ours.wall);
        const asOf = currentAsOf('live', T);
        queryCpu.push(
          (await measure(async () => assemble(asOf, rowSource(await scopeRows(reader.sql, asOf, SPY))))).cpu,
        );
      }
      // Whole chains at current instants of other sessions: the same block, whole, against the same query
      // (the query reads every contract of the chain, whichever date a request keeps).
      const wholeInstantCpu: number[] = [];
      const wholeInstantWall: number[] = [];
      for (const session of randomSessions(RANDOM_SESSIONS * 4).slice(RANDOM_SESSIONS * 3)) {
        const T = etWallToSeconds(session, '15:45');
        const ours = await measure(() => served.at(T).options.chain('SPY', { expiration: 'all' }));
        wholeInstantCpu.push(ours.cpu);
        wholeInstantWall.push(ours.wall);
      }
      const whole = { ours: summarise(wholeOurs), cpu: summarise(wholeCpu), baseline: summarise(wholeRaw) };
      const parsed = JSON.parse(body) as unknown;
      const stringify = await timeIt(() => JSON.stringify(parsed), { warmup: 2, iterations: 25 });
      ctx.log('repeated requests (answered from the response cache)');
      const repeated = await timeIt(() => answer(served, front), { warmup: 5, iterations: 200 });
      const frontRows = (JSON.parse(await answer(served, front)) as { optionSymbol: unknown[] }).optionSymbol
        .length;
      const load = loadAverage();

      return [
        ratioRow({
          name: 'chain: store option rows',
          ours: built.rows,
          unit: 'rows',
          target: '≥ 25000000 rows',
          note: `SPY (dense ETF listing), SPX/SPXW, AAPL ${YEARS[0]}-${YEARS.at(-1)}, EOD + 15:45${built.built > 0 ? `; ${built.built} years built this run` : ''}`,
        }),
        ratioRow({
          name: 'chain: SPY expiration=all at a random session p50',
          ours: whole.ours.p50Ms,
          baseline: whole.baseline.p50Ms,
          unit: 'ms',
          target: '≤ 1.3× baseline time',
          note: `${RANDOM_SESSIONS} sessions ${YEARS[0]}-${YEARS.at(-1)} in random order, each asked once, vs the raw statement for the same session; p90 ${whole.ours.p90Ms.toFixed(1)} vs ${whole.baseline.p90Ms.toFixed(1)} ms; ${rows.toLocaleString('en-US')}-row chain's JSON.stringify alone ${stringify.p50Ms.toFixed(1)} ms; load ${load}`,
        }),
        ratioRow({
          name: 'chain: SPY expiration=all at a random session, CPU p50',
          ours: whole.cpu.p50Ms,
          unit: 'ms',
          target: '≤ 20 ms',
          note: `CPU of the whole process (every DuckDB thread); wall p50 ${whole.ours.p50Ms.toFixed(1)} ms`,
        }),
        ratioRow({
          name: 'chain: SPY front month at a random session, CPU p50',
          ours: summarise(frontCpu).p50Ms,
          baseline: summarise(floorCpu).p50Ms,
          unit: 'ms',
          target: '≤ 5 ms',
          note: `${RANDOM_SESSIONS} other sessions in random order, each asked once; wall p50 ${summarise(frontWall).p50Ms.toFixed(1)} ms, p90 ${summarise(frontWall).p90Ms.toFixed(1)} ms; baseline: only the date's quote and open interest rows of the session, read by one plain DuckDB statement (no contracts, no records, no JSON); load ${load}`,
        }),
        ratioRow({
          name: 'chain: SPY front month at a random 15:45 instant, CPU p50',
          ours: summarise(instantCpu).p50Ms,
          baseline: summarise(queryCpu).p50Ms,
          unit: 'ms',
          target: '≤ 0.5× baseline time',
          note: `store.at(T).options.chain at ${RANDOM_SESSIONS} other sessions in random order, vs the query alone (no records, no JSON) at the same instants; wall p50 ${summarise(instantWall).p50Ms.toFixed(1)} ms, p90 ${summarise(instantWall).p90Ms.toFixed(1)} ms; load ${load}`,
        }),
        ratioRow({
          name: 'chain: SPY expiration=all at a random 15:45 instant, CPU p50',
          ours: summarise(wholeInstantCpu).p50Ms,
          baseline: summarise(queryCpu).p50Ms,
          unit: 'ms',
          target: '≤ 0.5× baseline time',
          note: `store.at(T).options.chain at ${RANDOM_SESSIONS} more sessions in random order, vs the query alone (no records, no JSON) at the front-month row's instants, which reads the whole chain too; wall p50 ${summarise(wholeInstantWall).p50Ms.toFixed(1)} ms, p90 ${summarise(wholeInstantWall).p90Ms.toFixed(1)} ms; load ${load}`,
        }),
        ratioRow({
          name: `chain: SPY date=${SESSION} front month repeated p50 (response cache)`,
          ours: repeated.p50Ms,
          unit: 'ms',
          target: '≤ 0.2 ms',
          note: `the same request 200 times, answered from the response cache (${frontRows} rows); p90 ${repeated.p90Ms.toFixed(2)} ms`,
        }),
        ratioRow({
          name: 'chain: peak RSS, dated chains',
          ours: dated.peakMb,
          baseline: rawSeries.peakMb,
          unit: 'MB',
          target: '< 300 MB',
          note: `${MEMORY_SESSIONS.length * MEMORY_SYMBOLS.length * 2} chains (${MEMORY_SYMBOLS.join(', ')}; whole, front month); ${dated.openMb.toFixed(0)} MB with the store open; baseline: the raw statement's whole chains`,
        }),
        ratioRow({
          name: 'chain: peak RSS, current chains',
          ours: current.peakMb,
          unit: 'MB',
          target: '< 300 MB',
          note: `${CURRENT_CHAINS.length} chains at instants inside the store (live, historical mode); ${current.openMb.toFixed(0)} MB with the store open`,
        }),
      ];
    } finally {
      floor.close();
      raw.close();
      store.close();
      served.close();
    }
  },
});
