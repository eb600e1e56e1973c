import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import { formatOccSymbol, parseLookupText } from '../../src/occ/index.js';

const symbolOf = (text: string) => formatOccSymbol(parseLookupText(text));

describe('parseLookupText', () => {
  it('reads underlying, date, strike and side in the forms people and SDKs send', () => {
    const texts = [
      'AAPL 7/28/23 $200 Call',
      'AAPL 7/28/2023 200 call',
      'AAPL 07/28/2023 200.000 CALL',
      'AAPL 2027-12-17 250 put',
      'AAPL 2027-1-7 250 put',
      'SPXW 3/15/24 5100.5 P',
      'spxw 3/15/24 $5,100.5 p',
      '  AAPL   7/28/23\t$200  Calls ',
      'AAPL%207/28/2023%20200%20Call',
      'AAPL+7/28/23+%24200+Put',
      'aapl%207%2F28%2F23%20200%20c',
      'AAPL1 7/28/23 $1,234.567 Puts',
      'BRKB 1/17/25 .5 put',
      'A 2/29/24 $0.001 C',
      'A 2/29/2000 99,999.999 put',
      'X 12/31/99 32.5000 call',
    ];
    expect(texts.map(symbolOf)).toEqual([
      'AAPL230728C00200000',
      'AAPL230728C00200000',
      'AAPL230728C00200000',
      'AAPL271217P00250000',
      'AAPL270107P00250000',
      'SPXW240315P05100500',
      'SPXW240315P05100500',
      'AAPL230728C00200000',
      'AAPL230728C00200000',
      'AAPL230728P00200000',
      'AAPL230728C00200000',
      'AAPL1230728P01234567',
      'BRKB250117P00000500',
      'A240229C00000001',
      'A000229P99999999',
      'X991231C00032500',
    ]);
    expect(parseLookupText('SPXW 3/15/24 $5,100.5 Put')).toEqual({
      root: 'SPXW',
      expirationDate: '2024-03-15',
      side: 'put',
      strike: 5100.5,
    });
  });

  it('answers 400 naming the part that could not be read', () => {
    const texts = [
      '',
      '   ',
      'AAPL 7/28/23 200',
      'AAPL 7/28/23 $ 200 Call',
      'AAPL 7/28/23 200 Call extra',
      'AAPL230728C00200000',
      'BRK.B 1/17/25 400 put',
      'TOOLONG 7/28/23 200 call',
      '123 7/28/23 200 call',
      'AAPL 13/45/23 200 call',
      'AAPL 2/29/23 200 call',
      'AAPL 7/28 200 call',
      'AAPL 7/28/1999 200 call',
      'AAPL 7/28/123 200 call',
      'AAPL 2023/07/28 200 call',
      'AAPL 20230728 200 call',
      'AAPL July-28-2023 200 call',
      'AAPL 7/28/23 abc call',
      'AAPL 7/28/23 12,34 call',
      'AAPL 7/28/23 1,2345 call',
      'AAPL 7/28/23 200.0005 call',
      'AAPL 7/28/23 0 call',
      'AAPL 7/28/23 100000 call',
      'AAPL 7/28/23 -5 call',
      'AAPL 7/28/23 1e3 call',
      'AAPL 7/28/23 200$ call',
      'AAPL 7/28/23 200 X',
      'AAPL 7/28/23 200 C/P',
      'AAPL 7/28/23 200 toString',
      'AAPL%2B7/28/23%2B200%2BCall',
      'AAPL%2',
      'AAPL%207/28/23%20200%20%E0%A4%A',
      `AAPL 7/28/23 ${'9'.repeat(60)} call`,
    ];
    const answers = texts.map((text) => {
      const error = catchError(() => parseLookupText(text));
      expect(error, text).toBeInstanceOf(InvalidInputError);
      return `${text} → ${(error as Error).message}`;
    });
    expect(answers).toMatchInlineSnapshot(`
      [
        " → Invalid lookup text: expected underlying, expiration date, strike and side separated by spaces.",
        "    → Invalid lookup text: expected underlying, expiration date, strike and side separated by spaces.",
        "AAPL 7/28/23 200 → Invalid lookup text: expected underlying, expiration date, strike and side separated by spaces.",
        "AAPL 7/28/23 $ 200 Call → Invalid lookup text: expected underlying, expiration date, strike and side separated by spaces.",
        "AAPL 7/28/23 200 Call extra → Invalid lookup text: expected underlying, expiration date, strike and side separated by spaces.",
        "AAPL230728C00200000 → Invalid lookup text: expected underlying, expiration date, strike and side separated by spaces.",
        "BRK.B 1/17/25 400 put → Invalid lookup text: could not read the underlying 'BRK.B'.",
        "TOOLONG 7/28/23 200 call → Invalid lookup text: could not read the underlying 'TOOLONG'.",
        "123 7/28/23 200 call → Invalid lookup text: could not read the underlying '123'.",
        "AAPL 13/45/23 200 call → Invalid lookup text: could not read the expiration date '13/45/23'.",
        "AAPL 2/29/23 200 call → Invalid lookup text: could not read the expiration date '2/29/23'.",
        "AAPL 7/28 200 call → Invalid lookup text: could not read the expiration date '7/28'.",
        "AAPL 7/28/1999 200 call → Invalid lookup text: could not read the expiration date '7/28/1999'.",
        "AAPL 7/28/123 200 call → Invalid lookup text: could not read the expiration date '7/28/123'.",
        "AAPL 2023/07/28 200 call → Invalid lookup text: could not read the expiration date '2023/07/28'.",
        "AAPL 20230728 200 call → Invalid lookup text: could not read the expiration date '20230728'.",
        "AAPL July-28-2023 200 call → Invalid lookup text: could not read the expiration date 'July-28-2023'.",
        "AAPL 7/28/23 abc call → Invalid lookup text: could not read the strike 'abc'.",
        "AAPL 7/28/23 12,34 call → Invalid lookup text: could not read the strike '12,34'.",
        "AAPL 7/28/23 1,2345 call → Invalid lookup text: could not read the strike '1,2345'.",
        "AAPL 7/28/23 200.0005 call → Invalid lookup text: could not read the strike '200.0005'.",
        "AAPL 7/28/23 0 call → Invalid lookup text: could not read the strike '0'.",
        "AAPL 7/28/23 100000 call → Invalid lookup text: could not read the strike '100000'.",
        "AAPL 7/28/23 -5 call → Invalid lookup text: could not read the strike '-5'.",
        "AAPL 7/28/23 1e3 call → Invalid lookup text: could not read the strike '1e3'.",
        "AAPL 7/28/23 200$ call → Invalid lookup text: could not read the strike '200$'.",
        "AAPL 7/28/23 200 X → Invalid lookup text: could not read the side 'X' (use call or put).",
        "AAPL 7/28/23 200 C/P → Invalid lookup text: could not read the side 'C/P' (use call or put).",
        "AAPL 7/28/23 200 toString → Invalid lookup text: could not read the side 'toString' (use call or put).",
        "AAPL%2B7/28/23%2B200%2BCall → Invalid lookup text: expected underlying, expiration date, strike and side separated by spaces.",
        "AAPL%2 → Invalid lookup text: could not decode the URL escapes in 'AAPL%2'.",
        "AAPL%207/28/23%20200%20%E0%A4%A → Invalid lookup text: could not decode the URL escapes in 'AAPL%207/28/23%20200%20%E0%A4%A'.",
        "AAPL 7/28/23 999999999999999999999999999999999999999999999999999999999999 call → Invalid lookup text: could not read the strike '9999999999999999999999999999999999999999…'.",
      ]
    `);
  });

  it('never throws anything but an InvalidInputError on arbitrary text', () => {
    // Drawn from the characters a lookup is made of, so that texts reach every part of the parser.
    const lookupCharacter = fc.constantFrom(
      ...'AaPpCcLlTtUu0123456789//--..,,$%%++  \t\u00a0\u00e9\u0000E2F',
    );
    fc.assert(
      fc.property(fc.string({ unit: lookupCharacter, maxLength: 40 }), (text) => {
        try {
          formatOccSymbol(parseLookupText(text));
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidInputError);
        }
      }),
    );
  });

  it('reads every real date back as the same symbol in the three date forms', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('2000-01-01T00:00Z'),
          max: new Date('2099-12-31T00:00Z'),
          noInvalidDate: true,
        }),
        (date) => {
          const [y, m, d] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
          const expected = `AAPL${pad(y % 100)}${pad(m)}${pad(d)}C00200000`;
          expect(symbolOf(`AAPL ${m}/${d}/${pad(y % 100)} 200 call`)).toBe(expected);
          expect(symbolOf(`AAPL ${m}/${d}/${y} 200 call`)).toBe(expected);
          expect(symbolOf(`AAPL ${y}-${pad(m)}-${pad(d)} 200 call`)).toBe(expected);
        },
      ),
    );
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

function pad(value: number): string {
  return String(value).padStart(2, '0');
}
