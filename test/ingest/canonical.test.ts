import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  DateDay,
  DateMillisecond,
  Decimal,
  Dictionary,
  Float64,
  Int32,
  makeData,
  makeVector,
  Table,
  Timestamp,
  TimeUnit,
  tableFromIPC,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IngestError } from '../../src/errors.js';
import {
  arrowFormat,
  type CanonicalFormat,
  canonicalFormatOf,
  exportCanonical,
  parquetFormat,
  stageArrow,
  stageParquet,
} from '../../src/ingest/formats/canonical.js';
import { formatNamed } from '../../src/ingest/formats/index.js';
import { etWallToSeconds } from '../../src/market-time/index.js';
import { queryArrow } from '../../src/store/arrow.js';
import { createStagingTableSql, TABLES, type TableName } from '../../src/store/schema.js';
import { SqlSession } from '../../src/store/sql.js';

const at = etWallToSeconds;

/** Rows of every canonical table, column by column in schema order: nulls, negatives, DST-day instants. */
const SAMPLE: Record<TableName, unknown[][]> = {
  option_quotes: [
    ['SPY', 'SPX'],
    ['SPY240419P00500000', 'SPXW240315C05000000'],
    ['2024-03-15', '2024-03-11'],
    [at('2024-03-15', '16:00'), at('2024-03-11', '15:45')],
    [1.25, 0],
    [1.3, 0.05],
    [10, null],
    [12, null],
    [null, 0.05],
    [100, 0],
    [at('2024-03-15', '16:00'), at('2024-03-11', '16:00')],
    [509.83, 5117.9412],
    [0.123456, null],
    [-0.35, 0.000001],
    [0.01, null],
    [-0.104321, null],
    [0.2, null],
  ],
  open_interest: [['SPY'], ['SPY240419P00500000'], ['2024-03-14'], [at('2024-03-15', '09:30')], [12901]],
  contracts: [
    ['SPX'],
    ['SPX240315C05000000'],
    ['SPX'],
    ['2024-03-15'],
    [at('2024-03-15', '09:30')],
    ['call'],
    [5000],
    ['AM'],
    [true],
    [false],
    [false],
    [false],
    ['2023-01-20'],
  ],
  stock_bars: [
    ['SPY', 'SPY'],
    ['D', '1'],
    ['2024-03-08', '2024-03-11'],
    [at('2024-03-08', '00:00'), at('2024-03-11', '09:30')],
    [510.1, 508],
    [510.5, 508.4],
    [509.9, 507.8],
    [510.2, 508.3],
    [1200, 9_007_199_254],
  ],
  splits: [['AAPL'], ['2020-08-31'], [4]],
};

const TABLE_NAMES = Object.keys(TABLES) as TableName[];
const canonicalSql = (table: TableName, from: string = table) =>
  `SELECT ${TABLES[table].map((c) => `"${c.name}"`).join(', ')} FROM "${from}" ORDER BY ALL`;

