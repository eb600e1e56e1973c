import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatorOptionsFrom } from '../../src/cli/generate.js';
import { UsageError } from '../../src/errors.js';
import {
  type GeneratorOptions,
  type GeneratorSummary,
  generateMarket,
  intradayOptions,
} from '../../src/ingest/generator/index.js';
import {
  etWallToSeconds,
  sessionCloseSeconds,
  sessionOpenSeconds,
  sessionsBetween,
} from '../../src/market-time/index.js';
import { parseOccSymbol } from '../../src/occ/index.js';
import { createStagingTableSql } from '../../src/store/schema.js';
import { SqlSession } from '../../src/store/sql.js';

async function generated(
  options: GeneratorOptions,
  threads?: number,
): Promise<{ sql: SqlSession; summary: GeneratorSummary }> {
  const sql = await SqlSession.open(threads === undefined ? {} : { threads });
  for (const table of ['option_quotes', 'open_interest', 'stock_bars', 'splits'] as const) {
    await sql.run(createStagingTableSql(table));
  }
  return { sql, summary: await generateMarket(sql, options) };
}

/**
 * A digest of each table's rows: their count and the sum of their 64-bit hashes, which any changed, added
 * or lost row changes. Not an md5 of the rows as text in key order: casting and sorting 400,000 minute
 * rows took over a second per table, most of this file's time.
 */
async function digest(sql: SqlSession): Promise<string[]> {
  return Promise.all(
    ['option_quotes', 'open_interest'].map((table) =>
      sql.value<string>(`SELECT count(*)::VARCHAR || ' ' || sum(hash(x))::VARCHAR FROM ${table} x`),
    ),
  );
}

/** The preset, cut to its first three sessions (2023-01-03..2023-01-05) to keep the test small. */
const SHORT: GeneratorOptions = { ...intradayOptions(), to: '2023-01-05' };

describe('the intraday preset (SPX/SPXW 0DTE, one-minute snapshots)', () => {
  let sql: SqlSession;
  let summary: GeneratorSummary;
  beforeAll(async () => {
    ({ sql, summary } = await generated(SHORT));
  });
  afterAll(() => sql.close());

  it('quotes each session at every minute from 09:31 to 15:59 ET and at 16:00 ET', async () => {
    const rows = await sql.all<{ d: string; q: number[] }>(
      'SELECT session_date::VARCHAR AS d, array_sort(list(DISTINCT epoch(quote_time)::INTEGER)) AS q FROM option_quotes GROUP BY 1 ORDER BY 1',
    );
    const sessions = sessionsBetween(SHORT.from, SHORT.to);
    expect(summary.sessions).toBe(3);
    expect(rows.map((r) => r.d)).toEqual(sessions);
    for (const { d, q } of rows) {
      const open = sessionOpenSeconds(d);
      const grid = Array.from({ length: 389 }, (_, k) => open + 60 * (k + 1));
      expect(q).toEqual([...grid, etWallToSeconds(d, '16:00')]);
    }
  });

  it('stamps volume at its own quote time, cumulative through the session and never above the end of day', async () => {
    const bad = await sql.all(
      `SELECT option_symbol, quote_time FROM option_quotes WHERE volume_time IS DISTINCT FROM quote_time
       UNION ALL
       SELECT option_symbol, quote_time FROM (
         SELECT option_symbol, quote_time, volume,
           lag(volume) OVER (PARTITION BY option_symbol, session_date ORDER BY quote_time) AS before
         FROM option_quotes) WHERE volume < before
       LIMIT 5`,
    );
    expect(bad).toEqual([]);
    // Volume does accumulate during a session (it is not the day's total from the first minute).
    const grows = await sql.value<number>(
      `SELECT count(*) FROM (SELECT option_symbol, session_date, min(volume) AS lo, max(volume) AS hi
       FROM option_quotes GROUP BY 1, 2) WHERE hi > lo`,
    );
    expect(Number(grows)).toBeGreaterThan(100);
  });

  it('moves the underlying within the session, the same for every contract at one minute', async () => {
    const rows = await sql.all<{ d: string; prices: number; minutes: number; spread: number }>(
      `SELECT session_date::VARCHAR AS d, count(DISTINCT underlying_price) AS prices,
         count(DISTINCT quote_time) AS minutes,
         max(n) AS spread
       FROM (SELECT session_date, quote_time, underlying_price,
               count(DISTINCT underlying_price) OVER (PARTITION BY quote_time) AS n FROM option_quotes)
       GROUP BY 1 ORDER BY 1`,
    );
    for (const row of rows) {
      expect(Number(row.spread)).toBe(1);
      expect(Number(row.prices)).toBeGreaterThan(100);
    }
  });

  it('lists an SPXW expiration every session and quotes it that day up to 16:00 ET (0DTE)', async () => {
    const rows = await sql.all<{ symbol: string; d: string; last: number }>(
      `SELECT option_symbol AS symbol, session_date::VARCHAR AS d, max(epoch(quote_time))::INTEGER AS last
       FROM option_quotes GROUP BY 1, 2`,
    );
    for (const date of sessionsBetween(SHORT.from, SHORT.to)) {
      const zeroDte = rows.filter((r) => {
        const occ = parseOccSymbol(r.symbol);
        return r.d === date && occ.root === 'SPXW' && occ.expirationDate === date;
      });
      expect(zeroDte.length, date).toBeGreaterThan(50);
      expect(new Set(zeroDte.map((r) => r.last))).toEqual(new Set([etWallToSeconds(date, '16:00')]));
    }
  });

  it('limits the minute snapshots to expirations within two days, and quotes later ones at 16:00 only', async () => {
    const far = await sql.all<{ symbol: string; q: number }>(
      `SELECT DISTINCT option_symbol AS symbol, epoch(quote_time)::INTEGER AS q FROM option_quotes
       WHERE session_date = DATE '2023-01-03'`,
    );
    const minutes = (expiration: string) =>
      new Set(far.filter((r) => parseOccSymbol(r.symbol).expirationDate === expiration).map((r) => r.q)).size;
    expect(minutes('2023-01-05')).toBe(390);
    expect(minutes('2023-01-06')).toBe(1);
  });

  it('gives the same rows whatever the thread count, and other rows for another seed', async () => {
    const one = await generated({ ...SHORT, to: '2023-01-04' }, 1);
    const two = await generated({ ...SHORT, to: '2023-01-04' }, 2);
    const other = await generated({ ...SHORT, to: '2023-01-04', seed: 1 });
    try {
      const first = await digest(one.sql);
      expect(await digest(two.sql)).toEqual(first);
      expect(one.summary).toEqual(two.summary);
      expect((await digest(other.sql))[0]).not.toBe(first[0]);
    } finally {
      for (const run of [one, two, other]) run.sql.close();
    }
  });
});

