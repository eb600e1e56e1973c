import { promises as fs } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IngestError } from '../../src/errors.js';
import {
  candlesTargetFromFileName,
  isCandlesBody,
  stageCandlesBody,
} from '../../src/ingest/formats/candles-json.js';
import { etWallToSeconds } from '../../src/market-time/index.js';
import { createStagingTableSql } from '../../src/store/schema.js';
import { SqlSession } from '../../src/store/sql.js';
import { sharedPath, withData } from '../helpers/shared-data.js';

const EXAMPLE = sharedPath('spec/examples/stocks_candles.json');

describe('candles response bodies', () => {
  let sql: SqlSession;
  beforeAll(async () => {
    sql = await SqlSession.open({ threads: 1 });
  });
  afterAll(() => sql.close());
  beforeEach(async () => {
    await sql.run('DROP TABLE IF EXISTS stock_bars');
    await sql.run(createStagingTableSql('stock_bars'));
  });

  withData(['spec/examples/stocks_candles.json']).it(
    'stages the documented daily body as AAPL daily bars',
    async () => {
      const body: unknown = JSON.parse(await fs.readFile(EXAMPLE, 'utf8'));
      expect(isCandlesBody(body)).toBe(true);
      expect(await stageCandlesBody(sql, body, { file: EXAMPLE, symbol: 'AAPL', resolution: 'D' })).toEqual({
        rows: 3,
        rejects: [],
      });
      expect(await sql.all('SELECT * FROM stock_bars ORDER BY _line')).toEqual([
        {
          symbol: 'AAPL',
          resolution: 'D',
          session_date: '2019-09-24',
          t: 1569297600,
          o: 221.03,
          h: 222.49,
          l: 217.19,
          c: 217.68,
          v: 33463820,
          _line: 1,
          _reject: null,
        },
        {
          symbol: 'AAPL',
          resolution: 'D',
          session_date: '2019-09-25',
          t: 1569384000,
          o: 218.55,
          h: 221.5,
          l: 217.1402,
          c: 221.03,
          v: 24018876,
          _line: 2,
          _reject: null,
        },
        {
          symbol: 'AAPL',
          resolution: 'D',
          session_date: '2019-09-26',
          t: 1569470400,
          o: 220,
          h: 220.94,
          l: 218.83,
          c: 219.89,
          v: 20730608,
          _line: 3,
          _reject: null,
        },
      ]);
    },
  );

  it('takes symbol and resolution from the file name, and reads ISO and spreadsheet times', async () => {
    const iso = {
      s: 'ok',
      t: ['2024-03-11T09:30:00-04:00', '2024-03-11T09:31:00-04:00'],
      o: [508, 508.3],
      h: [508.4, 508.6],
      l: [507.8, 508.2],
      c: [508.3, 508.5],
      v: [2100, 900],
    };
    await stageCandlesBody(sql, iso, { file: 'mirror/v1/stocks/candles/1/SPY/2024-03-11.json' });
    const serial = { ...iso, t: [45362.5625, 45362.563194444] };
    await stageCandlesBody(sql, serial, { file: 'saved/stocks_candles_minutely_qqq.json' });
    expect(await sql.all('SELECT symbol, resolution, t, _reject FROM stock_bars ORDER BY symbol, t')).toEqual(
      [
        { symbol: 'QQQ', resolution: '1', t: etWallToSeconds('2024-03-11', '13:30'), _reject: null },
        { symbol: 'QQQ', resolution: '1', t: etWallToSeconds('2024-03-11', '13:31'), _reject: null },
        { symbol: 'SPY', resolution: '1', t: etWallToSeconds('2024-03-11', '09:30'), _reject: null },
        { symbol: 'SPY', resolution: '1', t: etWallToSeconds('2024-03-11', '09:31'), _reject: null },
      ],
    );
    expect(
      [
        'mirror/v1/stocks/candles/D/AAPL/index.json',
        'stocks_candles_D_BRK.B.json',
        'candles-1-SPY-2024-01-02.json',
        'quotes_SPY.json',
      ].map(candlesTargetFromFileName),
    ).toEqual([
      { resolution: 'D', symbol: 'AAPL' },
      { resolution: 'D', symbol: 'BRK.B' },
      { resolution: '1', symbol: 'SPY' },
      undefined,
    ]);
  });

  it('rejects bad candles row by row and refuses bodies it cannot read', async () => {
    const body = {
      s: 'ok',
      t: [1569297600, 1569384000],
      o: [221, null],
      h: [220, 221],
      l: [217, 217],
      c: [218, 220],
      v: [1, 2],
    };
    expect(
      await stageCandlesBody(sql, body, { file: 'b.json', symbol: 'AAPL', resolution: 'daily' }),
    ).toEqual({
      rows: 2,
      rejects: [],
    });
    expect(await sql.all('SELECT _line, _reject FROM stock_bars ORDER BY _line')).toEqual([
      { _line: 1, _reject: 'high 220 is below max(open, close) 221' },
      { _line: 2, _reject: 'missing value: open' },
    ]);

    const options = { file: 'b.json', symbol: 'AAPL', resolution: 'D' };
    expect(await stageCandlesBody(sql, { s: 'no_data', nextTime: 1569297600 }, options)).toEqual({
      rows: 0,
      rejects: [],
    });
    const failures: string[] = [];
    for (const [b, o] of [
      [{ s: 'error', errmsg: 'Invalid token.' }, options],
      [{ ...body, c: [218] }, options],
      [{ ...body, v: undefined }, options],
      [body, { ...options, resolution: '5' }],
      [body, { file: 'b.json' }],
      [[1, 2], options],
    ] as const) {
      const error = await stageCandlesBody(sql, b, o).catch((e: unknown) => e);
      failures.push(error instanceof IngestError ? error.message : 'staged');
    }
    expect(failures).toEqual([
      'b.json: body status "error": Invalid token.',
      'b.json: arrays of different lengths: t has 2, c 1',
      'b.json: candles body without v',
      'b.json: resolution 5 is not stored (only D and 1)',
      'b.json: no symbol or resolution: give them as options or in the file name',
      'b.json: not a candles body: ✖ Invalid input: expected object, received array',
    ]);
    expect(await stageCandlesBody(sql, { s: 'error' }, { ...options, skipInvalid: true })).toEqual({
      rows: 0,
      rejects: [{ file: 'b.json', line: undefined, reason: 'body status "error"' }],
    });
    expect(isCandlesBody({ s: 'ok', optionSymbol: ['X'] })).toBe(false);
  });
});
