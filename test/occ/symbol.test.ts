import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXED_MESSAGES, InvalidInputError } from '../../src/errors.js';
import {
  formatOccSymbol,
  isOccSymbol,
  OCC_SYMBOL_PATTERN,
  OCC_SYMBOL_SQL_REGEX,
  type OccSymbol,
  parseOccSymbol,
  tryParseOccSymbol,
} from '../../src/occ/index.js';
import { SqlSession } from '../../src/store/sql.js';

const VALID = [
  'AAPL230616C00150000',
  'SPXW240315P05100500',
  'AAPL1230728C00200000',
  'BRKB250117P00400000',
  'A160115C00020000',
  'ABCDEF991231P99999999',
  '1ABC000229C00000001',
  'AAPL240229P00032500',
];

const INVALID = [
  '',
  'AAPLGD',
  'QAAJX',
  '.AAPLGD',
  '.AAPL230616C00150000',
  'AAPL  230616C00150000',
  'AAPL 230616C00150000',
  ' AAPL230616C00150000',
  'AAPL230616C00150000 ',
  'aapl230616c00150000',
  'aapl230616C00150000',
  'AAPL230616c00150000',
  'AAPL230230C00150000',
  'AAPL231316C00150000',
  'AAPL230600C00150000',
  'AAPL230001C00150000',
  'AAPL230229C00150000',
  'AAPL230631C00150000',
  'AAPL230616C0015000',
  'AAPL230616C001500000',
  'AAPL230616C0015000A',
  'AAPL230616C00150.00',
  'AAPL230616X00150000',
  'AAPL230616CALL00150000',
  'AAPL230616C00150000X',
  'AAPL230616C00000000',
  'AAPL23616C00150000',
  'ABCDEFG230616C00150000',
  '123230616C00150000',
  '230616C00150000',
  'AAPL-230616C00150000',
  'BRK.B250117P00400000',
  'AAPL230616C00150000\n',
];

describe('parseOccSymbol', () => {
  it('reads root, 20YY expiration, side and the strike in dollars from valid symbols', () => {
    expect(VALID.map(parseOccSymbol)).toEqual([
      { root: 'AAPL', expirationDate: '2023-06-16', side: 'call', strike: 150 },
      { root: 'SPXW', expirationDate: '2024-03-15', side: 'put', strike: 5100.5 },
      { root: 'AAPL1', expirationDate: '2023-07-28', side: 'call', strike: 200 },
      { root: 'BRKB', expirationDate: '2025-01-17', side: 'put', strike: 400 },
      { root: 'A', expirationDate: '2016-01-15', side: 'call', strike: 20 },
      { root: 'ABCDEF', expirationDate: '2099-12-31', side: 'put', strike: 99999.999 },
      { root: '1ABC', expirationDate: '2000-02-29', side: 'call', strike: 0.001 },
      { root: 'AAPL', expirationDate: '2024-02-29', side: 'put', strike: 32.5 },
    ]);
    expect(VALID.map(isOccSymbol)).toEqual(VALID.map(() => true));
  });

  it('refuses legacy codes, padded OSI, lowercase, impossible dates, bad strikes and sides, junk', () => {
    expect(INVALID.filter(isOccSymbol)).toEqual([]);
    expect(INVALID.map(tryParseOccSymbol)).toEqual(INVALID.map(() => undefined));
    for (const text of INVALID) {
      expect(() => parseOccSymbol(text), text).toThrow(InvalidInputError);
    }
  });

  it('throws a domain error carrying the service fixed message, not an HTTP status', () => {
    const error = catchError(() => parseOccSymbol('AAPL230230C00150000'));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).code).toBe('invalid_input');
    expect((error as Error).message).toBe(FIXED_MESSAGES.invalidOptionSymbol);
    expect(error).not.toHaveProperty('status');
  });

  it('answers undefined, not a crash, for a value that is not a string', () => {
    expect(tryParseOccSymbol(undefined as unknown as string)).toBeUndefined();
    expect(isOccSymbol(150 as unknown as string)).toBe(false);
  });
});