describe('the five-minute grid', () => {
  it('quotes 09:35..12:55 ET and the end of day on an early close (2023-11-24)', async () => {
    const { sql } = await generated({
      ...intradayOptions(),
      from: '2023-11-24',
      to: '2023-11-24',
      snapshots: ['5m', 'eod'],
    });
    try {
      const q = await sql.all<{ q: number }>(
        'SELECT DISTINCT epoch(quote_time)::INTEGER AS q FROM option_quotes ORDER BY 1',
      );
      const open = sessionOpenSeconds('2023-11-24');
      expect((sessionCloseSeconds('2023-11-24') - open) / 60).toBe(210);
      const grid = Array.from({ length: 41 }, (_, k) => open + 300 * (k + 1));
      expect(q.map((r) => r.q)).toEqual([...grid, etWallToSeconds('2023-11-24', '16:00')]);
    } finally {
      sql.close();
    }
  });

  it('refuses two grids at once', async () => {
    const sql = await SqlSession.open();
    try {
      await expect(generateMarket(sql, { ...SHORT, snapshots: ['1m', '5m'] })).rejects.toThrow(
        /choose one grid/,
      );
    } finally {
      sql.close();
    }
  });
});

describe('pitchain generate --preset', () => {
  it('builds the intraday preset, with flags over it, and names the presets it takes', () => {
    expect(generatorOptionsFrom({ preset: 'intraday', minuteBars: true })).toEqual(intradayOptions());
    expect(
      generatorOptionsFrom({ preset: 'intraday', snapshots: '5m,eod', minuteBars: true }).snapshots,
    ).toEqual(['5m', 'eod']);
    expect(() => generatorOptionsFrom({ preset: 'weekly', minuteBars: true })).toThrow(UsageError);
    expect(() => generatorOptionsFrom({ preset: 'weekly', minuteBars: true })).toThrow(/sample or intraday/);
    expect(() => generatorOptionsFrom({ snapshots: '1m,5m', minuteBars: true })).toThrow(/one grid/);
  });
});
