import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlSession } from '../../src/store/sql.js';
import { inlineParams } from '../../src/store/sql-text.js';

describe('inlineParams', () => {
  it('writes each named value in as a literal of the type the driver binds it as', () => {
    expect(
      inlineParams('SELECT $a, $b, $c, $d, $e, $f, $g', {
        a: 7,
        b: 2 ** 40,
        c: 0.5,
        d: 'x',
        e: true,
        f: null,
        g: 5n,
      }),
    ).toBe(
      "SELECT CAST(7 AS INTEGER), CAST(1099511627776 AS BIGINT), CAST('0.5' AS DOUBLE), CAST('x' AS VARCHAR), TRUE, NULL, CAST(5 AS HUGEINT)",
    );
    expect(inlineParams('SELECT $2 + $1', [1, 2])).toBe('SELECT CAST(2 AS INTEGER) + CAST(1 AS INTEGER)');
  });

  it('leaves strings, quoted names, comments and words holding a dollar as they are', () => {
    const sql = `SELECT '$a' AS "$a", 'it''s $a' -- $a\n, /* $a */ a$b, $a`;
    expect(inlineParams(sql, { a: 1 })).toBe(
      `SELECT '$a' AS "$a", 'it''s $a' -- $a\n, /* $a */ a$b, CAST(1 AS INTEGER)`,
    );
  });

  it('quotes a text value so that it cannot end its literal', () => {
    expect(inlineParams('SELECT $s', { s: "x' OR 1=1 --" })).toBe(`SELECT CAST('x'' OR 1=1 --' AS VARCHAR)`);
  });

  it('leaves the statement to the driver when it is not sure', () => {
    const cases: [string, Parameters<typeof inlineParams>[1]][] = [
      ['SELECT $a', undefined],
      ['SELECT ?', [1]],
      ['SELECT $a', {}], // a parameter without a value
      ['SELECT 1', { a: 1 }], // a value the statement does not name
      ['SELECT $constructor', {}], // not a value of the object's prototype
      ['SELECT $a', { a: 'nul\0byte' }],
      ['SELECT $a', { a: Number.NaN }],
      ['SELECT $a', { a: Number.POSITIVE_INFINITY }],
      ['SELECT $a', { a: 2 ** 60 }], // an integer past 2^53 is not exactly the number given
      ["SELECT E'\\'$a' , $a", { a: 1 }],
      ['SELECT $$ $a $$, $a', { a: 1 }],
      ['SELECT $tag$ $a $tag$, $a', { a: 1 }],
      ["SELECT 'unterminated $a", { a: 1 }],
      ['SELECT /* unterminated $a', { a: 1 }],
      ['SELECT $0', [1]],
    ];
    for (const [sql, params] of cases) expect(inlineParams(sql, params), sql).toBeUndefined();
  });
});

describe('a statement with parameters, run with its values written in', () => {
  let sql: SqlSession;
  beforeAll(async () => {
    sql = await SqlSession.open();
  });
  afterAll(() => sql.close());

  it('has the types the driver binds and reads every double back exactly', async () => {
    const doubles = [0.1, 1 / 3, 5e-324, 2.2250738585072014e-308, -2.5e-10, 123456.789, 4503599627370495.5];
    const text = `SELECT typeof($i) AS i, typeof($big) AS big, typeof($d) AS d, typeof($s) AS s,
      typeof($b) AS b, typeof($h) AS h, ${doubles.map((_, k) => `$d${k} AS d${k}`).join(', ')}`;
    const params = {
      i: -3,
      big: -(2 ** 33),
      d: 2.5,
      s: 'text',
      b: false,
      h: 1n,
      ...Object.fromEntries(doubles.map((value, k) => [`d${k}`, value])),
    };
    expect(inlineParams(text, params)).toBeDefined();
    const row = await sql.all(text, params);
    expect(row).toEqual([
      {
        i: 'INTEGER',
        big: 'BIGINT',
        d: 'DOUBLE',
        s: 'VARCHAR',
        b: 'BOOLEAN',
        h: 'HUGEINT',
        ...Object.fromEntries(doubles.map((value, k) => [`d${k}`, value])),
      },
    ]);
  });

  it('compares a text value with a date as a bound one does', async () => {
    expect(
      await sql.value(
        "SELECT count(*) FROM range(3) WHERE DATE '2024-01-02' + CAST(range AS INTEGER) >= CAST($d AS DATE)",
        {
          d: '2024-01-03',
        },
      ),
    ).toBe(2);
  });

  it('still runs a statement it leaves to the driver', async () => {
    expect(await sql.value('SELECT $a::VARCHAR', { a: 'nul\0byte' })).toBe('nul\0byte');
  });
});
