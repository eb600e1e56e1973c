import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { SqlSession } from '../../src/store/sql.js';

describe('SqlSession', () => {
  let sql: SqlSession;
  beforeAll(async () => {
    sql = await SqlSession.open();
  });
  afterAll(() => sql.close());

  it('returns dates as YYYY-MM-DD, instants as epoch seconds, decimals and bigints as numbers', async () => {
    const rows = await sql.all(
      `SELECT DATE '2024-03-15' AS d, TIMESTAMPTZ '2024-03-15 16:00:00-04' AS ts, 1.25::DECIMAL(12,2) AS x,
              5::BIGINT AS b, $1::VARCHAR AS p, NULL AS n`,
      ['bound'],
    );
    expect(rows).toEqual([{ d: '2024-03-15', ts: 1710532800, x: 1.25, b: 5, p: 'bound', n: null }]);
  });

  it('appends columns by the table types and reads them back unchanged', async () => {
    await sql.run(
      'CREATE TABLE t (s VARCHAR, d DATE, ts TIMESTAMPTZ, x DECIMAL(12,2), i INTEGER, b BIGINT, f DOUBLE, ok BOOLEAN)',
    );
    await sql.append('t', [
      ['a', 'b'],
      ['2024-03-15', '2019-01-02'],
      [1710532800, 1546462800.5],
      [1.25, null],
      [7, 8],
      [9, 10],
      [0.5, 1.5],
      [true, false],
    ]);
    expect(await sql.columns('SELECT * FROM t ORDER BY s')).toEqual({
      names: ['s', 'd', 'ts', 'x', 'i', 'b', 'f', 'ok'],
      columns: [
        ['a', 'b'],
        ['2024-03-15', '2019-01-02'],
        [1710532800, 1546462800.5],
        [1.25, null],
        [7, 8],
        [9, 10],
        [0.5, 1.5],
        [true, false],
      ],
    });
  });

  it('counts the rows of several tables in the order asked, empty ones as 0', async () => {
    await sql.run(
      'CREATE TABLE rc_three AS SELECT * FROM range(3); CREATE TABLE rc_none (x INTEGER); CREATE TABLE "rc odd" AS SELECT 1',
    );
    expect(await sql.rowCounts(['rc_none', 'rc_three', 'rc odd'])).toEqual([0, 3, 1]);
    expect(await sql.rowCounts([])).toEqual([]);
  });

  it('reads numeric columns whole while other statements run on the same connection', async () => {
    // Several requests share one connection: a statement started between the chunks of another's result
    // must not cut that result short (a read-ahead block once came back empty that way).
    const numbers = (n: number) => sql.doubleColumns(`SELECT CAST(i AS DOUBLE) AS i FROM range(${n}) t(i)`);
    const [big, answer, other] = await Promise.all([
      numbers(300_000),
      sql.value('SELECT 42'),
      numbers(200_000),
    ]);
    expect([big.columns[0]!.length, answer, other.columns[0]!.length]).toEqual([300_000, 42, 200_000]);
    expect([big.columns[0]![299_999], other.columns[0]![199_999]]).toEqual([299_999, 199_999]);
  });

  it('reads DOUBLE NULLs as NaN wherever they fall in a validity word, over several chunks', async () => {
    // The mask is read a 32-bit word at a time: NULLs scattered, a run across words, whole valid words.
    const isNull = (i: number) => i % 37 === 5 || (i >= 2040 && i < 2110) || i === 4095 || i === 4096;
    const { columns } = await sql.doubleColumns(
      `SELECT CASE WHEN i % 37 = 5 OR i BETWEEN 2040 AND 2109 OR i IN (4095, 4096) THEN NULL
                   ELSE CAST(i AS DOUBLE) END
       FROM range(6000) t(i)`,
    );
    const values = columns[0]!;
    expect(values).toHaveLength(6000);
    const wrong = Array.from(values, (_value, i) => i).filter((i) =>
      isNull(i) ? !Number.isNaN(values[i]) : values[i] !== i,
    );
    expect(wrong).toEqual([]);
  });

  it('reads INTEGER columns into the same Float64Arrays, extremes exact and NULLs as NaN', async () => {
    const { columns } = await sql.doubleColumns(
      `SELECT CASE WHEN i % 11 = 3 THEN NULL WHEN i = 1 THEN -2147483648 WHEN i = 2 THEN 2147483647
                   ELSE CAST(i - 3000 AS INTEGER) END,
              CAST(i AS DOUBLE) / 4
       FROM range(5000) t(i)`,
    );
    const [integers, doubles] = columns as [Float64Array, Float64Array];
    const expected = (i: number) =>
      i % 11 === 3 ? Number.NaN : i === 1 ? -2147483648 : i === 2 ? 2147483647 : i - 3000;
    const wrong = Array.from(integers, (_value, i) => i).filter(
      (i) => !Object.is(integers[i], expected(i)) || doubles[i] !== i / 4,
    );
    expect(wrong).toEqual([]);
  });

  it('reads DECIMAL(9, s) digits into the doubles DuckDB casts them to, NULLs as NaN', async () => {
    for (const scale of [2, 4, 6]) {
      const digits = `CAST(i * 7919 - 990000000 AS BIGINT)`;
      const { columns } = await sql.typedColumns(
        `SELECT CASE WHEN i % 13 = 4 THEN NULL ELSE CAST(${digits} / ${10 ** scale}::DECIMAL(18,${scale}) AS DECIMAL(9,${scale})) END,
                CASE WHEN i % 13 = 4 THEN NULL ELSE CAST(CAST(${digits} / ${10 ** scale}::DECIMAL(18,${scale}) AS DECIMAL(12,${scale})) AS DOUBLE) END
         FROM range(250000) t(i)`,
      );
      const [read, cast] = columns as [Float64Array, Float64Array];
      const wrong = Array.from(read, (_value, i) => i).filter((i) => !Object.is(read[i], cast[i]));
      expect(wrong, `scale ${scale}`).toEqual([]);
      expect(Number.isNaN(read[4]!)).toBe(true);
    }
  });

  it('hands over every chunk of results read at once on one session, each whole and in order', async () => {
    // Results of 20 to 59 chunks (2,048 rows each), copied while the next statement runs on the same
    // connection: a result cut short or chunks crossed between results would show as a wrong or missing
    // value (a streamed result, for one, ends when the connection runs another statement).
    const statement = (k: number) =>
      `SELECT CAST(i * ${k} AS DOUBLE), CASE WHEN i % 5 = 0 THEN NULL ELSE CAST(i AS INTEGER) END,
              CAST(i / ${k} AS DECIMAL(9, 2))
       FROM range(${40_000 * k}) t(i)`;
    const results = await Promise.all([1, 2, 3].map((k) => sql.typedColumns(statement(k))));
    for (const [at, { columns }] of results.entries()) {
      const k = at + 1;
      const [scaled, integers, decimals] = columns as [Float64Array, Float64Array, Float64Array];
      expect(scaled).toHaveLength(40_000 * k);
      const wrong = Array.from(scaled, (_value, i) => i).filter(
        (i) =>
          scaled[i] !== i * k ||
          !Object.is(integers[i], i % 5 === 0 ? Number.NaN : i) ||
          decimals[i] !== Math.round((i / k) * 100) / 100,
      );
      expect(wrong, `statement ${k}`).toEqual([]);
    }
  });

  it('refuses a column of another type, naming it', async () => {
    await expect(sql.typedColumns('SELECT CAST(1 AS BIGINT) AS wide')).rejects.toThrow(
      /column wide is not DOUBLE, INTEGER or VARCHAR/,
    );
  });

  it('wraps a failing statement in a StoreError that carries the SQL', async () => {
    const error = await sql.run('SELECT * FROM no_such_table').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).sql).toBe('SELECT * FROM no_such_table');
  });
});