describe('parquet and arrow', () => {
  let sql: SqlSession;
  let dir: string;
  beforeAll(async () => {
    sql = await SqlSession.open({ threads: 1 });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-canonical-'));
  });
  afterAll(async () => {
    sql.close();
    await fs.rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    for (const table of TABLE_NAMES) {
      for (const name of [table, `back_${table}`]) {
        await sql.run(`DROP TABLE IF EXISTS "${name}"`);
        await sql.run(createStagingTableSql(table, name));
      }
      await sql.append(table, SAMPLE[table]);
    }
  });
  const back = Object.fromEntries(TABLE_NAMES.map((t) => [t, `back_${t}`])) as Record<TableName, string>;
  const file = (name: string) => path.join(dir, name);

  it('are listed in the format registry and named by file extension', () => {
    expect([formatNamed('parquet'), formatNamed('arrow')]).toEqual([parquetFormat, arrowFormat]);
    expect(['a.parquet', 'b.arrow', 'c.feather', 'd.arrows', 'e.csv'].map(canonicalFormatOf)).toEqual([
      'parquet',
      'arrow',
      'arrow',
      'arrow',
      undefined,
    ]);
  });

  for (const format of ['parquet', 'arrow'] as CanonicalFormat[]) {
    it(`round-trip every canonical table through ${format} unchanged, inferring the table`, async () => {
      for (const table of TABLE_NAMES) {
        const target = file(`${table}.${format}`);
        expect(await exportCanonical(sql, canonicalSql(table), target, format)).toBe(
          SAMPLE[table][0]!.length,
        );
        const result = await (format === 'parquet' ? parquetFormat : arrowFormat).stage(sql, target, {
          tables: back,
        });
        expect(result).toEqual({ rows: SAMPLE[table][0]!.length, rejects: [] });
        expect(await sql.all(canonicalSql(table, back[table])), table).toEqual(
          await sql.all(canonicalSql(table)),
        );
        expect(await sql.all(`SELECT _line, _reject FROM "${back[table]}" ORDER BY _line`)).toEqual(
          SAMPLE[table][0]!.map((_, i) => ({ _line: i + 1, _reject: null })),
        );
      }
      expect(await fs.readdir(dir)).not.toContain(expect.stringContaining('partial'));
    });
  }

  it('writes Arrow with Date32, microsecond UTC timestamps and Decimal128 columns', async () => {
    await exportCanonical(sql, canonicalSql('stock_bars'), file('bars.arrow'), 'arrow');
    const table = tableFromIPC(await fs.readFile(file('bars.arrow')));
    expect(
      table.schema.fields.map(
        (f) =>
          `${f.name}: ${f.type instanceof Decimal ? `Decimal${f.type.bitWidth}(${f.type.precision},${f.type.scale})` : String(f.type)}`,
      ),
    ).toEqual([
      'symbol: Utf8',
      'resolution: Utf8',
      'session_date: Date32<DAY>',
      't: Timestamp<MICROSECOND, UTC>',
      'o: Decimal128(14,4)',
      'h: Decimal128(14,4)',
      'l: Decimal128(14,4)',
      'c: Decimal128(14,4)',
      'v: Int64',
    ]);
    expect(table.getChild('t')!.toArray()).toEqual(new BigInt64Array([1710163800000000n, 1709874000000000n]));
  });

  it('reads the Arrow stream format and other producers’ exact types (dictionary strings, Date64, ns timestamps)', async () => {
    const exported = await queryArrow(sql, canonicalSql('option_quotes'));
    await fs.writeFile(file('quotes.arrows'), tableToIPC(exported, 'stream'));
    await stageArrow(sql, file('quotes.arrows'));
    expect(await sql.value('SELECT count(*) FROM option_quotes')).toBe(4);

    const symbol = vectorFromArray(['AAPL', 'TSLA'], new Dictionary(new Utf8(), new Int32()));
    const exDate = makeVector(
      makeData({
        type: new DateMillisecond(),
        length: 2,
        data: new BigInt64Array([1598832000000n, 1598832000000n]),
      }),
    );
    const ratio = vectorFromArray([4, 5], new Float64());
    await fs.writeFile(
      file('splits.arrow'),
      tableToIPC(new Table({ symbol, ex_date: exDate, ratio }), 'file'),
    );
    await stageArrow(sql, file('splits.arrow'), { tables: back });
    expect(await sql.all('SELECT symbol, ex_date, ratio FROM back_splits ORDER BY symbol')).toEqual([
      { symbol: 'AAPL', ex_date: '2020-08-31', ratio: 4 },
      { symbol: 'TSLA', ex_date: '2020-08-31', ratio: 5 },
    ]);

    const published = makeVector(
      makeData({
        type: new Timestamp(TimeUnit.NANOSECOND, 'America/New_York'),
        length: 1,
        data: new BigInt64Array([1710509400123456789n]),
      }),
    );
    const oi = new Table({
      underlying: vectorFromArray(['SPY'], new Utf8()),
      option_symbol: vectorFromArray(['SPY240419P00500000'], new Utf8()),
      settled_session: vectorFromArray([new Date('2024-03-14T00:00:00Z')], new DateDay()),
      published_at: published,
      open_interest: vectorFromArray([12901n]),
    });
    await fs.writeFile(file('oi.arrow'), tableToIPC(oi, 'file'));
    await stageArrow(sql, file('oi.arrow'), { tables: back });
    expect(
      await sql.all(
        'SELECT settled_session, epoch_us(published_at) AS us, open_interest FROM back_open_interest',
      ),
    ).toEqual([{ settled_session: '2024-03-14', us: 1710509400123456, open_interest: 12901 }]);
  });

  it('checks imported bars and splits like any other source', async () => {
    const bars = (changes: string, where: string) =>
      `SELECT * EXCLUDE (_line, _reject) REPLACE (${changes}) FROM stock_bars WHERE resolution = '${where}'`;
    await exportCanonical(
      sql,
      [
        bars(`DATE '2024-03-09' AS session_date`, 'D'),
        bars(`CAST(o - 1 AS DECIMAL(14,4)) AS h`, '1'),
        bars(`t + INTERVAL 1 HOUR AS t`, 'D'),
        bars(`t + INTERVAL 15 HOUR AS t`, '1'),
        bars(`t + INTERVAL 1 SECOND AS t`, '1'),
        bars(`v - 10000 AS v`, 'D'),
        'SELECT * EXCLUDE (_line, _reject) FROM stock_bars',
      ].join(' UNION ALL '),
      file('bad.parquet'),
      'parquet',
    );
    await stageParquet(sql, file('bad.parquet'), { tables: back });
    expect(await sql.all('SELECT _line, _reject FROM back_stock_bars ORDER BY _line')).toEqual([
      { _line: 1, _reject: 'not a session: 2024-03-09 (weekend)' },
      { _line: 2, _reject: 'high 507 is below max(open, close) 508.3' },
      { _line: 3, _reject: 'daily bar t is not 00:00 ET of its session date' },
      { _line: 4, _reject: 'bar t is not on its session date (ET)' },
      { _line: 5, _reject: 'minute bar does not start on a whole minute' },
      { _line: 6, _reject: 'negative value: volume -8800' },
      { _line: 7, _reject: 'duplicate row: same symbol, resolution and t as line 1' },
      { _line: 8, _reject: 'duplicate row: same symbol, resolution and t as line 2' },
    ]);

    await exportCanonical(
      sql,
      `SELECT 'AAPL' AS symbol, DATE '2020-08-29' AS ex_date, 4.0::DOUBLE AS ratio
       UNION ALL SELECT 'AAPL', DATE '2020-09-01', 1.0
       UNION ALL SELECT 'AAPL', DATE '2020-08-31', 4.0
       UNION ALL SELECT 'AAPL', DATE '2020-08-31', 4.0`,
      file('splits.parquet'),
      'parquet',
    );
    await stageParquet(sql, file('splits.parquet'), { tables: back });
    expect(await sql.all('SELECT _line, _reject FROM back_splits ORDER BY _line')).toEqual([
      { _line: 1, _reject: 'not a session: ex-date 2020-08-29 (weekend)' },
      { _line: 2, _reject: 'bad split ratio 1.0' },
      { _line: 3, _reject: null },
      { _line: 4, _reject: 'duplicate row: same symbol and ex-date as line 3' },
    ]);
  });

  it('refuses files whose columns are not exactly a canonical table, naming what differs', async () => {
    const stage = (name: string, options = {}) =>
      stageParquet(sql, file(name), options).then(
        () => 'staged',
        (e: unknown) => (e instanceof IngestError ? e.reason.replace(dir, '<dir>') : String(e)),
      );
    await exportCanonical(
      sql,
      'SELECT symbol, resolution, session_date, t, o, h, l, c, v AS volume FROM stock_bars',
      file('renamed.parquet'),
      'parquet',
    );
    await exportCanonical(
      sql,
      'SELECT * EXCLUDE (_line, _reject) REPLACE (CAST(o AS DOUBLE) AS o, CAST(t AS TIMESTAMP) AS t) FROM stock_bars',
      file('retyped.parquet'),
      'parquet',
    );
    await exportCanonical(sql, canonicalSql('splits'), file('splits.parquet'), 'parquet');
    await fs.writeFile(file('text.parquet'), 'not parquet');
    expect([
      await stage('renamed.parquet'),
      await stage('retyped.parquet'),
      await stage('splits.parquet', { table: 'stock_bars' }),
      await stage('text.parquet'),
    ]).toMatchInlineSnapshot(`
      [
        "columns match no canonical table; closest is stock_bars: missing v; extra volume",
        "wrong types for stock_bars: column t is TIMESTAMP, expected TIMESTAMP WITH TIME ZONE; column o is DOUBLE, expected DECIMAL(14,4)",
        "columns do not match stock_bars: missing resolution, session_date, t, o, h, l, c, v; extra ex_date, ratio",
        "not a readable Parquet file: Invalid Input Error: File '<dir>/text.parquet' too small to be a Parquet file",
      ]
    `);
    expect(await stageParquet(sql, file('renamed.parquet'), { skipInvalid: true })).toEqual({
      rows: 0,
      rejects: [
        {
          file: file('renamed.parquet'),
          line: undefined,
          reason: 'columns match no canonical table; closest is stock_bars: missing v; extra volume',
        },
      ],
    });
    await fs.writeFile(file('text.arrow'), 'not arrow');
    await expect(stageArrow(sql, file('text.arrow'))).rejects.toThrow('not a readable Arrow IPC file');
    expect(await sql.value('SELECT count(*) FROM back_stock_bars')).toBe(0);
  });
});
