import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestError } from '../../src/errors.js';
import { stageFiles } from '../../src/ingest/ingest.js';
import { validateStaging } from '../../src/ingest/validate.js';
import { createStagingTableSql } from '../../src/store/schema.js';
import { SqlSession } from '../../src/store/sql.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/ingest/${name}`, import.meta.url));
const REJECTS = fixture('hod_l2_rejects.csv');

/** Every rejection kind, each on a known line (line 11 is blank and simply skipped). */
const EXPECTED_REJECTS = [
  [3, 'malformed row: expected 20 fields, found 21'],
  [4, 'wrong type: bid "abc" is not a number'],
  [5, 'invalid OCC symbol: SPXW180231C02700000'],
  [6, 'crossed quote: bid 1.25 > ask 1.20'],
  [7, 'not a session: 2018-01-15 (Dr. Martin Luther King Jr. Day)'],
  [8, 'expired contract: expiration 2018-01-31 precedes session 2018-02-01'],
  [9, 'missing value: quotedate'],
  [10, 'duplicate row: same contract and quote time as line 2'],
  [12, 'negative value: bid -0.05'],
  [14, 'expiration 02/28/2018 disagrees with OCC symbol SPXW180131C02730000'],
  [15, 'malformed row: expected 20 fields, found 4'],
  [16, 'wrong type: volume "1.5" is not a whole number'],
  [17, 'type put disagrees with OCC symbol SPXW180131C02760000'],
  [18, 'strike 2775 disagrees with OCC symbol SPXW180131C02770000'],
].map(([line, reason]) => ({ file: REJECTS, line, reason }));

describe('validation of staged option rows', () => {
  it('without skipInvalid, throws the first reject as an IngestError with file and line', async () => {
    const sql = await SqlSession.open();
    try {
      const error = await stageFiles(sql, [REJECTS], 'hod').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IngestError);
      expect(error).toMatchObject({
        file: REJECTS,
        line: 3,
        reason: 'malformed row: expected 20 fields, found 21',
      });
    } finally {
      sql.close();
    }
  });

  describe('with skipInvalid', () => {
    let sql: SqlSession;
    let result: Awaited<ReturnType<typeof stageFiles>>;
    beforeAll(async () => {
      sql = await SqlSession.open();
      result = await stageFiles(sql, [REJECTS], 'hod', { skipInvalid: true });
    });
    afterAll(() => sql.close());

    it('returns one reject per bad line, in line order, with short exact reasons', () => {
      expect(result.rejects).toEqual(EXPECTED_REJECTS);
      expect(result.files[0]).toMatchObject({ sourceRows: 16, rejected: 14 });
    });

    it('keeps only the good lines, in every table (a 0/0 quote is "no market", not crossed)', async () => {
      expect(await sql.columns('SELECT _line, bid, ask FROM option_quotes ORDER BY _line')).toEqual({
        names: ['_line', 'bid', 'ask'],
        columns: [
          [2, 13],
          [18, 0],
          [18.6, 0],
        ],
      });
      expect((await sql.columns('SELECT _line FROM open_interest ORDER BY _line')).columns[0]).toEqual([
        2, 13,
      ]);
      expect(result.rows).toMatchObject({ option_quotes: 2, open_interest: 2 });
    });
  });

  it('checks tables filled by any format: missing values, negative OI, bad symbols, format rejects', async () => {
    const sql = await SqlSession.open();
    try {
      await sql.run(createStagingTableSql('option_quotes', 'q'));
      await sql.run(createStagingTableSql('open_interest', 'oi'));
      await sql.run(createStagingTableSql('stock_bars', 'bars'));
      await sql.run(`INSERT INTO q (underlying, option_symbol, session_date, quote_time, bid, ask, _line) VALUES
        ('SPY', 'SPY240419C00500000', DATE '2024-03-15', TIMESTAMPTZ '2024-03-15 16:00:00-04', 1.00, 1.10, 2),
        ('SPY', 'SPY240419C00500000', DATE '2024-03-15', NULL, 1.00, 1.10, 3),
        (NULL, 'SPY240419C00505000', DATE '2024-03-15', TIMESTAMPTZ '2024-03-15 16:00:00-04', 1.00, 1.10, 4),
        ('SPY', 'SPY 240419C00505000', DATE '2024-03-15', TIMESTAMPTZ '2024-03-15 16:00:00-04', 1.00, 1.10, 5),
        ('SPY', 'SPY240419C00000000', DATE '2024-03-15', TIMESTAMPTZ '2024-03-15 16:00:00-04', 1.00, 1.10, 6),
        ('SPY', 'SPY240419C00510000', DATE '2024-03-16', NULL, 1.00, 1.10, 7)`);
      await sql.run(`INSERT INTO oi (underlying, option_symbol, settled_session, published_at, open_interest, _line) VALUES
        ('SPY', 'SPY240419C00500000', DATE '2024-03-14', TIMESTAMPTZ '2024-03-15 09:30:00-04', -5, 2),
        ('SPY', 'SPY240419C00500000', DATE '2024-03-14', TIMESTAMPTZ '2024-03-15 09:30:00-04', 5, 8),
        ('SPY', 'SPY240419C00500000', DATE '2024-03-16', TIMESTAMPTZ '2024-03-18 09:30:00-04', 5, 9)`);
      await sql.run(`INSERT INTO bars (symbol, _line, _reject) VALUES ('SPY', 10, 'negative volume -1')`);
      expect(
        await validateStaging(sql, 'f.csv', { option_quotes: 'q', open_interest: 'oi', stock_bars: 'bars' }),
      ).toEqual([
        { file: 'f.csv', line: 2, reason: 'negative value: open_interest -5' },
        { file: 'f.csv', line: 3, reason: 'missing value: quote_time' },
        { file: 'f.csv', line: 4, reason: 'missing value: underlying' },
        { file: 'f.csv', line: 5, reason: 'invalid OCC symbol: SPY 240419C00505000' },
        { file: 'f.csv', line: 6, reason: 'invalid OCC symbol: SPY240419C00000000' },
        { file: 'f.csv', line: 7, reason: 'not a session: 2024-03-16 (weekend)' },
        { file: 'f.csv', line: 9, reason: 'not a session: 2024-03-16 (weekend)' },
        { file: 'f.csv', line: 10, reason: 'negative volume -1' },
      ]);
    } finally {
      sql.close();
    }
  });
});