describe('formatOccSymbol', () => {
  it('writes strikes as exact integer thousandths', () => {
    const at = (strike: number) =>
      formatOccSymbol({ root: 'AAPL', expirationDate: '2023-06-16', side: 'call', strike });
    expect([32.5, 0.5, 1234.567, 150, 0.001, 99999.999, 0.1 + 0.2, 4.35, 1.005].map(at)).toEqual([
      'AAPL230616C00032500',
      'AAPL230616C00000500',
      'AAPL230616C01234567',
      'AAPL230616C00150000',
      'AAPL230616C00000001',
      'AAPL230616C99999999',
      'AAPL230616C00000300',
      'AAPL230616C00004350',
      'AAPL230616C00001005',
    ]);
    expect(formatOccSymbol({ root: 'SPXW', expirationDate: '2000-02-29', side: 'put', strike: 5100.5 })).toBe(
      'SPXW000229P05100500',
    );
  });

  it('throws RangeError on parts that cannot be symbolised', () => {
    const base: OccSymbol = { root: 'AAPL', expirationDate: '2023-06-16', side: 'call', strike: 150 };
    const bad: Array<Partial<Record<keyof OccSymbol, unknown>>> = [
      { strike: 0 },
      { strike: -5 },
      { strike: 100000 },
      { strike: 0.0004 },
      { strike: 1.0005 },
      { strike: 32.5001 },
      { strike: Number.NaN },
      { strike: Number.POSITIVE_INFINITY },
      { root: 'aapl' },
      { root: 'ABCDEFG' },
      { root: '' },
      { root: '123' },
      { root: 'BRK.B' },
      { expirationDate: '2023-02-29' },
      { expirationDate: '2023-6-16' },
      { expirationDate: '1999-12-31' },
      { expirationDate: '2100-01-01' },
      { expirationDate: '20230616' },
      { side: 'C' },
    ];
    const messages = bad.map((change) => {
      const error = catchError(() => formatOccSymbol({ ...base, ...change } as OccSymbol));
      expect(error, JSON.stringify(change)).toBeInstanceOf(RangeError);
      return (error as Error).message;
    });
    expect(messages).toMatchInlineSnapshot(`
      [
        "OCC strike must be above 0, below 100000 and exact to 1/1000: 0",
        "OCC strike must be above 0, below 100000 and exact to 1/1000: -5",
        "OCC strike must be above 0, below 100000 and exact to 1/1000: 100000",
        "OCC strike must be above 0, below 100000 and exact to 1/1000: 0.0004",
        "OCC strike must be above 0, below 100000 and exact to 1/1000: 1.0005",
        "OCC strike must be above 0, below 100000 and exact to 1/1000: 32.5001",
        "OCC strike must be above 0, below 100000 and exact to 1/1000: NaN",
        "OCC strike must be above 0, below 100000 and exact to 1/1000: Infinity",
        "OCC root must be 1-6 uppercase letters and digits with a letter: aapl",
        "OCC root must be 1-6 uppercase letters and digits with a letter: ABCDEFG",
        "OCC root must be 1-6 uppercase letters and digits with a letter: ",
        "OCC root must be 1-6 uppercase letters and digits with a letter: 123",
        "OCC root must be 1-6 uppercase letters and digits with a letter: BRK.B",
        "OCC expiration must be a real YYYY-MM-DD date in 2000-2099: 2023-02-29",
        "OCC expiration must be a real YYYY-MM-DD date in 2000-2099: 2023-6-16",
        "OCC expiration must be a real YYYY-MM-DD date in 2000-2099: 1999-12-31",
        "OCC expiration must be a real YYYY-MM-DD date in 2000-2099: 2100-01-01",
        "OCC expiration must be a real YYYY-MM-DD date in 2000-2099: 20230616",
        "OCC side must be call or put: C",
      ]
    `);
  });
});

/** Valid parts drawn independently of the module, with the symbol spelled out by hand. */
const validSymbol = fc
  .record({
    root: fc.stringMatching(/^[A-Z0-9]{1,6}$/).filter((root) => /[A-Z]/.test(root)),
    year: fc.integer({ min: 2000, max: 2099 }),
    month: fc.integer({ min: 1, max: 12 }),
    dayPick: fc.integer({ min: 1, max: 31 }),
    side: fc.constantFrom('call' as const, 'put' as const),
    thousandths: fc.integer({ min: 1, max: 99_999_999 }),
  })
  .map(({ root, year, month, dayPick, side, thousandths }) => {
    const day = Math.min(dayPick, monthLength(year, month));
    const parts: OccSymbol = {
      root,
      expirationDate: `${year}-${pad(month, 2)}-${pad(day, 2)}`,
      side,
      strike: thousandths / 1000,
    };
    const text = `${root}${pad(year % 100, 2)}${pad(month, 2)}${pad(day, 2)}${side === 'call' ? 'C' : 'P'}${pad(thousandths, 8)}`;
    return { parts, text, rootLength: root.length };
  });

