/**
 * QuantConnect Lean option universe files. The fixture is synthetic (Black–Scholes prices and Greeks of a
 * made-up SPY chain) in the layout of the universe files in Lean's repository (QuantConnect/Lean,
 * `Data/option/usa/universes/`, Apache-2.0): the header, the underlying's bar on line 2, and a contract
 * expiring the next day with Lean's placeholder IV of 0.0000001.
 */
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestError } from '../../src/errors.js';
import { formatNamed } from '../../src/ingest/formats/index.js';
import {
  leanOptionUniverseFormat,
  universeDateOf,
  universeSymbolOf,
} from '../../src/ingest/formats/lean-option-universe.js';
import { commitStaged, stageFiles } from '../../src/ingest/ingest.js';
import { openStore } from '../../src/library/store.js';
import { SqlSession } from '../../src/store/sql.js';
import { WriteTransaction } from '../../src/store/writer.js';

const FILE = fileURLToPath(
  new URL('../fixtures/ingest/lean/option/usa/universes/spy/20240104.csv', import.meta.url),
);
/** An instant written with its offset, as epoch seconds (independent of the host zone). */
const at = (iso: string) => Date.parse(iso) / 1000;

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-lean-universe-'));
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

/** A copy of the fixture named `name` in the temp folder, its lines passed through `edit`. */
const copy = async (name: string, edit: (lines: string[]) => string[] = (lines) => lines) => {
  const file = path.join(dir, name);
  await fs.writeFile(file, edit(readFileSync(FILE, 'utf8').trimEnd().split('\n')).join('\n'));
  return file;
};

/** The error staging `file` throws (each on a session of its own). */
const refusal = async (file: string, options: { symbol?: string; greeksUnits?: string } = {}) => {
  const sql = await SqlSession.open();
  try {
    return await stageFiles(sql, [file], 'lean-option-universe', options).then(
      () => undefined,
      (error: unknown) => error,
    );
  } finally {
    sql.close();
  }
};

const staged = async <T>(
  file: string,
  options: { symbol?: string; greeksUnits?: string },
  then: (sql: SqlSession) => Promise<T>,
) => {
  const sql = await SqlSession.open();
  try {
    await stageFiles(sql, [file], 'lean-option-universe', options);
    return await then(sql);
  } finally {
    sql.close();
  }
};

