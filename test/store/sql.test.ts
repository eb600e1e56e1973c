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

  it('memoizes derived values a few at a time, forgets failures, and clears on any write', async () => {
    let calls = 0;
    const compute = (value: number) => async () => {
      calls++;
      return value;
    };
    expect(await sql.memoize('a', compute(1))).toBe(1);
    expect(await sql.memoize('a', compute(2))).toBe(1);
    expect(calls).toBe(1);
    await expect(sql.memoize('bad', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await sql.memoize('bad', compute(3))).toBe(3);
    for (const key of ['b', 'c', 'd', 'e']) await sql.memoize(key, compute(0));
    expect(await sql.memoize('a', compute(4))).toBe(4); // the least recently used went out
    await sql.run('SELECT 1');
    expect(await sql.memoize('a', compute(5))).toBe(5);
  });

  it('wraps a failing statement in a StoreError that carries the SQL', async () => {
    const error = await sql.run('SELECT * FROM no_such_table').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).sql).toBe('SELECT * FROM no_such_table');
  });
});
