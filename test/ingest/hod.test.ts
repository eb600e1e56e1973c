import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestError } from '../../src/errors.js';
import { hodFormat } from '../../src/ingest/formats/hod.js';
import { formatNamed } from '../../src/ingest/formats/index.js';
import { stageFiles } from '../../src/ingest/ingest.js';
import { type SqlParams, SqlSession } from '../../src/store/sql.js';
import { sharedPath, withData } from '../helpers/shared-data.js';

const SPXW_FILE = 'data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv';
const SPXW = sharedPath(SPXW_FILE);
const spxw = withData([SPXW_FILE]);
const L3 = sharedPath('data/options/hod_L3_A_2016-01-05.csv');
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/ingest/${name}`, import.meta.url));
/** An instant written with its offset, as epoch seconds (independent of the host zone). */
const at = (iso: string) => Date.parse(iso) / 1000;

/** Notes each read of a file on `sql` from now on: 'typed' (the clean read) or 'careful'. */
function noteReads(sql: SqlSession): string[] {
  const reads: string[] = [];
  const run = sql.run.bind(sql);
  sql.run = (text: string, params?: SqlParams) => {
    if (text.includes('read_csv(')) reads.push(text.includes("'DECIMAL(12,2)'") ? 'typed' : 'careful');
    return run(text, params);
  };
  return reads;
}

spxw.describe('hod (HistoricalOptionData L2)', () => {
  let sql: SqlSession;
  beforeAll(async () => {
    sql = await SqlSession.open();
    await stageFiles(sql, [SPXW], 'hod');
  });
  afterAll(() => sql.close());

  it('is the registry entry hod', () => {
    expect(formatNamed('hod')).toBe(hodFormat);
  });

  it('stages every row of the SPXW file once, with OI for each', async () => {
    expect(
      await sql.all(`SELECT (SELECT count(*) FROM option_quotes) AS quotes, (SELECT count(*) FROM open_interest) AS oi,
                            (SELECT count(DISTINCT session_date) FROM option_quotes) AS sessions`),
    ).toEqual([{ quotes: 14438, oi: 14438, sessions: 40 }]);
  });

  it('numbers each row with its line in the file (header = line 1, BOM and CRLF handled)', async () => {
    const lines = readFileSync(SPXW, 'utf8').split(/\r?\n/);
    const expected = lines.slice(1).map((line) => line.split(',')[3]);
    const { columns } = await sql.columns('SELECT option_symbol FROM option_quotes ORDER BY _line');
    expect(columns[0]).toEqual(expected);
    const { columns: numbers } = await sql.columns('SELECT _line FROM option_quotes ORDER BY _line');
    expect(numbers[0]).toEqual(expected.map((_, i) => i + 2));
  });

  it('reads one contract on 2018-01-02 into every canonical column', async () => {
    const rows = await sql.all(
      `SELECT * EXCLUDE (_reject) FROM option_quotes WHERE option_symbol = 'SPXW180131C02700000' AND session_date = DATE '2018-01-02'`,
    );
    expect(rows).toEqual([
      {
        underlying: 'SPX',
        option_symbol: 'SPXW180131C02700000',
        session_date: '2018-01-02',
        quote_time: at('2018-01-02T16:00:00-05:00'),
        bid: 18,
        ask: 18.6,
        bid_size: null,
        ask_size: null,
        last: 18.4,
        volume: 108,
        volume_time: at('2018-01-02T16:00:00-05:00'),
        underlying_price: 2695.79,
        iv: 0.0634,
        delta: 0.4913,
        gamma: 0.0084,
        theta: -0.382199, // -139.5025 per year
        vega: 2.995682, // 299.5682 per 1.00 of volatility
        _line: 127,
      },
    ]);
  });

  it('files the OI printed on the row dated D under the previous session, published 09:30 ET of D', async () => {
    const rows = await sql.all(
      `SELECT settled_session, published_at, open_interest, _line FROM open_interest
       WHERE option_symbol = 'SPXW180131C02700000' AND _line IN (127, 457, 3209) ORDER BY _line`,
    );
    expect(rows).toEqual([
      {
        settled_session: '2017-12-29',
        published_at: at('2018-01-02T09:30:00-05:00'),
        open_interest: 5879,
        _line: 127,
      },
      {
        settled_session: '2018-01-02',
        published_at: at('2018-01-03T09:30:00-05:00'),
        open_interest: 5888,
        _line: 457,
      },
      // 2018-01-16 follows the Martin Luther King Jr. Day closure: the previous session is the Friday.
      {
        settled_session: '2018-01-12',
        published_at: at('2018-01-16T09:30:00-05:00'),
        open_interest: 6901,
        _line: 3209,
      },
    ]);
  });

  it('stores last 0 with no volume as no trade, and keeps 0/0 quotes', async () => {
    expect(
      await sql.all(
        `SELECT count(*) FILTER (WHERE last = 0) AS zero_last, count(*) FILTER (WHERE last IS NULL) > 0 AS no_trade,
                count(*) FILTER (WHERE bid = 0 AND ask = 0) > 0 AS no_market
         FROM option_quotes`,
      ),
    ).toEqual([{ zero_last: 0, no_trade: true, no_market: true }]);
  });
});

describe('hod (HistoricalOptionData L3)', () => {
  let sql: SqlSession;
  beforeAll(async () => {
    sql = await SqlSession.open();
    await stageFiles(sql, [L3], 'hod');
  });
  afterAll(() => sql.close());

  it('stages 208 quotes and two OI figures per row: OpenInterest (D−1) and T1OpenInterest (D)', async () => {
    expect(
      await sql.all(
        `SELECT (SELECT count(*) FROM option_quotes) AS quotes, (SELECT count(*) FROM open_interest) AS oi`,
      ),
    ).toEqual([{ quotes: 208, oi: 416 }]);
    expect(
      await sql.all(
        `SELECT underlying, settled_session, published_at, open_interest, _line FROM open_interest
         WHERE option_symbol = 'A160115P00040000' ORDER BY settled_session`,
      ),
    ).toEqual([
      {
        underlying: 'A',
        settled_session: '2016-01-04',
        published_at: at('2016-01-05T09:30:00-05:00'),
        open_interest: 12901,
        _line: 19,
      },
      {
        underlying: 'A',
        settled_session: '2016-01-05',
        published_at: at('2016-01-06T09:30:00-05:00'),
        open_interest: 13090,
        _line: 19,
      },
    ]);
  });

  it('takes IVMean as the IV and the L3 quote columns', async () => {
    expect(
      await sql.all(
        `SELECT underlying, quote_time, bid, ask, last, volume, underlying_price, iv, delta, gamma, theta, vega
         FROM option_quotes WHERE option_symbol = 'A160115P00040000'`,
      ),
    ).toEqual([
      {
        underlying: 'A',
        quote_time: at('2016-01-05T16:00:00-05:00'),
        bid: 0.48,
        ask: 0.6,
        last: 0.52,
        volume: 200,
        underlying_price: 40.55,
        iv: 0.3053,
        delta: -0.3805,
        gamma: 0.1924,
        theta: -0.0404,
        vega: 0.0247,
      },
    ]);
  });
});

describe('hod quirks', () => {
  it('lets the OCC symbol win over a Saturday expiration (Friday, or Thursday before Good Friday)', async () => {
    const sql = await SqlSession.open();
    try {
      // Made-up Greeks, in the store's units, on too few rows to detect them by.
      const result = await stageFiles(sql, [fixture('hod_l2_saturday.csv')], 'hod', {
        skipInvalid: true,
        greeksUnits: 'store',
      });
      expect(result.rejects).toEqual([
        {
          file: fixture('hod_l2_saturday.csv'),
          line: 4,
          reason: 'expiration 01/26/2013 disagrees with OCC symbol SPY130118C00150000',
        },
      ]);
      expect(
        await sql.columns('SELECT _line, option_symbol, last, iv, delta FROM option_quotes ORDER BY _line'),
      ).toEqual({
        names: ['_line', 'option_symbol', 'last', 'iv', 'delta'],
        columns: [
          [2, 3, 5],
          ['SPY130118C00145000', 'SPY140417P00180000', 'SPY130118C00155000'],
          // last 0 without volume is no trade; an IV or delta beyond DECIMAL(10,6) is dropped, not rejected
          [2.1, 1.1, null],
          [0.14, 0.14, null],
          [0.6, -0.3, null],
        ],
      });
    } finally {
      sql.close();
    }
  });

  it('reads a clean file in one typed pass, and its twin that needs repairs the careful way, to the same rows', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-hod-'));
    const lines = readFileSync(fixture('hod_l2_saturday.csv'), 'utf8').split('\n');
    // Saturday expirations that agree with the symbol, a blank line, no final newline.
    const clean = [lines[0], lines[1], lines[2], '', lines[4]].join('\n');
    const repairs = clean
      .replace('SPY,146.06,*,SPY130118C00145000,,call', ' spy ,146.06,*,spy130118c00145000 ,,Call')
      .replace(',1500,120000,', ',1500.0,1.2e5,');
    const staged = async (name: string, text: string) => {
      const file = path.join(dir, name);
      await fs.writeFile(file, text);
      const sql = await SqlSession.open();
      try {
        const reads = noteReads(sql);
        const result = await stageFiles(sql, [file], 'hod', { greeksUnits: 'store' });
        return {
          reads,
          result: { rejects: result.rejects, rows: result.rows, uniqueKeys: result.uniqueKeys },
          quotes: await sql.columns('SELECT * FROM option_quotes ORDER BY _line'),
          openInterest: await sql.columns('SELECT * FROM open_interest ORDER BY _line'),
        };
      } finally {
        sql.close();
      }
    };
    try {
      const fast = await staged('clean.csv', clean);
      const careful = await staged('repairs.csv', repairs);
      expect(fast.reads).toEqual(['typed']);
      expect(careful.reads).toEqual(['typed', 'careful']);
      expect(careful.result).toEqual(fast.result);
      expect(careful.quotes).toEqual(fast.quotes);
      expect(careful.openInterest).toEqual(fast.openInterest);
      expect(fast.quotes.columns[fast.quotes.names.indexOf('_line')]).toEqual([2, 3, 5]);
      expect(fast.result).toEqual({
        rejects: [],
        rows: { option_quotes: 3, open_interest: 3, contracts: 0, stock_bars: 0, splits: 0 },
        uniqueKeys: ['option_quotes', 'open_interest'],
      });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a file that is not HistoricalOptionData', async () => {
    const sql = await SqlSession.open();
    try {
      await expect(stageFiles(sql, [fixture('mapped_chain.csv')], 'hod')).rejects.toThrow(
        new IngestError(
          fixture('mapped_chain.csv'),
          1,
          'not a HistoricalOptionData header (no optionroot/OptionSymbol)',
        ),
      );
    } finally {
      sql.close();
    }
  });
});

spxw.describe('hod on several threads (16 MiB of input or more)', () => {
  const COPIES = ['SPXW', 'ZZA', 'ZZB', 'ZZC', 'ZZD', 'ZZE', 'ZZF', 'ZZG', 'ZZH'];
  let dir: string;
  let big: string;
  let lines: string[];
  beforeAll(async () => {
    // The SPXW file nine times over, each copy under a root of its own (the first keeps SPXW → SPX).
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-hod-big-'));
    const [header, ...rows] = readFileSync(SPXW, 'utf8').split('\r\n');
    const data = rows.filter((row) => row !== '');
    lines = [header!];
    for (const root of COPIES) {
      for (const row of data) {
        const cells = row.split(',');
        for (const i of [0, 3, 19]) cells[i] = cells[i]!.replace('SPXW', root);
        lines.push(cells.join(','));
      }
    }
    big = path.join(dir, 'big.csv');
    await fs.writeFile(big, `${lines.join('\r\n')}\r\n`);
    expect((await fs.stat(big)).size).toBeGreaterThanOrEqual(16 * 2 ** 20);
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  /** Runs `then` on a fresh session that notes each read of a file: the typed one, then the careful one if needed. */
  const staged = async <T>(then: (sql: SqlSession, reads: string[]) => Promise<T>) => {
    const sql = await SqlSession.open();
    try {
      return await then(sql, noteReads(sql));
    } finally {
      sql.close();
    }
  };
  const spx = (sql: SqlSession) =>
    Promise.all([
      sql.columns(
        `SELECT * EXCLUDE (_line, _reject) FROM option_quotes WHERE underlying = 'SPX' ORDER BY option_symbol, session_date`,
      ),
      sql.columns(
        `SELECT * EXCLUDE (_line, _reject) FROM open_interest WHERE underlying = 'SPX' ORDER BY option_symbol, settled_session`,
      ),
    ]);

  it('reads a clean file in one unordered typed pass, stamped as it reads: the rows of the ordered read, without lines', async () => {
    const ordered = await staged(async (sql) => {
      await stageFiles(sql, [SPXW], 'hod');
      return spx(sql);
    });
    await staged(async (sql, reads) => {
      const result = await stageFiles(sql, [big], 'hod');
      expect(reads).toEqual(['typed']);
      expect(Number(await sql.value("SELECT current_setting('threads')"))).toBeGreaterThan(1);
      expect(result.rejects).toEqual([]);
      expect(result.rows.option_quotes).toBe(14438 * COPIES.length);
      expect(result.files[0]!.underlyings).toEqual([
        'SPX',
        'ZZA',
        'ZZB',
        'ZZC',
        'ZZD',
        'ZZE',
        'ZZF',
        'ZZG',
        'ZZH',
      ]);
      expect(await spx(sql)).toEqual(ordered);
      // Line numbers are the careful read's: this read leaves them out, and restores DuckDB's settings.
      expect(
        await sql.all(
          `SELECT (SELECT count(*) FROM option_quotes WHERE _line IS NOT NULL) AS quote_lines,
                  (SELECT count(*) FROM open_interest WHERE _line IS NOT NULL) AS oi_lines,
                  current_setting('preserve_insertion_order') AS ordered, current_setting('disabled_optimizers') AS disabled`,
        ),
      ).toEqual([{ quote_lines: 0, oi_lines: 0, ordered: true, disabled: '' }]);
    });
  });

  it('names the line of a row validation refuses all the same, from the careful read', async () => {
    // A crossed quote on line 100,000 of the file (its 99,999th data line), in a copy of another root.
    const crossed = lines.slice();
    const cells = crossed[99_999]!.split(',');
    cells[10] = String(Number(cells[11]) + 1);
    crossed[99_999] = cells.join(',');
    const file = path.join(dir, 'crossed.csv');
    await fs.writeFile(file, `${crossed.join('\r\n')}\r\n`);
    await staged(async (sql, reads) => {
      await expect(stageFiles(sql, [file], 'hod')).rejects.toThrow(
        new IngestError(
          file,
          100_000,
          `crossed quote: bid ${Number(cells[10]).toFixed(2)} > ask ${Number(cells[11]).toFixed(2)}`,
        ),
      );
      expect(reads).toEqual(['typed', 'careful']);
    });
  });

  it('with --skip-invalid, stages every other row of a file with a row off the calendar, and names its line', async () => {
    // Line 120,000 dated on a Saturday: the unordered read gives it no instants, so the careful read runs.
    const offCalendar = lines.slice();
    const cells = offCalendar[119_999]!.split(',');
    cells[7] = '01/06/2018';
    offCalendar[119_999] = cells.join(',');
    const file = path.join(dir, 'saturday.csv');
    await fs.writeFile(file, `${offCalendar.join('\r\n')}\r\n`);
    await staged(async (sql, reads) => {
      const result = await stageFiles(sql, [file], 'hod', { skipInvalid: true });
      expect(reads).toEqual(['typed', 'careful']);
      expect(result.rejects).toEqual([
        { file, line: 120_000, reason: 'not a session: 2018-01-06 (weekend)' },
      ]);
      expect(result.rows.option_quotes).toBe(14438 * COPIES.length - 1);
      expect(
        await sql.value(
          `SELECT count(*) FROM option_quotes WHERE _line IS NULL OR quote_time IS NULL OR session_date = DATE '2018-01-06'`,
        ),
      ).toBe(0);
    });
  });
});

spxw.describe('hod Greek units, established per file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-hod-units-'));
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  /** The SPXW file's first `sessions` sessions, with gamma, theta and vega rewritten by `rewrite`. */
  const variant = async (
    name: string,
    rewrite: (greeks: { gamma: number; theta: number; vega: number }) => string[],
    sessions = 3,
  ) => {
    const [header, ...rows] = readFileSync(SPXW, 'utf8').split('\r\n');
    const dates = [...new Set(rows.filter((r) => r !== '').map((r) => r.split(',')[7]))].slice(0, sessions);
    const lines = rows
      .filter((row) => dates.includes(row.split(',')[7]))
      .map((row) => {
        const cells = row.split(',');
        const [gamma, theta, vega] = [16, 17, 18].map((i) => Number(cells[i]));
        cells.splice(16, 3, ...rewrite({ gamma: gamma!, theta: theta!, vega: vega! }));
        return cells.join(',');
      });
    const file = path.join(dir, name);
    await fs.writeFile(file, `${[header, ...lines].join('\r\n')}\r\n`);
    return file;
  };
  const greeks = async (file: string, options: { greeksUnits?: string } = {}) => {
    const sql = await SqlSession.open();
    try {
      await stageFiles(sql, [file], 'hod', options);
      return await sql.columns(
        'SELECT option_symbol, session_date, iv, delta, gamma, theta, vega FROM option_quotes ORDER BY _line',
      );
    } finally {
      sql.close();
    }
  };

  it('stores a file printing gamma ×100 and theta per day ×100 as the SPXW file in its own units', async () => {
    // The SPXW sample prints gamma per $1, theta per year and vega per 1.00 of volatility; this vintage
    // prints gamma ×100, theta per day ×100, and vega per volatility point.
    const vintage = await variant('x100.csv', ({ gamma, theta, vega }) => [
      (gamma * 100).toFixed(4),
      ((theta / 365) * 100).toFixed(6),
      (vega / 100).toFixed(6),
    ]);
    const original = await variant('original.csv', ({ gamma, theta, vega }) => [
      String(gamma),
      String(theta),
      String(vega),
    ]);
    const [got, want] = [await greeks(vintage), await greeks(original)];
    expect(got.columns[0]).toHaveLength(990);
    expect(got.columns.slice(0, 4)).toEqual(want.columns.slice(0, 4));
    for (const column of [4, 5, 6]) {
      const off = got.columns[column]!.map((v, i) =>
        Math.abs((v as number) - (want.columns[column]![i] as number)),
      );
      expect(Math.max(...off)).toBeLessThanOrEqual(1e-6);
    }
    // The ATM call of the first test: 0.0084 per $1, −139.5025 / 365 per day, 299.5682 / 100 per point.
    const i = want.columns[0]!.findIndex(
      (s, n) => s === 'SPXW180131C02700000' && want.columns[1]![n] === '2018-01-02',
    );
    expect([4, 5, 6].map((c) => got.columns[c]![i])).toEqual([0.0084, -0.382199, 2.995682]);
  });

  it('takes the units stated with greeksUnits, and stores no vendor Greeks with none', async () => {
    const file = await variant('stated.csv', ({ gamma, theta, vega }) => [
      String(gamma),
      String(theta),
      String(vega),
    ]);
    // Stated wrongly on purpose: a statement is taken as it is.
    const stated = await greeks(file, { greeksUnits: 'iv=1,delta=1,gamma=1,theta=1,vega=1' });
    expect(stated.columns[5]).toContain(-139.5025);
    const none = await greeks(file, { greeksUnits: 'none' });
    expect(new Set(none.columns.slice(2).flat())).toEqual(new Set([null]));
  });

  it('refuses a file whose Greeks fit no known unit, naming the file and the columns', async () => {
    const file = await variant('tenfold.csv', ({ gamma, theta, vega }) => [
      String(gamma),
      ((theta / 365) * 10).toFixed(6),
      String(vega),
    ]);
    const error = await greeks(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IngestError);
    expect(error).toMatchObject({ file, line: undefined });
    expect((error as IngestError).reason).toMatch(
      /^cannot establish the units of theta \(theta: 9\.\d× Black–Scholes on \d+ near-money rows fits no known unit\); state them with --greeks-units/,
    );
    // Stating the one column it cannot establish is enough.
    expect((await greeks(file, { greeksUnits: 'theta=10' })).columns[5]).toContain(-0.382199);
  });

  it('refuses Greeks it has no near-money row to judge by, unless they are all empty or zero', async () => {
    // Deep in-the-money calls only: nothing to compare with Black–Scholes.
    const deep = (name: string, zero: boolean) =>
      variant(name, ({ gamma, theta, vega }) =>
        zero ? ['0', '0', '0'] : [String(gamma), String(theta), String(vega)],
      ).then(async (file) => {
        const [header, ...rows] = readFileSync(file, 'utf8').split('\r\n');
        const kept = rows.filter((r) => r.includes(',call,') && Number(r.split(',')[8]) <= 2000);
        await fs.writeFile(file, `${[header, ...kept].join('\r\n')}\r\n`);
        return file;
      });
    const printed = await deep('deep.csv', false);
    // Their gamma and vega print as 0, which any unit stores right; IV, delta and theta do not.
    await expect(greeks(printed)).rejects.toThrow(
      "cannot establish the units of iv, delta, theta (iv: no near-money rows to compare; delta: the IV's units are unknown; theta: the IV's units are unknown)",
    );
    const zero = await deep('deep-zero.csv', true);
    const zeroed = readFileSync(zero, 'utf8')
      .split('\r\n')
      .map((row, i) => (i === 0 || row === '' ? row : row.replace(/,[^,]*,[^,]*,0,0,0,/, ',,0,0,0,0,')));
    await fs.writeFile(zero, zeroed.join('\r\n'));
    const staged = await greeks(zero);
    expect(new Set(staged.columns[4])).toEqual(new Set([0]));
  });

  it('detects the units the real files print: SPXW L2 per year and per 1.00, A L3 in the store units', async () => {
    const sample = async (file: string) => {
      const [header, ...rows] = readFileSync(file, 'utf8')
        .replace(/^\uFEFF/, '')
        .split(/\r?\n/);
      const names = header!.split(',').map((n) => n.trim().toLowerCase());
      return { names, rows: rows.filter((r) => r !== '').map((r) => r.split(',')) };
    };
    // The stored values are the printed ones divided by what was detected.
    for (const [file, divisors] of [
      [SPXW, { gamma: 1, theta: 365, vega: 100 }],
      [L3, { gamma: 1, theta: 1, vega: 1 }],
    ] as const) {
      const { names, rows } = await sample(file);
      const staged = await greeks(file);
      for (const greek of ['gamma', 'theta', 'vega'] as const) {
        const printed = rows.map((r) => Number(r[names.indexOf(greek)]));
        const stored = staged.columns[['gamma', 'theta', 'vega'].indexOf(greek) + 4] as number[];
        const off = stored.map((v, i) => Math.abs(v - printed[i]! / divisors[greek]));
        expect(Math.max(...off), `${greek} of ${path.basename(file)}`).toBeLessThanOrEqual(5e-7);
      }
    }
  });
});
