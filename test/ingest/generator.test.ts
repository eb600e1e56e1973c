import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestError, StoreError, UsageError } from '../../src/errors.js';
import {
  type GeneratorOptions,
  type GeneratorSummary,
  generateMarket,
  type ListingPlan,
  parseLeanDailyBars,
  SAMPLE_SOURCES,
  sampleOptions,
  simulateDailyBars,
  type UnderlyingSpec,
} from '../../src/ingest/generator/index.js';
import { intradayPath, minuteBars, type SessionPins } from '../../src/ingest/generator/minutes.js';
import { createRandom } from '../../src/ingest/generator/random.js';
import {
  classifyExpiration,
  etMidnightSeconds,
  etWallToSeconds,
  expirationSeconds,
  isSession,
  nextSession,
  previousSession,
  sessionCloseSeconds,
  sessionOpenSeconds,
  sessionsBetween,
  settlementOf,
} from '../../src/market-time/index.js';
import { formatOccSymbol, isOccSymbol, parseOccSymbol } from '../../src/occ/index.js';
import { createStagingTableSql } from '../../src/store/schema.js';
import { SqlSession } from '../../src/store/sql.js';

const SMALL: Partial<ListingPlan> = {
  weeklyDays: 14,
  midweekDays: 7,
  monthlyMonths: 1.5,
  quarterlyMonths: 2,
  leapsYears: 0,
  nearSd: 0.5,
  farSd: 1.2,
};

const SPY: UnderlyingSpec = {
  symbol: 'SPY',
  style: 'etf',
  series: { kind: 'lean', path: SAMPLE_SOURCES.SPY },
  listing: SMALL,
};
const SPX: UnderlyingSpec = {
  symbol: 'SPX',
  style: 'index',
  series: { kind: 'derived', from: 'SPY', factor: 10 },
  listing: SMALL,
};
const AAPL: UnderlyingSpec = {
  symbol: 'AAPL',
  style: 'stock',
  series: { kind: 'lean', path: SAMPLE_SOURCES.AAPL },
  splits: [{ exDate: '2020-08-31', ratio: 4 }],
  listing: SMALL,
};

async function openStaging(threads?: number): Promise<SqlSession> {
  const sql = await SqlSession.open(threads === undefined ? {} : { threads });
  for (const table of ['option_quotes', 'open_interest', 'stock_bars', 'splits'] as const) {
    await sql.run(createStagingTableSql(table));
  }
  return sql;
}

async function generated(
  options: GeneratorOptions,
  threads?: number,
): Promise<{ sql: SqlSession; summary: GeneratorSummary }> {
  const sql = await openStaging(threads);
  return { sql, summary: await generateMarket(sql, options) };
}

/** A digest of every table's rows in a fixed order. */
async function digest(sql: SqlSession): Promise<string[]> {
  return Promise.all(
    [
      'SELECT md5(string_agg(x::VARCHAR, chr(10) ORDER BY option_symbol, quote_time)) FROM option_quotes x',
      'SELECT md5(string_agg(x::VARCHAR, chr(10) ORDER BY option_symbol, settled_session)) FROM open_interest x',
      'SELECT md5(string_agg(x::VARCHAR, chr(10) ORDER BY symbol, resolution, t)) FROM stock_bars x',
    ].map((query) => sql.value<string>(query)),
  );
}

