import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IngestError } from '../../src/errors.js';
import {
  CANDLE_PRESETS,
  candlesFormat,
  loadCandlesMapping,
  parseCandlesMapping,
  stageCandles,
  storedResolution,
} from '../../src/ingest/formats/candles.js';
import { formatNamed } from '../../src/ingest/formats/index.js';
import { stageFiles } from '../../src/ingest/ingest.js';
import { closureReason, etMidnightSeconds, etWallToSeconds } from '../../src/market-time/index.js';
import { createStagingTableSql } from '../../src/store/schema.js';
import { SqlSession } from '../../src/store/sql.js';
import { sharedPath, withData } from '../helpers/shared-data.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/bars/${name}`, import.meta.url));
const SPY_DAILY = sharedPath('data/stocks/lean_daily_spy_raw_19980102_20210331.csv');
const AAPL_DAILY = sharedPath('data/stocks/lean_daily_aapl_raw_19980102_20210331.csv');
const minuteKey = (day: string) => `data/stocks/lean_minute/${day}_spy_minute_trade.csv`;
const minuteFile = (day: string) => sharedPath(minuteKey(day));
const MINUTE_DAYS = ['20131004', '20131007', '20131008', '20131009', '20131010', '20131011'];
const minute = withData(MINUTE_DAYS.map(minuteKey));

const BAR_SQL = 'SELECT symbol, resolution, session_date, t, o, h, l, c, v FROM stock_bars';