describe('SqlSession bulk appends and extra connections', () => {
  it('appends a data chunk at a time (typed arrays, nulls, dates) and refuses a value a column cannot take', async () => {
    const sql = await SqlSession.open();
    try {
      await sql.run('CREATE TABLE t (i INTEGER, d DOUBLE, s VARCHAR, b BOOLEAN, n BIGINT, day DATE)');
      const rows = 5000;
      const ints = Int32Array.from({ length: rows }, (_, i) => i - 7);
      await sql.append('t', [
        ints,
        Float64Array.from(ints, (i) => i / 4),
        Array.from(ints, (i) => (i % 3 === 0 ? null : `s${i}`)),
        Array.from(ints, (i) => i % 2 === 0),
        Array.from(ints, (i) => i * 1_000_003),
        Array.from(ints, (i) => (i === 4000 ? undefined : '2020-02-28')),
      ]);
      expect(
        await sql.all(
          `SELECT count(*) AS rows, sum(i) AS i, sum(d) AS d, count(s) AS s, count(*) FILTER (b) AS b, sum(n) AS n,
            count(day) AS days, max(day)::VARCHAR AS day FROM t`,
        ),
      ).toEqual([
        {
          rows,
          i: 12_462_500,
          d: 12_462_500 / 4,
          s: rows - 1667,
          b: 2500,
          n: 12_462_500 * 1_000_003,
          days: rows - 1,
          day: '2020-02-28',
        },
      ]);
      await sql.run('CREATE TABLE u (x INTEGER[])');
      await expect(sql.append('u', [[1.5]])).rejects.toThrow(/^append to u failed: /);
      expect(await sql.value('SELECT count(*) FROM u')).toBe(0);
    } finally {
      sql.close();
    }
  });

  it('reads VARCHAR columns whole: short and long, empty, NULL, non-ASCII, over several chunks', async () => {
    // Texts of up to 12 bytes are cut from the vector's bytes here, longer or non-ASCII ones come from the
    // driver: every kind, on both sides of 12 bytes, NULL between them, past DuckDB's 2048-row chunks.
    const sql = await SqlSession.open();
    const { columns } = await sql.typedColumns(
      `SELECT CASE i % 7
                WHEN 0 THEN NULL
                WHEN 1 THEN ''
                WHEN 2 THEN 'SPY'
                WHEN 3 THEN 'ABCDEFGHIJKL'
                WHEN 4 THEN 'SPY190215P00240000#' || i
                WHEN 5 THEN 'é' || i
                ELSE 'x' || i
              END,
              CAST(i AS DOUBLE)
       FROM range(5000) t(i)`,
    );
    sql.close();
    const texts = columns[0] as (string | null)[];
    const expected = (i: number) =>
      [null, '', 'SPY', 'ABCDEFGHIJKL', `SPY190215P00240000#${i}`, `é${i}`, `x${i}`][i % 7];
    expect(texts).toHaveLength(5000);
    expect(texts.every((text, i) => text === expected(i))).toBe(true);
    expect(Array.from(columns[1] as Float64Array).every((value, i) => value === i)).toBe(true);
  });

  it('opens a second connection to the same database that closes without closing the database', async () => {
    const sql = await SqlSession.open();
    try {
      const other = await sql.connect();
      await other.run("ATTACH ':memory:' AS shared; CREATE TABLE shared.main.x AS SELECT 42 AS v");
      other.close();
      expect(await sql.value('SELECT v FROM shared.main.x')).toBe(42);
    } finally {
      sql.close();
    }
  });
});