describe('generateMarket on SPY, SPX/SPXW and AAPL (2020-08-24..2020-09-21)', () => {
  const from = '2020-08-24';
  const to = '2020-09-21';
  let sql: SqlSession;
  let summary: GeneratorSummary;
  beforeAll(async () => {
    ({ sql, summary } = await generated({
      from,
      to,
      seed: 7,
      underlyings: [SPY, SPX, AAPL],
      snapshots: ['15:45', 'eod'],
      minuteBars: true,
    }));
    const sessions = sessionsBetween(previousSession(from), nextSession(to));
    await sql.run('CREATE TEMP TABLE cal (session_date DATE, prev_session DATE, open_ts TIMESTAMPTZ)');
    await sql.append('cal', [
      sessions.slice(1),
      sessions.slice(0, -1),
      sessions.slice(1).map((date) => sessionOpenSeconds(date)),
    ]);
  });
  afterAll(() => sql.close());

  it('reports what it wrote', async () => {
    const counts = await sql.all(
      `SELECT (SELECT count(*) FROM option_quotes) AS q, (SELECT count(*) FROM open_interest) AS o,
        (SELECT count(DISTINCT option_symbol) FROM option_quotes) AS c, (SELECT count(*) FROM splits) AS s`,
    );
    expect(counts).toEqual([
      { q: summary.optionRows, o: summary.openInterestRows, c: summary.contracts, s: 1 },
    ]);
    expect(summary.sessions).toBe(20);
    expect(summary.dailyBars).toBe(2 * 20);
    expect(summary.minuteBars).toBe(2 * 20 * 390);
    expect(summary.optionRows).toBeGreaterThan(20_000);
  });

  it('quotes only sessions, at 15:45 and 16:00 ET, with valid OCC symbols of unexpired contracts', async () => {
    const sessions = await sql.all<{ d: string; q: number[] }>(
      'SELECT session_date AS d, array_sort(list(DISTINCT epoch(quote_time)::INTEGER)) AS q FROM option_quotes GROUP BY 1 ORDER BY 1',
    );
    expect(sessions).toEqual(
      sessionsBetween(from, to).map((d) => ({
        d,
        q: [sessionCloseSeconds(d) - 900, etWallToSeconds(d, '16:00')],
      })),
    );
    const symbols = await sql.all<{ s: string; first: string; last: string; u: string }>(
      'SELECT option_symbol AS s, min(session_date) AS first, max(session_date) AS last, any_value(underlying) AS u FROM option_quotes GROUP BY 1',
    );
    const bad = symbols.filter(({ s, last, u }) => {
      if (!isOccSymbol(s)) return true;
      const { root, expirationDate } = parseOccSymbol(s);
      const settlement = settlementOf(root, expirationDate);
      const lastAllowed = settlement === 'am-index' ? previousSession(expirationDate) : expirationDate;
      return last > lastAllowed || (root.startsWith('SPX') ? u !== 'SPX' : u !== root);
    });
    expect(bad).toEqual([]);
  });

  it('never crosses a quote, keeps bid ≥ 0 and sizes 0 exactly when the side is empty', async () => {
    const row = await sql.all(
      `SELECT count(*) FILTER (WHERE bid > ask OR bid < 0) AS crossed,
        count(*) FILTER (WHERE bid = 0 AND ask = 0) AS worthless,
        count(*) FILTER (WHERE (bid = 0) <> (bid_size = 0) OR (ask = 0) <> (ask_size = 0)) AS bad_sizes,
        count(*) FILTER (WHERE last IS NOT NULL AND (last < bid OR last > greatest(ask, 0.01))) AS bad_last,
        count(*) FILTER (WHERE (volume = 0) <> (last IS NULL)) AS bad_last_null,
        count(*) FILTER (WHERE volume = 0) > 0 AS some_zero_volume
      FROM option_quotes`,
    );
    expect(row).toEqual([
      {
        crossed: 0,
        worthless: expect.any(Number),
        bad_sizes: 0,
        bad_last: 0,
        bad_last_null: 0,
        some_zero_volume: true,
      },
    ]);
    expect((row[0] as { worthless: number }).worthless).toBeGreaterThan(0);
  });

  it('has the 15:45 volume stamped at 15:45 and no larger than the day', async () => {
    const row = await sql.all(
      `SELECT count(*) FILTER (WHERE e.volume_time <> e.quote_time OR i.volume_time <> i.quote_time) AS bad_stamp,
        count(*) FILTER (WHERE i.volume > e.volume) AS bad_volume, count(*) > 0 AS some
      FROM option_quotes e JOIN option_quotes i ON i.option_symbol = e.option_symbol AND i.session_date = e.session_date
        AND i.quote_time < e.quote_time`,
    );
    expect(row).toEqual([{ bad_stamp: 0, bad_volume: 0, some: true }]);
  });

  it('publishes open interest settled from D−1 at 09:30 ET of D, never negative, moving by at most the volume', async () => {
    const published = await sql.all(
      `SELECT count(*) FILTER (WHERE c.open_ts IS NULL OR o.published_at <> c.open_ts) AS bad_publication,
        count(*) FILTER (WHERE o.open_interest < 0) AS negative
      FROM open_interest o LEFT JOIN cal c ON c.prev_session = o.settled_session`,
    );
    expect(published).toEqual([{ bad_publication: 0, negative: 0 }]);
    const missing = await sql.value<number>(
      `SELECT count(*) FROM option_quotes q JOIN cal c USING (session_date)
       ANTI JOIN open_interest o ON o.option_symbol = q.option_symbol AND o.settled_session = c.prev_session`,
    );
    expect(missing).toBe(0);
    const moves = await sql.all(
      `SELECT count(*) FILTER (WHERE abs(b.open_interest - a.open_interest) > q.volume) AS too_far,
        count(*) FILTER (WHERE b.open_interest <> a.open_interest) AS changed
      FROM open_interest b JOIN cal c ON c.session_date = b.settled_session
        JOIN open_interest a ON a.option_symbol = b.option_symbol AND a.settled_session = c.prev_session
        JOIN option_quotes q ON q.option_symbol = b.option_symbol AND q.session_date = b.settled_session
          AND hour(q.quote_time AT TIME ZONE 'America/New_York') = 16`,
    );
    expect(moves).toEqual([{ too_far: 0, changed: expect.any(Number) }]);
    expect((moves[0] as { changed: number }).changed).toBeGreaterThan(1000);
    const listedInRange = await sql.all(
      `SELECT count(*) AS n, count(*) FILTER (WHERE o.open_interest <> 0) AS nonzero
      FROM (SELECT option_symbol, min(session_date) AS first FROM option_quotes GROUP BY 1 HAVING first > DATE '${from}') f
        JOIN cal c ON c.session_date = f.first
        JOIN open_interest o ON o.option_symbol = f.option_symbol AND o.settled_session = c.prev_session
      WHERE f.option_symbol NOT LIKE 'AAPL%' OR f.first <> DATE '2020-08-31'`,
    );
    expect(listedInRange).toEqual([{ n: expect.any(Number), nonzero: 0 }]);
    expect((listedInRange[0] as { n: number }).n).toBeGreaterThan(100);
  });

  it('keeps put-call parity on near-the-money mids', async () => {
    const pairs = await sql.all<{
      k: number;
      s: number;
      d: string;
      c: number;
      p: number;
      tol: number;
      u: string;
      e: string;
    }>(
      `SELECT c.underlying AS u, c.underlying_price AS s, c.session_date AS d,
        (c.bid + c.ask) / 2 AS c, (p.bid + p.ask) / 2 AS p, 0.25 * (c.ask - c.bid + p.ask - p.bid) + 0.06 AS tol,
        CAST(substr(c.option_symbol, -8) AS INTEGER) / 1000 AS k, substr(c.option_symbol, -15, 6) AS e
      FROM option_quotes c JOIN option_quotes p ON p.option_symbol = replace(c.option_symbol, 'C', 'P')
        AND p.quote_time = c.quote_time
      WHERE c.option_symbol LIKE '%C%' AND c.underlying IN ('SPY', 'AAPL') AND c.bid > 0 AND p.bid > 0
        AND abs(CAST(substr(c.option_symbol, -8) AS INTEGER) / 1000 / c.underlying_price - 1) < 0.03
        AND hour(c.quote_time AT TIME ZONE 'America/New_York') = 16`,
    );
    expect(pairs.length).toBeGreaterThan(500);
    const violations = pairs.filter((row) => {
      const expiration = `20${row.e.slice(0, 2)}-${row.e.slice(2, 4)}-${row.e.slice(4, 6)}`;
      const years =
        (expirationSeconds(expiration, 'equity') - etWallToSeconds(row.d, '16:00')) / (365 * 86400);
      const dividend = row.u === 'SPY' ? 0.018 : 0.008;
      const parity = row.s * Math.exp(-dividend * years) - row.k * Math.exp(-0.015 * years);
      return Math.abs(row.c - row.p - parity) > row.tol;
    });
    expect(violations).toEqual([]);
  });

  it('builds minute bars that aggregate exactly to the daily bars', async () => {
    const days = await sql.all(
      `SELECT d.symbol, count(*) AS days,
        count(*) FILTER (WHERE m.n <> 390 OR m.o <> d.o OR m.c <> d.c OR m.h <> d.h OR m.l <> d.l OR m.v <> d.v
          OR m.first_t <> d.t + INTERVAL 570 MINUTES OR m.bad > 0) AS mismatched
      FROM stock_bars d JOIN (
        SELECT symbol, session_date, count(*) AS n, arg_min(o, t) AS o, arg_max(c, t) AS c, max(h) AS h, min(l) AS l,
          sum(v) AS v, min(t) AS first_t, count(*) FILTER (WHERE h < greatest(o, c) OR l > least(o, c)) AS bad
        FROM stock_bars WHERE resolution = '1' GROUP BY ALL
      ) m USING (symbol, session_date)
      WHERE d.resolution = 'D' GROUP BY 1 ORDER BY 1`,
    );
    expect(days).toEqual([
      { symbol: 'AAPL', days: 20, mismatched: 0 },
      { symbol: 'SPY', days: 20, mismatched: 0 },
    ]);
    const daily = await sql.all<{ d: string; t: number }>(
      "SELECT session_date AS d, epoch(t)::BIGINT AS t FROM stock_bars WHERE resolution = 'D' AND symbol = 'SPY' ORDER BY 1",
    );
    expect(daily).toEqual(sessionsBetween(from, to).map((d) => ({ d, t: etMidnightSeconds(d) })));
  });

  it('files AM-settled SPX monthlies and PM-settled SPXW weeklies under SPX, at ten times SPY', async () => {
    const roots = await sql.all<{ root: string; e: string; last: string }>(
      `SELECT regexp_extract(option_symbol, '^[A-Z]+') AS root, substr(option_symbol, -15, 6) AS e, max(session_date) AS last
      FROM option_quotes WHERE underlying = 'SPX' GROUP BY ALL ORDER BY ALL`,
    );
    const expirations = roots.map(({ root, e, last }) => {
      const expiration = `20${e.slice(0, 2)}-${e.slice(2, 4)}-${e.slice(4, 6)}`;
      return {
        root,
        expiration,
        last,
        settlement: settlementOf(root, expiration),
        ...classifyExpiration(expiration),
      };
    });
    const spx = expirations.filter((e) => e.root === 'SPX');
    expect(spx.map((e) => [e.expiration, e.settlement, e.monthly])).toEqual([
      ['2020-09-18', 'am-index', true],
      ['2020-10-16', 'am-index', true],
    ]);
    expect(spx[0]!.last).toBe('2020-09-17');
    const spxw = expirations.filter((e) => e.root === 'SPXW');
    expect(spxw.every((e) => e.settlement === 'pm-index' && !e.monthly)).toBe(true);
    expect(spxw.map((e) => e.expiration)).toContain('2020-09-30');
    expect(spxw.find((e) => e.expiration === '2020-09-16')?.last).toBe('2020-09-16');
    const spyMonthlyLast = await sql.value<string>(
      "SELECT max(session_date) FROM option_quotes WHERE option_symbol LIKE 'SPY200918%'",
    );
    expect(spyMonthlyLast).toBe('2020-09-18');
    const scaled = await sql.value<number>(
      `SELECT count(*) FROM (SELECT DISTINCT quote_time, underlying_price FROM option_quotes WHERE underlying = 'SPX') x
       JOIN (SELECT DISTINCT quote_time, underlying_price FROM option_quotes WHERE underlying = 'SPY') y USING (quote_time)
       WHERE x.underlying_price <> round(y.underlying_price * 10, 4)`,
    );
    expect(scaled).toBe(0);
  });

  it('adjusts AAPL contracts at the 2020-08-31 4:1 split: strike/4, same root, open interest ×4', async () => {
    const before = await sql.all<{ s: string }>(
      "SELECT DISTINCT option_symbol AS s FROM option_quotes WHERE underlying = 'AAPL' AND session_date = '2020-08-28' ORDER BY 1",
    );
    const after = new Set(
      (
        await sql.all<{ s: string }>(
          "SELECT DISTINCT option_symbol AS s FROM option_quotes WHERE underlying = 'AAPL' AND session_date = '2020-08-31'",
        )
      ).map((r) => r.s),
    );
    const alive = before.map((r) => parseOccSymbol(r.s)).filter((c) => c.expirationDate >= '2020-08-31');
    expect(alive.length).toBeGreaterThan(50);
    const missing = alive
      .map((c) => formatOccSymbol({ ...c, strike: Math.round((c.strike / 4) * 1000) / 1000 }))
      .filter((symbol) => !after.has(symbol));
    expect(missing).toEqual([]);
    expect(before.filter((r) => after.has(r.s))).toEqual([]);
    const prices = await sql.all(
      "SELECT session_date AS d, any_value(underlying_price) AS s FROM option_quotes WHERE underlying = 'AAPL' AND session_date IN ('2020-08-28', '2020-08-31') AND hour(quote_time AT TIME ZONE 'America/New_York') = 16 GROUP BY 1 ORDER BY 1",
    );
    expect(prices).toEqual([
      { d: '2020-08-28', s: 499.23 },
      { d: '2020-08-31', s: 129.04 },
    ]);
    const ratios = await sql.all<{ r: number }>(
      `SELECT n.open_interest / o.open_interest AS r FROM open_interest o JOIN open_interest n
        ON n.option_symbol = o.option_symbol[1:-9] || lpad((CAST(o.option_symbol[-8:] AS INTEGER) // 4)::VARCHAR, 8, '0')
      WHERE o.underlying = 'AAPL' AND o.settled_session = '2020-08-27' AND n.settled_session = '2020-08-28'
        AND o.open_interest >= 1000 AND CAST(o.option_symbol[-8:] AS INTEGER) % 4 = 0`,
    );
    expect(ratios.length).toBeGreaterThan(10);
    expect(ratios.filter(({ r }) => r < 2.5 || r > 6)).toEqual([]);
    expect(await sql.all('SELECT symbol, ex_date, ratio FROM splits')).toEqual([
      { symbol: 'AAPL', ex_date: '2020-08-31', ratio: 4 },
    ]);
  });
});

