import { describe, expect, it } from 'vitest';
import {
  fixedClock,
  formatInstant,
  isIsoDate,
  type ParsedDate,
  parseDateInput,
  parseDateInputOrRelative,
  systemClock,
} from '../../src/market-time/index.js';

const utc = (text: string): number => Date.parse(text) / 1000;
/** Friday 2024-03-15 16:00 EDT. */
const clock = fixedClock(utc('2024-03-15T20:00:00Z'));
const date = (value: string): ParsedDate => ({ kind: 'date', date: value });
const instant = (text: string): ParsedDate => ({ kind: 'instant', tsSeconds: utc(text) });

describe('parseDateInput', () => {
  it('reads every documented form relative to the injected clock', () => {
    const cases: Array<[string, ParsedDate]> = [
      ['2024-03-15', date('2024-03-15')],
      ['  2024-03-15 ', date('2024-03-15')],
      ['2024-03-15 16:00', instant('2024-03-15T20:00:00Z')],
      ['2024-03-15T16:00:00', instant('2024-03-15T20:00:00Z')],
      ['2024-01-19 9:30', instant('2024-01-19T14:30:00Z')],
      ['2024-03-15 16:00:00 -04:00', instant('2024-03-15T20:00:00Z')],
      ['2024-03-15T20:00:00Z', instant('2024-03-15T20:00:00Z')],
      ['2024-03-15T21:00:00+0100', instant('2024-03-15T20:00:00Z')],
      ['2024-03-15T16:00:00.5-04:00', { kind: 'instant', tsSeconds: utc('2024-03-15T20:00:00Z') + 0.5 }],
      ['3/15/2024', date('2024-03-15')],
      ['03/05/2024', date('2024-03-05')],
      ['3/15/24', date('2024-03-15')],
      ['03/15/2024 4:00 PM', instant('2024-03-15T20:00:00Z')],
      ['03/15/2024 12:00 am', instant('2024-03-15T04:00:00Z')],
      ['03/15/2024 12:30PM', instant('2024-03-15T16:30:00Z')],
      ['3/15/2024 16:00', instant('2024-03-15T20:00:00Z')],
      ['1710532800', instant('2024-03-15T20:00:00Z')],
      ['60000', { kind: 'instant', tsSeconds: 60_000 }],
      ['44195.66667', instant('2020-12-30T21:00:00Z')],
      ['44195', date('2020-12-30')],
      ['45366.5', instant('2024-03-15T16:00:00Z')],
      ['59999', date('2064-04-07')],
      ['now', instant('2024-03-15T20:00:00Z')],
      ['NOW', instant('2024-03-15T20:00:00Z')],
      ['today', date('2024-03-15')],
      ['yesterday', date('2024-03-14')],
      ['last session', date('2024-03-14')],
      ['Last  Session', date('2024-03-14')],
      ['5 days ago', date('2024-03-10')],
      ['1 day ago', date('2024-03-14')],
      ['0 days ago', date('2024-03-15')],
      ['2 weeks ago', date('2024-03-01')],
      ['1 month ago', date('2024-02-15')],
      ['1 year ago', date('2023-03-15')],
      ['30 minutes ago', instant('2024-03-15T19:30:00Z')],
      ['2 hours ago', instant('2024-03-15T18:00:00Z')],
      ['-5 days', date('2024-03-10')],
      ['-90 minutes', instant('2024-03-15T18:30:00Z')],
    ];
    expect(cases.map(([text]) => [text, parseDateInput(text, clock)])).toEqual(cases);
  });

  it('refuses garbage with a RangeError naming the input', () => {
    const garbage = [
      '',
      'tomorrow',
      '2024-02-30',
      '2024-3-15',
      '13/01/2024',
      '2/30/2024',
      '2024-03-15 25:00',
      '2024-03-15T16:00:00+25:00',
      '03/15/2024 13:00 PM',
      '0',
      '-5',
      '5 fortnights ago',
      '-5 fortnights',
      '1e9',
      'December 2022 expiration',
    ];
    expect(
      garbage.map((text) => {
        try {
          return parseDateInput(text, clock);
        } catch (error) {
          return error instanceof RangeError ? error.message : error;
        }
      }),
    ).toEqual(garbage.map((text) => `Invalid date input "${text}"`));
  });

  it('takes today from the clock in ET, not from the host zone', () => {
    const lateFriday = fixedClock(utc('2024-03-16T03:59:59Z'));
    const earlySaturday = fixedClock(utc('2024-03-16T04:00:00Z'));
    const mondayAfterGoodFriday = fixedClock(utc('2024-04-01T14:00:00Z'));
    expect([
      parseDateInput('today', lateFriday),
      parseDateInput('today', earlySaturday),
      parseDateInput('last session', earlySaturday),
      parseDateInput('last session', mondayAfterGoodFriday),
      parseDateInput('yesterday', mondayAfterGoodFriday),
    ]).toEqual([
      date('2024-03-15'),
      date('2024-03-16'),
      date('2024-03-15'),
      date('2024-03-28'),
      date('2024-03-31'),
    ]);
  });

  it('leaves -N unit unresolved on request and resolves it against an anchor', () => {
    expect(parseDateInputOrRelative('-5 days', clock)).toEqual({
      kind: 'relative',
      amount: -5,
      unit: 'days',
    });
    expect(parseDateInputOrRelative('5 days ago', clock)).toEqual(date('2024-03-10'));
    expect([
      parseDateInput('-5 days', clock, date('2024-03-01')),
      parseDateInput('-1 months', clock, date('2024-03-31')),
      parseDateInput('-2 hours', clock, date('2024-03-10')),
      // One ET day back across the spring change keeps the wall time: 23 hours elapse.
      parseDateInput('-1 day', clock, instant('2024-03-10T16:00:00Z')),
      parseDateInput('-1 week', clock, instant('2024-11-08T17:00:00Z')),
    ]).toEqual([
      date('2024-02-25'),
      date('2024-02-29'),
      instant('2024-03-10T03:00:00Z'),
      instant('2024-03-09T17:00:00Z'),
      instant('2024-11-01T16:00:00Z'),
    ]);
  });

  it('reads wall times at the DST edges: the skipped hour forward, the repeated hour as EDT', () => {
    expect([
      parseDateInput('2024-03-10 02:30', clock),
      parseDateInput('3/10/2024 3:30 AM', clock),
      parseDateInput('2024-11-03 01:30', clock),
      parseDateInput('2024-11-03T01:30:00-05:00', clock),
    ]).toEqual([
      instant('2024-03-10T07:30:00Z'),
      instant('2024-03-10T07:30:00Z'),
      instant('2024-11-03T05:30:00Z'),
      instant('2024-11-03T06:30:00Z'),
    ]);
  });
});

