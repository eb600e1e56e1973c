import { describe, expect, it } from 'vitest';
import {
  classifyExpiration,
  dte,
  exerciseStyleOf,
  expirationSeconds,
  isIndexRoot,
  lastSessionOfMonth,
  monthlyExpiration,
  normalizeExpirationDate,
  quarterlyExpirations,
  settlementOf,
  underlyingOfRoot,
  vixMonthlyExpiration,
} from '../../src/market-time/index.js';

const iso = (tsSeconds: number): string => new Date(tsSeconds * 1000).toISOString().replace('.000Z', 'Z');
const months = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

describe('expirations', () => {
  it('puts the monthly on the third Friday, or on Thursday when that Friday is Good Friday', () => {
    expect(months.map((month) => monthlyExpiration(2022, month))).toEqual([
      '2022-01-21',
      '2022-02-18',
      '2022-03-18',
      '2022-04-14',
      '2022-05-20',
      '2022-06-17',
      '2022-07-15',
      '2022-08-19',
      '2022-09-16',
      '2022-10-21',
      '2022-11-18',
      '2022-12-16',
    ]);
    expect([monthlyExpiration(2014, 4), monthlyExpiration(2025, 4), monthlyExpiration(2035, 12)]).toEqual([
      '2014-04-17',
      '2025-04-17',
      '2035-12-21',
    ]);
    expect(() => monthlyExpiration(1989, 12)).toThrow(RangeError);
    expect(() => monthlyExpiration(2036, 1)).toThrow(/outside the calendar/);
    expect(() => monthlyExpiration(2024, 13)).toThrow(/Invalid month 13/);
  });

  it('puts quarterlies on the last session of each quarter month', () => {
    expect([quarterlyExpirations(2018), quarterlyExpirations(2024)]).toEqual([
      ['2018-03-29', '2018-06-29', '2018-09-28', '2018-12-31'],
      ['2024-03-28', '2024-06-28', '2024-09-30', '2024-12-31'],
    ]);
    expect(lastSessionOfMonth(2035, 12)).toBe('2035-12-31');
  });

  it('puts the VIX monthly on the Wednesday 30 days before the next third Friday', () => {
    // The VIX monthlies in the Cboe DataShop sample of 2016-06-01.
    expect([6, 7, 8, 9, 10, 11].map((month) => vixMonthlyExpiration(2016, month))).toEqual([
      '2016-06-15',
      '2016-07-20',
      '2016-08-17',
      '2016-09-21',
      '2016-10-19',
      '2016-11-16',
    ]);
    // Juneteenth 2024 fell on the VIX Wednesday: moved to the Tuesday.
    expect(vixMonthlyExpiration(2024, 6)).toBe('2024-06-18');
  });

  it('classifies monthly, quarterly and weekly expirations (Saturday monthlies read as their Friday)', () => {
    const dates = [
      '2024-03-15',
      '2024-03-28',
      '2024-03-22',
      '2024-06-21',
      '2024-06-28',
      '2014-01-18',
      '2014-04-19',
      '2022-04-14',
      '2022-04-15',
      '2018-02-28',
    ];
    expect(
      dates.map((date) => {
        const { monthly, quarterly, weekly } = classifyExpiration(date);
        return `${date} ${monthly ? 'M' : ''}${quarterly ? 'Q' : ''}${weekly ? 'W' : ''}`;
      }),
    ).toEqual([
      '2024-03-15 M',
      '2024-03-28 Q',
      '2024-03-22 W',
      '2024-06-21 M',
      '2024-06-28 Q',
      '2014-01-18 M',
      '2014-04-19 M',
      '2022-04-14 M',
      '2022-04-15 W',
      '2018-02-28 W',
    ]);
    expect(
      ['2016-06-01', '2016-06-15', '2016-06-17'].map((date) => classifyExpiration(date, 'VIX').monthly),
    ).toEqual([false, true, false]);
  });

  it('maps a Saturday expiration date to the session before it', () => {
    expect(
      ['2014-01-18', '2014-04-19', '2014-01-17', '2024-03-16', '1998-01-17'].map(normalizeExpirationDate),
    ).toEqual(['2014-01-17', '2014-04-17', '2014-01-17', '2024-03-15', '1998-01-16']);
  });

  it('stamps expirations at 16:00, 16:15 or 09:30 ET in either offset', () => {
    expect(
      [
        expirationSeconds('2024-03-15', 'equity'),
        expirationSeconds('2024-03-15', 'pm-index'),
        expirationSeconds('2024-03-15', 'am-index'),
        expirationSeconds('2024-01-19', 'equity'),
        expirationSeconds('2024-01-19', 'am-index'),
      ].map(iso),
    ).toEqual([
      '2024-03-15T20:00:00Z',
      '2024-03-15T20:15:00Z',
      '2024-03-15T13:30:00Z',
      '2024-01-19T21:00:00Z',
      '2024-01-19T14:30:00Z',
    ]);
    expect(() => expirationSeconds('2024-03-15', 'noon' as never)).toThrow(/Unknown settlement/);
  });

  it('knows index roots, their underlyings and how each expiration settles', () => {
    const roots = [
      'SPX',
      'SPXW',
      'NDX',
      'NDXP',
      'RUT',
      'RUTW',
      'VIX',
      'VIXW',
      'XSP',
      'DJX',
      'OEX',
      'XEO',
      'SPY',
      'AAPL',
    ];
    expect(roots.map((root) => `${root}:${isIndexRoot(root)}:${underlyingOfRoot(root)}`)).toEqual([
      'SPX:true:SPX',
      'SPXW:true:SPX',
      'NDX:true:NDX',
      'NDXP:true:NDX',
      'RUT:true:RUT',
      'RUTW:true:RUT',
      'VIX:true:VIX',
      'VIXW:true:VIX',
      'XSP:true:XSP',
      'DJX:true:DJX',
      'OEX:true:OEX',
      'XEO:true:XEO',
      'SPY:false:SPY',
      'AAPL:false:AAPL',
    ]);
    expect(
      [
        ['SPX', '2024-03-15'],
        ['SPX', '2014-01-18'],
        ['SPX', '2024-03-28'],
        ['SPXW', '2024-03-15'],
        ['NDX', '2024-03-15'],
        ['NDXP', '2024-03-22'],
        ['RUT', '2022-04-14'],
        ['VIX', '2016-06-15'],
        ['VIXW', '2016-06-08'],
        ['XSP', '2024-03-15'],
        ['SPY', '2024-03-15'],
      ].map(([root, date]) => settlementOf(root!, date!)),
    ).toEqual([
      'am-index',
      'am-index',
      'pm-index',
      'pm-index',
      'am-index',
      'pm-index',
      'am-index',
      'am-index',
      'am-index',
      'pm-index',
      'equity',
    ]);
  });

  it('exercises the index roots European-style, OEX and every equity or ETF root American-style', () => {
    const roots = ['SPX', 'SPXW', 'NDX', 'RUT', 'VIX', 'XSP', 'DJX', 'XEO', 'OEX', 'SPY', 'AAPL', 'QQQ'];
    expect(Object.fromEntries(roots.map((root) => [root, exerciseStyleOf(root)]))).toEqual({
      SPX: 'european',
      SPXW: 'european',
      NDX: 'european',
      RUT: 'european',
      VIX: 'european',
      XSP: 'european',
      DJX: 'european',
      XEO: 'european',
      OEX: 'american',
      SPY: 'american',
      AAPL: 'american',
      QQQ: 'american',
    });
  });

  it('counts calendar days to expiration', () => {
    expect([
      dte('2024-03-15', '2024-03-15'),
      dte('2024-03-14', '2024-03-15'),
      dte('2024-03-08', '2024-03-15'),
      dte('2024-02-28', '2024-03-01'),
      dte('2023-12-29', '2024-12-31'),
      dte('2024-03-18', '2024-03-15'),
    ]).toEqual([0, 1, 7, 2, 368, -3]);
    expect(() => dte('2024-03-15', '3/15/2024')).toThrow(RangeError);
  });
});
