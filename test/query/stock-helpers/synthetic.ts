import { etWallToSeconds } from '../../../src/market-time/index.js';
import type { BarRow } from './store.js';

/**
 * Minute bars of `symbol` for `minutes` regular-hours minutes of `session` from 09:30 ET: minute k has
 * o = base + k/100, h = o + 0.03, l = o − 0.02, c = o + 0.01, v = 10 + k (prices to the cent).
 */
export function minuteBars(symbol: string, session: string, base: number, minutes: number): BarRow[] {
  const open = etWallToSeconds(session, '09:30');
  return Array.from({ length: minutes }, (_, k) => {
    const o = Math.round((base + k / 100) * 100) / 100;
    return {
      symbol,
      resolution: '1' as const,
      session,
      t: open + 60 * k,
      o,
      h: Math.round((o + 0.03) * 100) / 100,
      l: Math.round((o - 0.02) * 100) / 100,
      c: Math.round((o + 0.01) * 100) / 100,
      v: 10 + k,
    };
  });
}

/** A daily bar. */
export function dailyBar(symbol: string, session: string, [o, h, l, c, v]: readonly number[]): BarRow {
  return { symbol, resolution: 'D', session, o: o!, h: h!, l: l!, c: c!, v: v! };
}

/**
 * The synthetic market of the stock tests (Thanksgiving week 2023: 11-23 closed, 11-24 closes at 13:00):
 * TEST has daily bars 11-20..11-27 and minute bars on 11-24 (210, the early close) and 11-27 (390);
 * ABC has daily bars 11-20..11-24 only.
 */
export function thanksgivingBars(): BarRow[] {
  return [
    dailyBar('TEST', '2023-11-20', [100, 102, 99, 101, 1000]),
    dailyBar('TEST', '2023-11-21', [101, 103, 100, 102, 1100]),
    dailyBar('TEST', '2023-11-22', [102, 104, 101, 103, 1200]),
    dailyBar('TEST', '2023-11-24', [103, 105, 102, 104, 600]),
    dailyBar('TEST', '2023-11-27', [104, 108, 103, 107.9, 1300]),
    dailyBar('ABC', '2023-11-20', [50, 51, 49, 50.5, 500]),
    dailyBar('ABC', '2023-11-21', [50.5, 52, 50, 51.5, 510]),
    dailyBar('ABC', '2023-11-22', [51.5, 53, 51, 52.5, 520]),
    dailyBar('ABC', '2023-11-24', [52.5, 54, 52, 53.5, 260]),
    ...minuteBars('TEST', '2023-11-24', 103, 210),
    ...minuteBars('TEST', '2023-11-27', 104, 390),
  ];
}