describe('generateMarket determinism and options', () => {
  const options: GeneratorOptions = {
    from: '2020-03-09',
    to: '2020-03-13',
    seed: 11,
    underlyings: [SPY, { ...SPX, listing: { ...SMALL, nearSd: 0.3, farSd: 0.6 } }],
    snapshots: ['eod', '15:45'],
    minuteBars: true,
  };

  it('gives the same tables for the same options whatever the thread count, and others for another seed', async () => {
    const one = await generated(options, 1);
    const two = await generated(options, 2);
    const other = await generated({ ...options, seed: 12 });
    try {
      const first = await digest(one.sql);
      expect(await digest(two.sql)).toEqual(first);
      expect(one.summary).toEqual(two.summary);
      const changed = await digest(other.sql);
      expect(changed.map((hash, i) => hash !== first[i])).toEqual([true, true, true]);
    } finally {
      for (const run of [one, two, other]) run.sql.close();
    }
  });

  it('fills iv only, or no vendor column, on request, and limits the 15:45 snapshot by days to expiry', async () => {
    const { sql } = await generated({ ...options, greeks: 'iv', intradayMaxDte: 3, minuteBars: false });
    try {
      const row = await sql.all(
        `SELECT count(*) FILTER (WHERE iv IS NULL) AS no_iv, count(*) FILTER (WHERE delta IS NOT NULL OR gamma IS NOT NULL
          OR theta IS NOT NULL OR vega IS NOT NULL) AS greeks,
          max(CAST('20' || substr(option_symbol, -15, 2) || '-' || substr(option_symbol, -13, 2) || '-' || substr(option_symbol, -11, 2) AS DATE) - session_date)
            FILTER (WHERE hour(quote_time AT TIME ZONE 'America/New_York') = 15) AS max_intraday_dte,
          (SELECT count(*) FROM stock_bars WHERE resolution = '1') AS minutes
        FROM option_quotes`,
      );
      expect(row).toEqual([{ no_iv: 0, greeks: 0, max_intraday_dte: 3, minutes: 0 }]);
    } finally {
      sql.close();
    }
    const none = await generated({ ...options, greeks: 'none', snapshots: ['eod'], minuteBars: false });
    try {
      expect(await none.sql.value('SELECT count(*) FROM option_quotes WHERE iv IS NOT NULL')).toBe(0);
      expect(
        await none.sql.value(
          "SELECT count(*) FROM option_quotes WHERE hour(quote_time AT TIME ZONE 'America/New_York') <> 16",
        ),
      ).toBe(0);
    } finally {
      none.sql.close();
    }
  });

  it('takes 15:45 at 12:45 on early-close days, with 210 minute bars, on a simulated underlying', async () => {
    const { sql, summary } = await generated({
      from: '2020-11-25',
      to: '2020-11-30',
      seed: 3,
      underlyings: [
        { symbol: 'XYZ', style: 'stock', series: { kind: 'simulated', startPrice: 80 }, listing: SMALL },
      ],
      snapshots: ['15:45', 'eod'],
      minuteBars: true,
    });
    try {
      expect(summary.sessions).toBe(3);
      const times = await sql.all(
        `SELECT session_date AS d, array_sort(list(DISTINCT strftime(quote_time AT TIME ZONE 'America/New_York', '%H:%M'))) AS q
        FROM option_quotes GROUP BY 1 ORDER BY 1`,
      );
      expect(times).toEqual([
        { d: '2020-11-25', q: ['15:45', '16:00'] },
        { d: '2020-11-27', q: ['12:45', '16:00'] },
        { d: '2020-11-30', q: ['15:45', '16:00'] },
      ]);
      const minutes = await sql.all(
        "SELECT session_date AS d, count(*) AS n FROM stock_bars WHERE resolution = '1' GROUP BY 1 ORDER BY 1",
      );
      expect(minutes).toEqual([
        { d: '2020-11-25', n: 390 },
        { d: '2020-11-27', n: 210 },
        { d: '2020-11-30', n: 390 },
      ]);
    } finally {
      sql.close();
    }
  });

  it("reports the rows it added to non-empty staging tables, inside the caller's transaction", async () => {
    const { sql, summary: first } = await generated(options);
    try {
      const counts = async () =>
        sql.all(
          `SELECT (SELECT count(*) FROM option_quotes) AS optionRows, (SELECT count(*) FROM open_interest) AS openInterestRows,
            (SELECT count(*) FROM stock_bars WHERE resolution = 'D') AS dailyBars,
            (SELECT count(*) FROM stock_bars WHERE resolution = '1') AS minuteBars`,
        );
      const firstCounts = await counts();
      expect(firstCounts).toEqual([
        {
          optionRows: first.optionRows,
          openInterestRows: first.openInterestRows,
          dailyBars: first.dailyBars,
          minuteBars: first.minuteBars,
        },
      ]);
      await sql.run('BEGIN TRANSACTION');
      const second = await generateMarket(sql, { ...options, seed: 12 });
      expect(await counts()).toEqual([
        {
          optionRows: first.optionRows + second.optionRows,
          openInterestRows: first.openInterestRows + second.openInterestRows,
          dailyBars: 2 * first.dailyBars,
          minuteBars: 2 * first.minuteBars,
        },
      ]);
      await sql.run('ROLLBACK');
      expect(await counts()).toEqual(firstCounts);
    } finally {
      sql.close();
    }
  });

  it('refuses bad options with a UsageError naming the problem', async () => {
    const sql = await openStaging();
    try {
      const attempt = (patch: Partial<GeneratorOptions>) =>
        generateMarket(sql, { ...options, ...patch }).then(
          () => 'no error',
          (error: unknown) =>
            error instanceof UsageError ? error.message : `not a UsageError: ${String(error)}`,
        );
      expect(await attempt({ from: '2020-03-13', to: '2020-03-09' })).toMatch(/from is after to/);
      expect(await attempt({ underlyings: [SPX] })).toMatch(
        /derived series of SPX needs a non-derived underlying SPY/,
      );
      expect(await attempt({ from: '2018-01-02', to: '2018-01-05', underlyings: [SPY] })).toMatch(
        /series start on 2018-10-01; they must cover 2017-12-29/,
      );
      expect(await attempt({ seed: 1.5 })).toMatch(/seed/);
      expect(await attempt({ from: '2020-03-14', to: '2020-03-15' })).toMatch(
        /no session between 2020-03-14 and 2020-03-15/,
      );
      const gappy = {
        symbol: 'GAP',
        style: 'stock' as const,
        series: {
          kind: 'bars' as const,
          bars: ['2020-03-05', '2020-03-06', '2020-03-10'].map((date) => ({
            date,
            open: 10,
            high: 11,
            low: 9,
            close: 10,
            volume: 100,
          })),
        },
      };
      expect(await attempt({ underlyings: [gappy] })).toMatch(/GAP has no bar for the session 2020-03-09/);
      expect(await sql.value('SELECT count(*) FROM option_quotes')).toBe(0);
    } finally {
      sql.close();
    }
  });
});