describe('closing a SqlSession', () => {
  /** A statement that runs for a long time (seconds) unless interrupted. */
  const LONG = 'SELECT sum(i) FROM range(20000000000) t(i)';
  /** The promise's outcome, or 'pending' if it has not settled within `ms`. */
  const settledWithin = (promise: Promise<unknown>, ms: number) =>
    Promise.race([
      promise.then(
        () => 'resolved',
        (error: unknown) => (error instanceof StoreError ? 'StoreError' : 'other error'),
      ),
      new Promise((resolve) => setTimeout(() => resolve('pending'), ms)),
    ]);

  it('interrupts a running statement, which then fails, and closes the database after it', async () => {
    const sql = await SqlSession.open();
    const running = sql.value(LONG);
    await new Promise((resolve) => setTimeout(resolve, 50));
    sql.close();
    // Closed under the statement, DuckDB never answered it (and the process never exited).
    expect(await settledWithin(running, 20_000)).toBe('StoreError');
    await expect(sql.value('SELECT 1')).rejects.toThrow(/the store is closed/);
  });

  it('fails every statement asked before close and still waiting, one after another', async () => {
    const sql = await SqlSession.open();
    const first = sql.value(LONG);
    const second = sql.value(LONG);
    await new Promise((resolve) => setTimeout(resolve, 50));
    sql.close();
    expect(await settledWithin(Promise.allSettled([first, second]), 20_000)).toBe('resolved');
    expect(await settledWithin(first, 0)).toBe('StoreError');
    expect(await settledWithin(second, 0)).toBe('StoreError');
  });
});
