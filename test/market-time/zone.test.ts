import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  etMidnightSeconds,
  etOffsetSeconds,
  etSecondsOfDayToSeconds,
  etWallToSeconds,
  toEtDate,
} from '../../src/market-time/index.js';

const ZONE = 'America/New_York';
const iso = (tsSeconds: number): string => new Date(tsSeconds * 1000).toISOString().replace('.000Z', 'Z');

function* days(fromYear: number, toYear: number): Generator<{ date: string; utcMidnight: number }> {
  for (let ms = Date.UTC(fromYear, 0, 1); ms < Date.UTC(toYear + 1, 0, 1); ms += 86_400_000) {
    yield { date: new Date(ms).toISOString().slice(0, 10), utcMidnight: ms / 1000 };
  }
}

// Intl (the ICU time-zone database luxon itself reads) is the fast reference; luxon checks a sample of it.
const intlFormat = new Intl.DateTimeFormat('en-US', {
  timeZone: ZONE,
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** `YYYY-MM-DD HH:MM:SS` in ET and UTC minus ET in seconds, according to Intl. */
function intlEt(tsSeconds: number): { wall: string; offset: number } {
  const [m, d, y, hh, mm, ss] = intlFormat.format(new Date(tsSeconds * 1000)).split(/\D+/);
  const wall = `${y}-${m}-${d} ${hh}:${mm}:${ss}`;
  return { wall, offset: tsSeconds - Date.parse(`${y}-${m}-${d}T${hh}:${mm}:${ss}Z`) / 1000 };
}

describe('ET wall time without luxon on the hot path', () => {
  it('lands every wall time of every day 2000–2035 (and 1970–1999 around the transitions) on its first occurrence', () => {
    const times = [
      '00:00:00',
      '01:00:00',
      '01:59:59',
      '03:00:00',
      '09:30:00',
      '12:00:00',
      '16:00:00',
      '23:59:59',
    ];
    const mismatches: string[] = [];
    const check = (date: string) => {
      for (const time of times) {
        const actual = etWallToSeconds(date, time);
        const rendered = intlEt(actual).wall;
        const hourBefore = intlEt(actual - 3600).wall;
        if (rendered !== `${date} ${time}` || hourBefore === rendered) {
          mismatches.push(`${date} ${time}: ${iso(actual)} renders ${rendered}`);
        }
      }
    };
    for (const { date } of days(2000, 2035)) check(date);
    for (const { date } of days(1970, 1999)) if (/-(0[1-4]|10)-/.test(date)) check(date);
    expect(mismatches).toEqual([]);
  });

  it('agrees with luxon on 09:30 and 16:00 ET of every day 2000–2035', () => {
    const mismatches: string[] = [];
    for (const { date } of days(2000, 2035)) {
      const [year, month, day] = date.split('-').map(Number);
      for (const [hour, minute] of [
        [9, 30],
        [16, 0],
      ] as const) {
        const expected = DateTime.fromObject({ year, month, day, hour, minute }, { zone: ZONE }).toSeconds();
        const actual = etWallToSeconds(date, `${hour}:${minute === 0 ? '00' : minute}`.padStart(5, '0'));
        if (actual !== expected) mismatches.push(`${date} ${hour}:${minute}: ${actual} ≠ ${expected}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('matches Intl for the ET date and offset of instants on every day 1970–2040, and luxon 2000–2035', () => {
    const mismatches: string[] = [];
    // 04:00Z..08:00Z brackets every ET midnight and every 02:00 ET transition.
    const hours = [0, 3.99, 4, 4.5, 5, 5.99, 6, 6.5, 7, 7.01, 12, 23.99];
    for (const { utcMidnight } of days(1970, 2040)) {
      for (const hour of hours) {
        const ts = Math.round(utcMidnight + hour * 3600);
        const reference = intlEt(ts);
        const expected = `${reference.wall.slice(0, 10)} ${reference.offset}`;
        const actual = `${toEtDate(ts)} ${etOffsetSeconds(ts)}`;
        if (actual !== expected) mismatches.push(`${iso(ts)}: ${actual} ≠ ${expected}`);
      }
    }
    for (const { utcMidnight } of days(2000, 2035)) {
      for (const hour of [4.5, 6.5]) {
        const ts = utcMidnight + hour * 3600;
        const zoned = DateTime.fromSeconds(ts, { zone: ZONE });
        const expected = `${zoned.toISODate()} ${-zoned.offset * 60}`;
        const actual = `${toEtDate(ts)} ${etOffsetSeconds(ts)}`;
        if (actual !== expected) mismatches.push(`luxon ${iso(ts)}: ${actual} ≠ ${expected}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('reads the skipped spring hour forward and the repeated autumn hour as its first (EDT) occurrence', () => {
    expect(
      [
        ['2024-03-10', '01:59:59'],
        ['2024-03-10', '02:00'],
        ['2024-03-10', '02:30'],
        ['2024-03-10', '03:00'],
        ['2024-11-03', '00:59:59'],
        ['2024-11-03', '01:30'],
        ['2024-11-03', '01:59:59'],
        ['2024-11-03', '02:00'],
      ].map(([date, time]) => `${date} ${time} → ${iso(etWallToSeconds(date!, time!))}`),
    ).toEqual([
      '2024-03-10 01:59:59 → 2024-03-10T06:59:59Z',
      '2024-03-10 02:00 → 2024-03-10T07:00:00Z', // = 03:00 EDT
      '2024-03-10 02:30 → 2024-03-10T07:30:00Z', // = 03:30 EDT
      '2024-03-10 03:00 → 2024-03-10T07:00:00Z',
      '2024-11-03 00:59:59 → 2024-11-03T04:59:59Z',
      '2024-11-03 01:30 → 2024-11-03T05:30:00Z',
      '2024-11-03 01:59:59 → 2024-11-03T05:59:59Z',
      '2024-11-03 02:00 → 2024-11-03T07:00:00Z',
    ]);
  });

  it('gives midnights, seconds-of-day and dates at the edges of the ET day', () => {
    expect([
      iso(etMidnightSeconds('2024-03-15')),
      iso(etMidnightSeconds('2024-01-02')),
      iso(etMidnightSeconds('2024-03-10')),
      iso(etSecondsOfDayToSeconds('2013-10-04', 34_200)),
      toEtDate(Date.UTC(2024, 2, 16, 3, 59, 59) / 1000),
      toEtDate(Date.UTC(2024, 2, 16, 4) / 1000),
      toEtDate(Date.UTC(2024, 0, 2, 4, 59, 59) / 1000),
      toEtDate(Date.UTC(2024, 0, 2, 5) / 1000),
      toEtDate(Date.UTC(1998, 0, 2, 12) / 1000),
    ]).toEqual([
      '2024-03-15T04:00:00Z',
      '2024-01-02T05:00:00Z',
      '2024-03-10T05:00:00Z',
      '2013-10-04T13:30:00Z',
      '2024-03-15',
      '2024-03-16',
      '2024-01-01',
      '2024-01-02',
      '1998-01-02',
    ]);
  });

  it('refuses malformed dates, times and instants', () => {
    expect(() => etWallToSeconds('2024-03-15', '24:00')).toThrow(/Invalid time "24:00"/);
    expect(() => etWallToSeconds('2024-03-15', '9:30')).toThrow(RangeError);
    expect(() => etWallToSeconds('2024-13-01', '09:30')).toThrow(/Invalid date "2024-13-01"/);
    expect(() => etMidnightSeconds('20240315')).toThrow(RangeError);
    expect(() => toEtDate(Number.NaN)).toThrow(RangeError);
    expect(etWallToSeconds('2024-03-15', '09:30:00')).toBe(etWallToSeconds('2024-03-15', '09:30'));
  });
});