describe('lean-option-universe', () => {
  it('is the registry entry lean-option-universe', () => {
    expect(formatNamed('lean-option-universe')).toBe(leanOptionUniverseFormat);
  });

  it('reads the session from the file name and the underlying from Lean’s folder', () => {
    expect(universeDateOf(FILE)).toBe('2024-01-04');
    expect(universeDateOf('/x/spy_20240230.csv')).toBeUndefined();
    expect(universeDateOf('/x/spxw-universe-20240105.csv')).toBe('2024-01-05');
    expect(universeSymbolOf(FILE)).toBe('SPY');
    expect(universeSymbolOf('/data/spy/20240104.csv')).toBeUndefined();
  });

  it('stages one quote per contract, none for the underlying’s bar, known 00:00 ET after the session', async () => {
    await staged(FILE, {}, async (sql) => {
      expect(await sql.value('SELECT count(*) FROM option_quotes')).toBe(21);
      expect(
        await sql.all(
          `SELECT * EXCLUDE (_reject) FROM option_quotes WHERE option_symbol = 'SPY240119C00470000'`,
        ),
      ).toEqual([
        {
          underlying: 'SPY',
          option_symbol: 'SPY240119C00470000',
          session_date: '2024-01-04',
          // Lean's EndTime of a universe row dated D: D + 1 day, 00:00 (ET)
          quote_time: at('2024-01-05T00:00:00-05:00'),
          bid: null,
          ask: null,
          bid_size: null,
          ask_size: null,
          last: null,
          volume: 185,
          volume_time: at('2024-01-05T00:00:00-05:00'),
          underlying_price: 470, // the close of line 2, the underlying's bar
          iv: 0.12,
          delta: 0.504852,
          gamma: 0.03489,
          theta: -0.152032,
          vega: 0.38008,
          _line: 8,
        },
      ]);
      // The next-day contract with Lean's placeholder IV keeps it (to six places: 0).
      expect(
        await sql.all(`SELECT iv, delta FROM option_quotes WHERE option_symbol = 'SPY240105C00400000'`),
      ).toEqual([{ iv: 0, delta: 1 }]);
    });
  });

  it('files open interest as settled the session before, published 09:30 ET of the session; an empty one not at all', async () => {
    await staged(FILE, {}, async (sql) => {
      expect(await sql.value('SELECT count(*) FROM open_interest')).toBe(18);
      expect(
        await sql.all(
          `SELECT settled_session, published_at, open_interest FROM open_interest WHERE option_symbol = 'SPY240119C00470000'`,
        ),
      ).toEqual([
        { settled_session: '2024-01-03', published_at: at('2024-01-04T09:30:00-05:00'), open_interest: 1565 },
      ]);
    });
  });

  it('takes the underlying from --symbol when the path does not name it, filing SPXW under SPX', async () => {
    const file = await copy('spxw_20240104.csv');
    expect(await refusal(file)).toEqual(
      new IngestError(
        file,
        undefined,
        'no underlying: give --symbol, or keep the file in Lean’s universes/<ticker>/ folder',
      ),
    );
    await staged(file, { symbol: 'spxw' }, async (sql) => {
      expect(
        await sql.all(`SELECT DISTINCT underlying, left(option_symbol, 4) AS root FROM option_quotes`),
      ).toEqual([{ underlying: 'SPX', root: 'SPXW' }]);
    });
  });

  it('refuses a file whose line 2 is not the underlying’s bar, and a contract row without its keys', async () => {
    const noUnderlying = await copy('20240104.csv', (lines) => [lines[0]!, ...lines.slice(2)]);
    expect(await refusal(noUnderlying, { symbol: 'SPY' })).toEqual(
      new IngestError(
        noUnderlying,
        2,
        'not the underlying’s bar: Lean universe files start with it (expiry, strike and right empty)',
      ),
    );
    const noRight = await copy('20240104.csv', (lines) =>
      lines.map((line, i) => (i === 5 ? line.replace(',C,', ',,') : line)),
    );
    expect(await refusal(noRight, { symbol: 'SPY' })).toEqual(
      new IngestError(noRight, 6, 'missing value: right'),
    );
  });

  it('takes the Greek units from the format under the default auto, even where none could be detected', async () => {
    // As on a split day (AAPL, 2014-06-09, 7:1): the underlying's bar is at the new price while the
    // strikes are the old ones, so no row is near the money to compare; deep in-the-money rows print 0.
    const split = await copy('20240104.csv', (lines) =>
      lines.map((line, i) => {
        if (i !== 1) return line;
        const cells = line.split(',');
        for (const c of [3, 4, 5, 6]) cells[c] = (Number(cells[c]) / 7).toFixed(4);
        return cells.join(',');
      }),
    );
    const greeks = (sql: SqlSession) =>
      sql.columns('SELECT option_symbol, iv, delta, gamma, theta, vega FROM option_quotes ORDER BY _line');
    const own = await staged(FILE, {}, greeks);
    expect(await staged(split, { symbol: 'SPY' }, greeks)).toEqual(own);
    // Detection, asked for by stating one column, finds nothing to compare on that file.
    expect(await refusal(split, { symbol: 'SPY', greeksUnits: 'iv=1' })).toBeInstanceOf(IngestError);
    const sql = await SqlSession.open();
    try {
      const spy: { symbol: string; greeksUnits?: string } = { symbol: 'SPY' };
      const result = await stageFiles(sql, [split], 'lean-option-universe', spy);
      expect(result.files[0]!.quality?.greeksUnits).toBe('store (the format)');
    } finally {
      sql.close();
    }
  });

  it('honours stated Greek units: theta per year and vega per 1.00 store the same values', async () => {
    const perYear = await copy('20240104.csv', (lines) =>
      lines.map((line, i) => {
        if (i < 2) return line;
        const cells = line.split(',');
        cells[12] = String(Number(cells[12]) * 100);
        cells[13] = String(Number(cells[13]) * 365);
        return cells.join(',');
      }),
    );
    const greeks = (sql: SqlSession) =>
      sql.columns('SELECT option_symbol, iv, delta, gamma, theta, vega FROM option_quotes ORDER BY _line');
    const own = await staged(FILE, {}, greeks);
    const yearly = await staged(perYear, { symbol: 'SPY', greeksUnits: 'per-year' }, greeks);
    expect(yearly.columns.slice(0, 4)).toEqual(own.columns.slice(0, 4));
    for (const column of [4, 5]) {
      const off = yearly.columns[column]!.map((v, i) =>
        Math.abs((v as number) - (own.columns[column]![i] as number)),
      );
      expect(Math.max(...off)).toBeLessThanOrEqual(1e-6);
    }
  });

  it('reads Lean’s symbol layout (symbol_id,symbol_value,…), with or without its header, to the same rows', async () => {
    // The fixture rewritten as Lean now writes universes: the OSI ticker (root padded to six) names each
    // contract and the underlying's row carries its ticker. Symbol ids are made up (they are not read).
    const [, underlying, ...contracts] = readFileSync(FILE, 'utf8').trimEnd().split('\n');
    const rows = [
      ['SPY X0000000001', 'SPY', ...underlying!.split(',').slice(3)].join(','),
      ...contracts.map((line, i) => {
        const [expiry, strike, right, ...rest] = line.split(',');
        const osi = `${'SPY'.padEnd(6)}${expiry!.slice(2)}${right}${String(Number(strike) * 1000).padStart(8, '0')}`;
        return [`SPY X${String(i + 2).padStart(10, '0')}`, osi, ...rest].join(',');
      }),
    ];
    const header =
      '#symbol_id,symbol_value,open,high,low,close,volume,open_interest,implied_volatility,delta,gamma,vega,theta,rho';
    const quotes = (sql: SqlSession) =>
      sql.columns('SELECT * EXCLUDE (_line, _reject) FROM option_quotes ORDER BY option_symbol');
    const oi = (sql: SqlSession) =>
      sql.columns('SELECT * EXCLUDE (_line, _reject) FROM open_interest ORDER BY option_symbol');
    const expected = await staged(FILE, {}, async (sql) => [await quotes(sql), await oi(sql)]);
    expect(expected.map((table) => table.columns[0]!.length)).toEqual([21, 18]);
    for (const lines of [[header, ...rows], rows]) {
      const file = await copy('20240104.csv', () => lines);
      // No --symbol and no Lean folder: the contracts name their root, the underlying's row its ticker.
      expect(await staged(file, {}, async (sql) => [await quotes(sql), await oi(sql)])).toEqual(expected);
    }
  });

  it('answers the chain without bid, ask, mid or last, once the file is known', async () => {
    const store = path.join(dir, 'store');
    const tx = await WriteTransaction.begin(store, { create: true });
    await commitStaged(tx, await stageFiles(tx.sql, [FILE], 'lean-option-universe'));
    const ask = async (now: string) => {
      const reader = await openStore(store, { now, threads: 1 });
      try {
        const res = await reader.request('/v1/options/chain/SPY/?strike=470&expiration=2024-01-19');
        return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown> };
      } finally {
        reader.close();
      }
    };
    // Not known at 20:00 ET on the session: Lean makes the file available at midnight.
    expect((await ask('2024-01-04T20:00:00-05:00')).status).toBe(404);
    const { status, body } = await ask('2024-01-05T10:00:00-05:00');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      optionSymbol: ['SPY240119C00470000', 'SPY240119P00470000'],
      updated: [at('2024-01-05T00:00:00-05:00'), at('2024-01-05T00:00:00-05:00')],
      bid: [null, null],
      ask: [null, null],
      mid: [null, null],
      last: [null, null],
      volume: [185, 222],
      openInterest: [1565, 1678],
      underlyingPrice: [470, 470],
      iv: [0.12, 0.13],
    });
  });
});
