import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  closureReason,
  indexOptionCloseSeconds,
  isEarlyClose,
  isSession,
  nextSession,
  previousSession,
  sessionCloseSeconds,
  sessionOf,
  sessionOpenSeconds,
  sessionsBetween,
} from '../../src/market-time/index.js';
import { sharedPath } from '../helpers/shared-data.js';

const iso = (tsSeconds: number): string => new Date(tsSeconds * 1000).toISOString().replace('.000Z', 'Z');

function readCsv(path: string): string[][] {
  return readFileSync(path, 'utf8')
    .trim()
    .split(/\r?\n/)
    .slice(1)
    .map((line) => line.split(','));
}

describe('NYSE calendar', () => {
  it('agrees with the reference calendar on every weekday 2000-01-03..2030-12-31', () => {
    const rows = readCsv(sharedPath('data/calendars/nyse_calendar_2000_2030.csv'));
    expect(rows.length).toBe(8087);
    const mismatches: string[] = [];
    for (const [date, status, openUtc, closeUtc, , , kind, name] of rows) {
      const open = isSession(date!);
      const actual = open
        ? [
            'open',
            iso(sessionOpenSeconds(date!)),
            iso(sessionCloseSeconds(date!)),
            isEarlyClose(date!) ? 'early_close' : '',
          ]
        : ['closed', '', '', closureReason(date!)];
      const expected = open
        ? [status, openUtc, closeUtc, kind]
        : [status, openUtc, closeUtc, kind === 'adhoc_closure' || kind === 'holiday' ? name : kind];
      if (actual.join('|') !== expected.join('|'))
        mismatches.push(`${date}: ${actual.join('|')} ≠ ${expected.join('|')}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('agrees with the upstream exchange_calendars answers on every session 1990-01-02..2023-01-13', () => {
    const expected = readCsv(
      sharedPath('data/calendars/exchange_calendars_xnys_answers_1990-01-02_to_2023-01-13.csv'),
    ).map(([session, open, close]) => `${session!.slice(0, 10)} ${open} ${close}`);
    const actual = sessionsBetween('1990-01-01', '2023-01-13').map(
      (date) => `${date} ${iso(sessionOpenSeconds(date))} ${iso(sessionCloseSeconds(date))}`,
    );
    expect(actual).toEqual(expected);
  });

  it('puts sessions around the 2024 DST changes at the right UTC instants', () => {
    expect(
      ['2024-03-08', '2024-03-11', '2024-11-01', '2024-11-04'].map(
        (date) => `${date} ${iso(sessionOpenSeconds(date))} ${iso(sessionCloseSeconds(date))}`,
      ),
    ).toEqual([
      '2024-03-08 2024-03-08T14:30:00Z 2024-03-08T21:00:00Z',
      '2024-03-11 2024-03-11T13:30:00Z 2024-03-11T20:00:00Z',
      '2024-11-01 2024-11-01T13:30:00Z 2024-11-01T20:00:00Z',
      '2024-11-04 2024-11-04T14:30:00Z 2024-11-04T21:00:00Z',
    ]);
  });

  it('projects the rules to 2035 (observance on both sides of a weekend, no Friday New Year)', () => {
    const weekdayClosures = [2031, 2032, 2033, 2034, 2035].map((year) => {
      let count = 0;
      for (let day = Date.UTC(year, 0, 1); day < Date.UTC(year + 1, 0, 1); day += 86_400_000) {
        const date = new Date(day).toISOString().slice(0, 10);
        if (!isSession(date) && closureReason(date) !== 'weekend') count++;
      }
      return count;
    });
    // Ten holidays a year, but none for New Year's Day 2033 (a Saturday).
    expect(weekdayClosures).toEqual([10, 10, 9, 10, 10]);
    expect(
      ['2032-06-18', '2032-12-31', '2033-01-03', '2033-12-26', '2034-04-07', '2035-03-23', '2035-07-04'].map(
        (date) => [date, isSession(date), closureReason(date)],
      ),
    ).toEqual([
      ['2032-06-18', false, 'Juneteenth National Independence Day'],
      ['2032-12-31', true, undefined],
      ['2033-01-03', true, undefined],
      ['2033-12-26', false, 'Christmas'],
      ['2034-04-07', false, 'Good Friday'],
      ['2035-03-23', false, 'Good Friday'],
      ['2035-07-04', false, 'July 4th'],
    ]);
  });

  it('steps to the next and previous session strictly, across holidays and weekends', () => {
    expect([
      nextSession('2024-03-28'),
      nextSession('2024-03-29'),
      nextSession('2024-03-30'),
      previousSession('2024-04-01'),
      previousSession('2024-03-29'),
      nextSession('2012-10-26'),
      previousSession('2001-09-17'),
      nextSession('2035-12-31'),
      previousSession('2000-01-03'),
      previousSession('1990-01-02'),
    ]).toEqual([
      '2024-04-01',
      '2024-04-01',
      '2024-04-01',
      '2024-03-28',
      '2024-03-28',
      '2012-10-31',
      '2001-09-10',
      '2036-01-02',
      '1999-12-31',
      '1989-12-29',
    ]);
  });

  it('lists sessions inclusively and ascending', () => {
    expect(sessionsBetween('2024-03-27', '2024-04-02')).toEqual([
      '2024-03-27',
      '2024-03-28',
      '2024-04-01',
      '2024-04-02',
    ]);
    expect(sessionsBetween('2024-03-30', '2024-03-31')).toEqual([]);
    expect(sessionsBetween('2024-04-02', '2024-03-27')).toEqual([]);
  });

  it('finds the session of an instant by its ET calendar date', () => {
    expect([
      sessionOf(Date.UTC(2024, 2, 16, 3, 59) / 1000), // 23:59 EDT on Friday the 15th
      sessionOf(Date.UTC(2024, 2, 16, 4, 0) / 1000), // 00:00 EDT Saturday
      sessionOf(Date.UTC(2024, 0, 2, 4, 59) / 1000), // 23:59 EST on New Year's Day
      sessionOf(Date.UTC(2024, 0, 2, 5, 0) / 1000),
    ]).toEqual(['2024-03-15', undefined, undefined, '2024-01-02']);
  });

  it('closes index options 15 minutes after the stock market', () => {
    expect([iso(indexOptionCloseSeconds('2024-03-15')), iso(indexOptionCloseSeconds('2024-11-29'))]).toEqual([
      '2024-03-15T20:15:00Z',
      '2024-11-29T18:15:00Z',
    ]);
  });

  it('names closures and says nothing for sessions', () => {
    expect(
      ['2024-03-29', '2024-03-30', '2024-03-28', '2018-12-05', '2022-06-20', '1994-04-27'].map((date) =>
        closureReason(date),
      ),
    ).toEqual([
      'Good Friday',
      'weekend',
      undefined,
      'National Day of Mourning (George H.W. Bush)',
      'Juneteenth National Independence Day',
      'National Day of Mourning (Richard Nixon)',
    ]);
  });

  it('refuses dates that are malformed, outside 1990..2035, or not sessions where a session is required', () => {
    expect(() => isSession('1989-12-29')).toThrow(RangeError);
    expect(() => isSession('2036-01-01')).toThrow(/outside the calendar/);
    expect(() => isSession('2024-02-30')).toThrow(/Invalid date "2024-02-30"/);
    expect(() => isSession('2024-3-1')).toThrow(RangeError);
    expect(() => sessionOpenSeconds('2024-03-29')).toThrow(/not a trading session/);
    expect(() => sessionCloseSeconds('2024-03-30')).toThrow(/not a trading session/);
    expect(() => sessionOf(Date.UTC(1989, 11, 29, 12) / 1000)).toThrow(RangeError);
    expect(isSession('1990-01-02')).toBe(true);
    expect(isSession('2035-12-31')).toBe(true);
  });
});