describe('candles', () => {
  let sql: SqlSession;
  beforeAll(async () => {
    sql = await SqlSession.open({ threads: 1 });
  });
  afterAll(() => sql.close());
  const lines = async () => (await sql.columns('SELECT _line FROM stock_bars ORDER BY _line')).columns[0];
  beforeEach(async () => {
    await sql.run('DROP TABLE IF EXISTS stock_bars');
    await sql.run(createStagingTableSql('stock_bars'));
  });

  it('is listed in the format registry', () => {
    expect(formatNamed('candles')).toBe(candlesFormat);
  });

  it('stages every Lean SPY daily bar, unscaled, at 00:00 ET of its session', async () => {
    const result = await candlesFormat.stage(sql, SPY_DAILY, { mapping: 'lean' });
    // The file has 5,849 lines (its last line has no newline, so `wc -l` says 5,848).
    expect(result).toEqual({ rows: 5849, rejects: [] });
    expect(await sql.value('SELECT count(*) FROM stock_bars WHERE _reject IS NOT NULL')).toBe(0);
    expect(
      await sql.all(
        `${BAR_SQL} WHERE session_date IN ('1998-01-02', '2008-10-10', '2013-10-04', '2021-03-31') ORDER BY t`,
      ),
    ).toEqual([
      {
        symbol: 'SPY',
        resolution: 'D',
        session_date: '1998-01-02',
        t: 883717200,
        o: 97.31,
        h: 97.53,
        l: 96.53,
        c: 97.36,
        v: 2150000,
      },
      {
        symbol: 'SPY',
        resolution: 'D',
        session_date: '2008-10-10',
        t: 1223611200,
        o: 87.07,
        h: 93.93,
        l: 83.58,
        c: 90.45,
        v: 791887655,
      },
      {
        symbol: 'SPY',
        resolution: 'D',
        session_date: '2013-10-04',
        t: 1380859200,
        o: 167.74,
        h: 169.06,
        l: 167.53,
        c: 168.89,
        v: 84960871,
      },
      {
        symbol: 'SPY',
        resolution: 'D',
        session_date: '2021-03-31',
        t: 1617163200,
        o: 395.35,
        h: 398,
        l: 395.33,
        c: 396.33,
        v: 90673494,
      },
    ]);
    const { columns } = await sql.columns('SELECT session_date, t FROM stock_bars ORDER BY t');
    expect(columns[1]).toEqual((columns[0] as string[]).map(etMidnightSeconds));
    expect(
      await sql.value(
        'SELECT min(_line) = 1 AND max(_line) = 5849 AND count(DISTINCT _line) = 5849 FROM stock_bars',
      ),
    ).toBe(true);
  });

  it('keeps AAPL unadjusted across its 2014 split and takes the symbol from the file name or an option', async () => {
    await candlesFormat.stage(sql, AAPL_DAILY, {});
    expect(
      await sql.all(
        `SELECT symbol, session_date, o, c FROM stock_bars WHERE session_date IN ('2014-06-06', '2014-06-09') ORDER BY t`,
      ),
    ).toEqual([
      { symbol: 'AAPL', session_date: '2014-06-06', o: 650, c: 645.57 },
      { symbol: 'AAPL', session_date: '2014-06-09', o: 92.69, c: 93.7 },
    ]);
    await candlesFormat.stage(sql, AAPL_DAILY, { mapping: 'lean', symbol: 'aapl.old' } as never);
    expect(
      await sql.all('SELECT symbol, count(*) AS n FROM stock_bars GROUP BY symbol ORDER BY symbol'),
    ).toEqual([
      { symbol: 'AAPL', n: 5849 },
      { symbol: 'AAPL.OLD', n: 5849 },
    ]);
  });

  minute.it(
    'keeps every Lean minute bar, extended hours too; the regular-hours ones add up to the Lean daily bar',
    async () => {
      const result = await candlesFormat.stage(sql, minuteFile('20131004'), {});
      expect(result).toEqual({ rows: 711, rejects: [] });
      // 321 pre- and post-market bars beside the 390 of the regular session, for the endpoint's `extended`.
      expect(
        await sql.all(
          `SELECT symbol, resolution, session_date, count(*) AS n, min(t) AS first, max(t) AS last,
                count(*) FILTER (WHERE t >= to_timestamp($open) AND t < to_timestamp($close)) AS regular
         FROM stock_bars GROUP BY ALL`,
          { open: etWallToSeconds('2013-10-04', '09:30'), close: etWallToSeconds('2013-10-04', '16:00') },
        ),
      ).toEqual([
        {
          symbol: 'SPY',
          resolution: '1',
          session_date: '2013-10-04',
          n: 711,
          first: etWallToSeconds('2013-10-04', '04:06'),
          last: etWallToSeconds('2013-10-04', '19:59'),
          regular: 390,
        },
      ]);
      for (const day of MINUTE_DAYS.slice(1)) await candlesFormat.stage(sql, minuteFile(day), {});
      await candlesFormat.stage(sql, SPY_DAILY, {});
      const aggregate = await sql.all(
        `WITH m AS (
         SELECT b.session_date, arg_min(o, t) AS o, max(h) AS h, min(l) AS l, arg_max(c, t) AS c, sum(v) AS v
         FROM stock_bars b
         WHERE resolution = '1' AND timezone('America/New_York', t)::TIME >= TIME '09:30'
           AND timezone('America/New_York', t)::TIME < TIME '16:00'
         GROUP BY b.session_date)
       SELECT m.session_date, m.o = d.o AS open, m.c = d.c AS close, m.v = d.v AS volume, m.h - d.h AS high_diff, m.l - d.l AS low_diff
       FROM m JOIN stock_bars d ON d.resolution = 'D' AND d.session_date = m.session_date ORDER BY m.session_date`,
      );
      // Open, close and volume agree exactly every day; high and low too, except one cent on 2013-10-08's low.
      expect(aggregate).toEqual([
        { session_date: '2013-10-04', open: true, close: true, volume: true, high_diff: 0, low_diff: 0 },
        { session_date: '2013-10-07', open: true, close: true, volume: true, high_diff: 0, low_diff: 0 },
        { session_date: '2013-10-08', open: true, close: true, volume: true, high_diff: 0, low_diff: -0.01 },
        { session_date: '2013-10-09', open: true, close: true, volume: true, high_diff: 0, low_diff: 0 },
        { session_date: '2013-10-10', open: true, close: true, volume: true, high_diff: 0, low_diff: 0 },
        { session_date: '2013-10-11', open: true, close: true, volume: true, high_diff: 0, low_diff: 0 },
      ]);
    },
  );

  minute.it('keeps regular-hours minute bars only when the mapping says so', async () => {
    await candlesFormat.stage(sql, minuteFile('20131004'), {
      mapping: '{"preset": "lean-minute", "regularHoursOnly": true}',
    });
    expect(await sql.all('SELECT count(*) AS n, min(t) AS first, max(t) AS last FROM stock_bars')).toEqual([
      { n: 390, first: etWallToSeconds('2013-10-04', '09:30'), last: etWallToSeconds('2013-10-04', '15:59') },
    ]);
  });

  it('reads ISO times with offsets across the DST changes, with the symbol from a column', async () => {
    const mapping = await loadCandlesMapping(fixture('iso_minute.mapping.json'), fixture('iso_minute.csv'));
    expect(await stageCandles(sql, fixture('iso_minute.csv'), mapping)).toEqual({ rows: 6, rejects: [] });
    expect(await sql.all(`${BAR_SQL} ORDER BY _line`)).toEqual([
      {
        symbol: 'SPY',
        resolution: '1',
        session_date: '2024-03-08',
        t: etWallToSeconds('2024-03-08', '09:30'),
        o: 510.1,
        h: 510.5,
        l: 509.9,
        c: 510.2,
        v: 1200,
      },
      {
        symbol: 'SPY',
        resolution: '1',
        session_date: '2024-03-08',
        t: etWallToSeconds('2024-03-08', '15:59'),
        o: 511,
        h: 511.25,
        l: 510.75,
        c: 511.1,
        v: 3400,
      },
      {
        symbol: 'SPY',
        resolution: '1',
        session_date: '2024-03-11',
        t: etWallToSeconds('2024-03-11', '09:30'),
        o: 508,
        h: 508.4,
        l: 507.8,
        c: 508.3,
        v: 2100,
      },
      {
        symbol: 'SPY',
        resolution: '1',
        session_date: '2024-03-11',
        t: etWallToSeconds('2024-03-11', '09:31'),
        o: 508.3,
        h: 508.6,
        l: 508.2,
        c: 508.5,
        v: 900,
      },
      {
        symbol: 'QQQ',
        resolution: '1',
        session_date: '2024-11-04',
        t: etWallToSeconds('2024-11-04', '09:30'),
        o: 480,
        h: 480.1,
        l: 479.5,
        c: 479.9,
        v: 5000,
      },
      {
        symbol: 'QQQ',
        resolution: '1',
        session_date: '2024-11-04',
        t: etWallToSeconds('2024-11-04', '08:00'),
        o: 479,
        h: 479.2,
        l: 478.9,
        c: 479.1,
        v: 100,
      },
    ]);
    expect(await lines()).toEqual([2, 3, 4, 5, 6, 7]);
    await sql.run('DELETE FROM stock_bars');
    await stageCandles(sql, fixture('iso_minute.csv'), { ...mapping, regularHoursOnly: true });
    expect(await lines()).toEqual([2, 3, 4, 5, 6]);
  });

  it('reads epoch seconds with a fixed symbol; a daily bar stamped during the day belongs to that session', async () => {
    await candlesFormat.stage(sql, fixture('epoch_daily.csv'), {
      mapping: fixture('epoch_daily.mapping.json'),
    });
    expect(
      await sql.all(`SELECT symbol, session_date, t, o, c, v, _line, _reject FROM stock_bars ORDER BY t`),
    ).toEqual([
      {
        symbol: 'AAPL',
        session_date: '2019-09-24',
        t: 1569297600,
        o: 221.03,
        c: 217.68,
        v: 33463820,
        _line: 2,
        _reject: null,
      },
      {
        symbol: 'AAPL',
        session_date: '2019-09-25',
        t: 1569384000,
        o: 218.55,
        c: 221.03,
        v: 24018876,
        _line: 3,
        _reject: null,
      },
      {
        symbol: 'AAPL',
        session_date: '2019-09-26',
        t: 1569470400,
        o: 220,
        c: 219.89,
        v: 20730608,
        _line: 4,
        _reject: null,
      },
    ]);
  });

  it('rejects bad rows with their line and reason and stages the good ones', async () => {
    const result = await candlesFormat.stage(sql, fixture('bad_bars.csv'), {
      mapping: fixture('bad_bars.mapping.json'),
    });
    expect(result).toEqual({
      rows: 12,
      rejects: [
        { file: fixture('bad_bars.csv'), line: 10, reason: 'malformed row: expected 6 fields, found 4' },
      ],
    });
    expect(await sql.all('SELECT _line, session_date, _reject FROM stock_bars ORDER BY _line')).toEqual([
      { _line: 2, session_date: '2024-07-01', _reject: null },
      { _line: 3, session_date: '2024-07-02', _reject: 'wrong type: open "abc" is not a price' },
      { _line: 4, session_date: '2024-07-03', _reject: 'high 100.2 is below max(open, close) 100.5' },
      {
        _line: 6,
        session_date: '2024-07-04',
        _reject: `not a session: 2024-07-04 (${closureReason('2024-07-04')})`,
      },
      { _line: 7, session_date: '2024-07-05', _reject: 'low 100.1 is above min(open, close) 100' },
      { _line: 8, session_date: '2024-07-06', _reject: 'not a session: 2024-07-06 (weekend)' },
      { _line: 9, session_date: '2024-07-08', _reject: 'negative value: volume -5' },
      { _line: 11, session_date: '2024-07-10', _reject: 'wrong type: volume "10.5" is not a whole number' },
      {
        _line: 12,
        session_date: '2024-07-01',
        _reject: 'duplicate row: same symbol, resolution and t as line 2',
      },
      { _line: 13, session_date: '2024-07-11', _reject: 'missing value: volume' },
      { _line: 14, session_date: '2024-07-12', _reject: null },
    ]);
  });

  it('goes through the shared ingest: rejects reported in line order, good bars staged, options passed on', async () => {
    const file = fixture('bad_bars.csv');
    const result = await stageFiles(sql, [file], 'candles', {
      mapping: fixture('bad_bars.mapping.json'),
      symbol: 'ABC',
      skipInvalid: true,
    });
    expect(result.rejects.map((r) => `${r.line}: ${r.reason}`)).toEqual([
      '3: wrong type: open "abc" is not a price',
      '4: high 100.2 is below max(open, close) 100.5',
      `6: not a session: 2024-07-04 (${closureReason('2024-07-04')})`,
      '7: low 100.1 is above min(open, close) 100',
      '8: not a session: 2024-07-06 (weekend)',
      '9: negative value: volume -5',
      '10: malformed row: expected 6 fields, found 4',
      '11: wrong type: volume "10.5" is not a whole number',
      '12: duplicate row: same symbol, resolution and t as line 2',
      '13: missing value: volume',
    ]);
    expect(await sql.all('SELECT symbol, session_date, v FROM stock_bars ORDER BY t')).toEqual([
      { symbol: 'ABC', session_date: '2024-07-01', v: 1000 },
      { symbol: 'ABC', session_date: '2024-07-12', v: 700 },
    ]);
    await expect(
      stageFiles(sql, [file], 'candles', { mapping: fixture('bad_bars.mapping.json') }),
    ).rejects.toThrow(`${file}:3: wrong type: open "abc" is not a price`);
  });

  it('refuses a file the mapping does not fit, or reports it when skipping invalid input', async () => {
    const mapping = parseCandlesMapping({
      preset: 'lean',
      header: true,
      columns: { ...CANDLE_PRESETS.lean.columns, t: 'Datum' },
    });
    const error = await stageCandles(sql, fixture('bad_bars.csv'), mapping).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IngestError);
    expect((error as IngestError).message).toBe(
      `${fixture('bad_bars.csv')}:1: no column "Datum" (columns: date, open, high, low, close, volume)`,
    );
    expect(await stageCandles(sql, fixture('bad_bars.csv'), mapping, { skipInvalid: true })).toEqual({
      rows: 0,
      rejects: [
        {
          file: fixture('bad_bars.csv'),
          line: 1,
          reason: 'no column "Datum" (columns: date, open, high, low, close, volume)',
        },
      ],
    });
    const noSymbol = parseCandlesMapping({ preset: 'lean', symbolFromFileName: '^nothing_(x)' });
    await expect(stageCandles(sql, SPY_DAILY, noSymbol)).rejects.toThrow(
      'no symbol: give a symbol option, a symbol column or a file-name pattern',
    );
    await expect(
      candlesFormat.stage(sql, SPY_DAILY, { mapping: 'lean', resolution: '5' } as never),
    ).rejects.toThrow('resolution 5 is not stored (only D and 1)');
    expect(await sql.value('SELECT count(*) FROM stock_bars')).toBe(0);
  });

  it('validates mappings and picks Lean presets from file names', async () => {
    expect(() => parseCandlesMapping({ preset: 'yahoo' })).toThrow(
      'unknown preset "yahoo" (lean, lean-minute)',
    );
    expect(() =>
      parseCandlesMapping({
        columns: { t: 0, o: 1, h: 2, l: 3, c: 4 },
        time: 'unix',
        resolution: 'W',
        extra: 1,
      }),
    ).toThrowErrorMatchingInlineSnapshot(`
      [IngestError: mapping: invalid candles mapping: ✖ Unrecognized key: "extra"
      ✖ expected epoch-seconds, epoch-ms, iso, ms-since-midnight, spreadsheet or a strptime format
        → at time
      ✖ Invalid option: expected one of "1"|"D"
        → at resolution
      ✖ Invalid input
        → at columns.v]
    `);
    expect((await loadCandlesMapping(undefined, minuteFile('20131004'))).time).toBe('ms-since-midnight');
    expect((await loadCandlesMapping(undefined, SPY_DAILY)).priceScale).toBe(10_000);
    await expect(loadCandlesMapping(undefined, fixture('bad_bars.csv'))).rejects.toThrow(
      'candles needs a mapping',
    );
    expect([
      storedResolution('daily'),
      storedResolution('1D'),
      storedResolution('minutely'),
      storedResolution('5'),
    ]).toEqual(['D', 'D', '1', undefined]);
  });
});