describe('formatInstant', () => {
  it('prints unix, ET timestamps and spreadsheet serials in both offsets', () => {
    const instants = [
      '2024-03-15T20:00:00Z',
      '2020-12-30T21:00:00Z',
      '2024-11-03T05:30:00Z',
      '2024-11-03T06:30:00Z',
    ];
    expect(
      instants.map((text) => {
        const ts = utc(text);
        return [formatInstant(ts, 'unix'), formatInstant(ts, 'timestamp'), formatInstant(ts, 'spreadsheet')];
      }),
    ).toEqual([
      [1710532800, '2024-03-15T16:00:00-04:00', 45366.66667],
      [1609362000, '2020-12-30T16:00:00-05:00', 44195.66667],
      [1730611800, '2024-11-03T01:30:00-04:00', 45599.0625],
      [1730615400, '2024-11-03T01:30:00-05:00', 45599.0625],
    ]);
    expect(() => formatInstant(0, 'iso' as never)).toThrow(/Unknown dateformat "iso"/);
    expect(() => formatInstant(Number.NaN, 'unix')).toThrow(RangeError);
  });

  it('round-trips through parseDateInput', () => {
    const stamps = [
      '2000-01-03T14:30:00Z',
      '2024-03-11T13:30:00Z',
      '2024-07-03T17:00:00Z',
      '2030-12-31T21:00:00Z',
    ].map(utc);
    expect(
      stamps.map((ts) => [
        parseDateInput(String(formatInstant(ts, 'timestamp')), clock),
        parseDateInput(String(formatInstant(ts, 'spreadsheet')), clock),
      ]),
    ).toEqual(
      stamps.map((ts) => [
        { kind: 'instant', tsSeconds: ts },
        { kind: 'instant', tsSeconds: ts },
      ]),
    );
  });
});

describe('clocks', () => {
  it('fixes an instant or reads the host clock in whole seconds', () => {
    expect(fixedClock(1_710_532_800).nowSeconds()).toBe(1_710_532_800);
    expect(() => fixedClock(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    const before = Math.floor(Date.now() / 1000);
    const now = systemClock.nowSeconds();
    expect(Number.isInteger(now) && now >= before && now <= before + 5).toBe(true);
  });
});

describe('isIsoDate', () => {
  it('takes a real calendar day written YYYY-MM-DD and nothing else', () => {
    expect(['2024-03-15', '2024-02-29', '1899-12-31', '2300-01-01'].map(isIsoDate)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    const refused = [
      '2023-02-29',
      '2021-02-30',
      '2021-13-01',
      '2021-00-10',
      '2021-1-01',
      '2021-01-01 ',
      '20210101',
      '',
    ];
    expect(refused.filter(isIsoDate)).toEqual([]);
  });
});