describe('generateMarket failures', () => {
  it('leaves the staging tables as they were when a statement fails', async () => {
    const sql = await SqlSession.open();
    try {
      for (const table of ['option_quotes', 'open_interest'] as const)
        await sql.run(createStagingTableSql(table));
      await sql.run('CREATE TABLE stock_bars (symbol VARCHAR, resolution VARCHAR)');
      const error = await generateMarket(sql, {
        from: '2020-03-09',
        to: '2020-03-10',
        seed: 1,
        underlyings: [SPY],
        minuteBars: true,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).sql).toMatch(/^INSERT INTO "stock_bars"/);
      expect(
        await sql.all(
          'SELECT (SELECT count(*) FROM option_quotes) AS q, (SELECT count(*) FROM open_interest) AS o',
        ),
      ).toEqual([{ q: 0, o: 0 }]);
      expect(
        await sql.value(
          "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '\\_gen\\_%' ESCAPE '\\'",
        ),
      ).toBe(0);
      expect(
        await sql.value(
          "SELECT count(*) FROM duckdb_databases() WHERE database_name LIKE '\\_gen%' ESCAPE '\\'",
        ),
      ).toBe(0);
    } finally {
      sql.close();
    }
  });
});

describe('minute bars of one session', () => {
  const bars = (day: SessionPins) => {
    const path = intradayPath(day, createRandom(1, 'path'));
    const minutes = minuteBars(day, path, createRandom(1, 'bars'));
    return {
      path,
      points: Array.from(path),
      high: Array.from(minutes.high),
      low: Array.from(minutes.low),
      volume: Array.from(minutes.volume),
    };
  };
  const day: SessionPins = {
    open: 2_501_200,
    high: 2_532_900,
    low: 2_488_100,
    close: 2_519_400,
    volume: 84_000_000,
    minutes: 390,
    highAt: 250,
    lowAt: 40,
  };

  it('pins the open, low, high and close, keeps every point in range and sums the volume exactly', () => {
    const { points, high, low, volume } = bars(day);
    expect([points[0], points[40], points[250], points[390], points.length]).toEqual([
      day.open,
      day.low,
      day.high,
      day.close,
      391,
    ]);
    expect(
      points.filter(
        (p) => p < day.low || p > day.high || (p % 100 !== 0 && p !== day.open && p !== day.close),
      ),
    ).toEqual([]);
    const inside = high.every(
      (h, i) =>
        h <= day.high &&
        h >= Math.max(points[i]!, points[i + 1]!) &&
        low[i]! >= day.low &&
        low[i]! <= Math.min(points[i]!, points[i + 1]!),
    );
    expect(inside).toBe(true);
    expect(volume.reduce((a, b) => a + b, 0)).toBe(day.volume);
    expect(volume.every((v) => Number.isInteger(v) && v >= 0)).toBe(true);
  });

  it('splits a volume past 2^31 exactly, and an early close into 210 minutes', () => {
    const big = bars({ ...day, volume: 3_000_000_000_123 });
    expect(big.volume.reduce((a, b) => a + b, 0)).toBe(3_000_000_000_123);
    const short = bars({ ...day, minutes: 210, highAt: 200, lowAt: 3 });
    expect([short.points.length, short.volume.length, short.points[200], short.points[3]]).toEqual([
      211,
      210,
      day.high,
      day.low,
    ]);
  });
});

