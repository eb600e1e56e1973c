import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { candlesFormat } from '../../src/ingest/formats/candles.js';
import { formatNamed } from '../../src/ingest/formats/index.js';
import { leanFactorsFormat, splitRatio, stageLeanFactors } from '../../src/ingest/formats/splits.js';
import { createStagingTableSql } from '../../src/store/schema.js';
import { SqlSession } from '../../src/store/sql.js';
import { sharedPath, withData } from '../helpers/shared-data.js';

const AAPL_FACTORS = sharedPath('data/stocks/lean_factor_file_aapl.csv');
const SPY_FACTORS = 'data/stocks/lean_factor_file_spy.csv';
const factors = withData(['data/stocks/lean_factor_file_aapl.csv']);

describe('lean-factors', () => {
  let sql: SqlSession;
  beforeAll(async () => {
    sql = await SqlSession.open({ threads: 1 });
  });
  afterAll(() => sql.close());
  beforeEach(async () => {
    for (const table of ['splits', 'stock_bars'] as const) {
      await sql.run(`DROP TABLE IF EXISTS ${table}`);
      await sql.run(createStagingTableSql(table));
    }
  });

  factors.it(
    'finds AAPL splits on the first session after the factor row where the split factor changes',
    async () => {
      expect(formatNamed('lean-factors')).toBe(leanFactorsFormat);
      expect(await leanFactorsFormat.stage(sql, AAPL_FACTORS, {})).toEqual({ rows: 41, rejects: [] });
      expect(await sql.all('SELECT * FROM splits ORDER BY ex_date')).toEqual([
        { symbol: 'AAPL', ex_date: '2000-06-21', ratio: 2, _line: 2, _reject: null },
        { symbol: 'AAPL', ex_date: '2005-02-28', ratio: 2, _line: 3, _reject: null },
        { symbol: 'AAPL', ex_date: '2014-06-09', ratio: 7, _line: 12, _reject: null },
        { symbol: 'AAPL', ex_date: '2020-08-31', ratio: 4, _line: 38, _reject: null },
      ]);
    },
  );

  factors.it(
    'agrees with the raw daily bars: the price drops by the ratio overnight into the ex-date, not a day off',
    async () => {
      await stageLeanFactors(sql, AAPL_FACTORS);
      await candlesFormat.stage(sql, sharedPath('data/stocks/lean_daily_aapl_raw_19980102_20210331.csv'), {});
      // Previous close over open, on the session before the ex-date, on the ex-date, and on the session after.
      const gaps = await sql.all(
        `WITH b AS (SELECT session_date, round(lag(c) OVER (ORDER BY t) / o, 2) AS gap FROM stock_bars),
            g AS (SELECT session_date, lag(gap) OVER (ORDER BY session_date) AS before, gap,
                         lead(gap) OVER (ORDER BY session_date) AS after FROM b)
       SELECT s.ex_date, s.ratio, g.before, g.gap, g.after
       FROM splits s JOIN g ON g.session_date = s.ex_date ORDER BY s.ex_date`,
      );
      expect(gaps).toEqual([
        { ex_date: '2000-06-21', ratio: 2, before: 0.98, gap: 2, after: 0.99 },
        { ex_date: '2005-02-28', ratio: 2, before: 0.99, gap: 1.99, after: 1 },
        { ex_date: '2014-06-09', ratio: 7, before: 1, gap: 6.96, after: 0.99 },
        { ex_date: '2020-08-31', ratio: 4, before: 0.99, gap: 3.91, after: 0.97 },
      ]);
      // The factor row's reference price is the close of its own date: the last pre-split session.
      expect(
        await sql.all(
          `SELECT session_date, c FROM stock_bars WHERE session_date IN ('2014-06-06', '2020-08-28') ORDER BY t`,
        ),
      ).toEqual([
        { session_date: '2014-06-06', c: 645.57 },
        { session_date: '2020-08-28', c: 499.23 },
      ]);
    },
  );

  withData(['data/stocks/lean_factor_file_aapl.csv', SPY_FACTORS]).it(
    'finds no split in SPY, and takes the symbol from an option',
    async () => {
      expect(await stageLeanFactors(sql, sharedPath(SPY_FACTORS))).toEqual({
        rows: 96,
        rejects: [],
      });
      expect(await sql.value('SELECT count(*) FROM splits')).toBe(0);
      await stageLeanFactors(sql, AAPL_FACTORS, { symbol: 'aapl.x' });
      expect(await sql.value('SELECT DISTINCT symbol FROM splits')).toBe('AAPL.X');
    },
  );

  it('rejects rows it cannot read, with their lines', async () => {
    const file = fileURLToPath(new URL('../fixtures/bars/bad_factors.csv', import.meta.url));
    await stageLeanFactors(sql, file, { symbol: 'XYZ' });
    expect(await sql.all('SELECT ex_date, ratio, _line, _reject FROM splits ORDER BY _line')).toEqual([
      { ex_date: '2010-01-05', ratio: 2, _line: 1, _reject: null },
      { ex_date: null, ratio: null, _line: 2, _reject: 'bad date "2010013"' },
      {
        ex_date: null,
        ratio: null,
        _line: 4,
        _reject: "date 2010-04-01 is not after the previous row's 2010-06-01",
      },
      { ex_date: null, ratio: null, _line: 5, _reject: 'bad split factor "abc"' },
    ]);
  });

  it('reads a ratio from rounded factors as the simplest fraction near it', () => {
    expect(
      [
        7.000005,
        1.500004,
        0.1000003,
        0.0357143 / 0.0357143,
        0.25 / 0.0357143,
        1 / 3 + 1e-7,
        1.23456789,
        0.01000003,
      ].map(splitRatio),
    ).toEqual([7, 1.5, 0.1, 1, 7, 1 / 3, 1.23457, 0.01]);
  });
});