describe('OCC symbols, generated', () => {
  it('format∘parse and parse∘format are identities', () => {
    fc.assert(
      fc.property(validSymbol, ({ parts, text }) => {
        expect(parseOccSymbol(text)).toEqual(parts);
        expect(formatOccSymbol(parseOccSymbol(text))).toBe(text);
        expect(formatOccSymbol(parts)).toBe(text);
        expect(parseOccSymbol(formatOccSymbol(parts))).toEqual(parts);
      }),
    );
  });

  it('refuses a character replaced by one outside [A-Z0-9]', () => {
    const invalidChar = fc.constantFrom(...'abcpxz .-/$_%*\t\u00e9\u00c9\uff21');
    fc.assert(
      fc.property(validSymbol, fc.nat(), invalidChar, ({ text }, at, char) => {
        const i = at % text.length;
        expect(isOccSymbol(text.slice(0, i) + char + text.slice(i + 1))).toBe(false);
      }),
    );
  });

  it('refuses the side letter replaced by anything but C or P', () => {
    const notSide = fc.constantFrom(...'ABDXQZ0123456789cp ');
    fc.assert(
      fc.property(validSymbol, notSide, ({ text }, char) => {
        expect(isOccSymbol(`${text.slice(0, -9)}${char}${text.slice(-8)}`)).toBe(false);
      }),
    );
  });

  it('refuses a digit inserted into or deleted from the strike', () => {
    fc.assert(
      fc.property(validSymbol, fc.nat(), fc.integer({ min: 0, max: 9 }), ({ text }, at, digit) => {
        const i = text.length - 8 + (at % 9);
        expect(isOccSymbol(text.slice(0, i) + digit + text.slice(i))).toBe(false);
        const j = text.length - 8 + (at % 8);
        expect(isOccSymbol(text.slice(0, j) + text.slice(j + 1))).toBe(false);
      }),
    );
  });

  it('refuses a digit deleted from the date, or inserted into it after a 6-character root', () => {
    // A root may end in digits (AAPL1), so an inserted digit could be read as a longer root
    // (AAPL + 9 + 230616 is the valid root AAPL9); after a 6-character root that reading is impossible.
    const letterRoot = validSymbol.filter(({ parts }) => /^[A-Z]+$/.test(parts.root));
    fc.assert(
      fc.property(letterRoot, fc.nat(), ({ text }, at) => {
        const i = text.length - 15 + (at % 6);
        expect(isOccSymbol(text.slice(0, i) + text.slice(i + 1))).toBe(false);
      }),
    );
    const sixCharRoot = validSymbol.filter(({ rootLength }) => rootLength === 6);
    fc.assert(
      fc.property(sixCharRoot, fc.nat(), fc.integer({ min: 0, max: 9 }), ({ text }, at, digit) => {
        const i = text.length - 15 + (at % 7);
        expect(isOccSymbol(text.slice(0, i) + digit + text.slice(i))).toBe(false);
      }),
    );
  });

  it('refuses lowercase symbols', () => {
    fc.assert(
      fc.property(validSymbol, ({ text }) => {
        expect(isOccSymbol(text.toLowerCase())).toBe(false);
      }),
    );
  });

  it('refuses impossible dates', () => {
    const impossible = fc.oneof(
      fc.record({ month: fc.constantFrom(0, 13, 19, 20, 99), day: fc.integer({ min: 1, max: 28 }) }),
      fc.record({ month: fc.integer({ min: 1, max: 12 }), day: fc.constant(0) }),
      fc.record({ month: fc.integer({ min: 1, max: 12 }), day: fc.integer({ min: 29, max: 99 }) }),
    );
    fc.assert(
      fc.property(
        validSymbol,
        fc.integer({ min: 0, max: 99 }),
        impossible,
        ({ text }, yy, { month, day }) => {
          fc.pre(month < 1 || month > 12 || day < 1 || day > monthLength(2000 + yy, month));
          const date = `${pad(yy, 2)}${pad(month, 2)}${pad(day, 2)}`;
          expect(isOccSymbol(text.slice(0, -15) + date + text.slice(-9))).toBe(false);
        },
      ),
    );
  });
});

describe('OCC_SYMBOL_SQL_REGEX', () => {
  let sql: SqlSession;
  beforeAll(async () => {
    sql = await SqlSession.open();
  });
  afterAll(() => sql.close());

  it('matches in DuckDB exactly the shapes OCC_SYMBOL_PATTERN matches in JavaScript', async () => {
    // Impossible dates pass both: the patterns check shape only.
    const samples = [...VALID, ...INVALID, 'AAPL231345C00150000', '12345A230616C00150000'];
    const values = samples.map((_, i) => `($${2 * i + 2}::VARCHAR, $${2 * i + 3}::INTEGER)`).join(', ');
    const rows = await sql.all(
      `SELECT regexp_full_match(s, $1) AS m FROM (VALUES ${values}) AS t(s, i) ORDER BY i`,
      [OCC_SYMBOL_SQL_REGEX, ...samples.flatMap((sample, i) => [sample, i])],
    );
    const inDuckDb = rows.map((row) => row['m']);
    expect(inDuckDb).toEqual(samples.map((s) => OCC_SYMBOL_PATTERN.test(s)));
    expect(samples.filter((_, i) => inDuckDb[i])).toEqual([
      ...VALID,
      'AAPL230230C00150000',
      'AAPL231316C00150000',
      'AAPL230600C00150000',
      'AAPL230001C00150000',
      'AAPL230229C00150000',
      'AAPL230631C00150000',
      'AAPL230616C00000000',
      'AAPL231345C00150000',
      '12345A230616C00150000',
    ]);
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

function monthLength(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}