describe('daily series', () => {
  it('parses Lean daily bars (prices in 1/10000 USD) and names the line it refuses', () => {
    expect(
      parseLeanDailyBars(
        '20200828 00:00,5040000,5057700,4983100,4992300,44109029\n20200831 00:00,1276700,1310000,1262500,1290400,210024091\n',
      ),
    ).toEqual([
      { date: '2020-08-28', open: 504, high: 505.77, low: 498.31, close: 499.23, volume: 44109029 },
      { date: '2020-08-31', open: 127.67, high: 131, low: 126.25, close: 129.04, volume: 210024091 },
    ]);
    const error = (() => {
      try {
        parseLeanDailyBars(
          '20200828 00:00,5040000,5057700,4983100,4992300,44109029\n20200831,1,2,3\n',
          'aapl.csv',
        );
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(IngestError);
    expect({ file: (error as IngestError).file, line: (error as IngestError).line }).toEqual({
      file: 'aapl.csv',
      line: 2,
    });
    expect(() => parseLeanDailyBars('20200828 00:00,5040000,4000000,4983100,4992300,1\n')).toThrow(
      /inconsistent bar/,
    );
  });

  it('simulates a seeded series on the NYSE sessions with consistent bars', () => {
    const options = { from: '2020-03-02', to: '2020-03-31', seed: 5, symbol: 'XYZ', startPrice: 50 };
    const bars = simulateDailyBars(options);
    expect(bars.map((b) => b.date)).toEqual(sessionsBetween('2020-03-02', '2020-03-31'));
    expect(
      bars.every(
        (b) => isSession(b.date) && b.high >= Math.max(b.open, b.close) && b.low <= Math.min(b.open, b.close),
      ),
    ).toBe(true);
    expect(simulateDailyBars(options)).toEqual(bars);
    expect(simulateDailyBars({ ...options, symbol: 'ABC' })).not.toEqual(bars);
  });

  it('has a sample preset over 2019-2020 with SPY, SPX/SPXW and AAPL', () => {
    const sample = sampleOptions();
    expect({
      from: sample.from,
      to: sample.to,
      symbols: sample.underlyings.map((u) => `${u.symbol}:${u.style}:${u.series.kind}`),
      snapshots: sample.snapshots,
      minuteBars: sample.minuteBars,
    }).toEqual({
      from: '2019-01-02',
      to: '2020-12-31',
      symbols: ['SPY:etf:lean', 'SPX:index:derived', 'AAPL:stock:lean'],
      snapshots: ['15:45', 'eod'],
      minuteBars: true,
    });
  });
});
