import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { etWallToSeconds } from '../../src/market-time/index.js';
import { clockedParser, clockedSafeParser, dayParam } from '../../src/query/params.js';

// A loop asks the same query at every instant: a parse that did not read the clock is kept, one that did
// (a relative date) is made again at each instant.
const schema = (clock: Parameters<typeof dayParam>[0]) =>
  z.object({ date: dayParam(clock).optional(), side: z.string().optional() });

const MONDAY = etWallToSeconds('2024-03-04', '10:00');
const TUESDAY = etWallToSeconds('2024-03-05', '10:00');

describe('clockedSafeParser', () => {
  it('keeps a parse that does not read the clock, frozen, and shares it at any instant', () => {
    const parse = clockedSafeParser(schema);
    const first = parse({ date: '2024-01-02', side: 'put' }, MONDAY);
    const again = parse({ date: '2024-01-02', side: 'put' }, TUESDAY);
    expect(first.success && first.data).toEqual({ date: '2024-01-02', side: 'put' });
    expect(again.success && again.data).toBe(first.success && first.data);
    expect(Object.isFrozen(again.success && again.data)).toBe(true);
  });

  it('parses a query that reads the clock again at each instant', () => {
    const parse = clockedSafeParser(schema);
    const monday = parse({ date: 'today' }, MONDAY);
    const tuesday = parse({ date: 'today' }, TUESDAY);
    expect(monday.success && monday.data.date).toBe('2024-03-04');
    expect(tuesday.success && tuesday.data.date).toBe('2024-03-05');
  });

  it('keeps no refusal: the same bad query is refused each time, with its 400', () => {
    const parse = clockedParser(schema);
    for (let i = 0; i < 2; i++) {
      expect(() => parse({ date: 'not a date' }, MONDAY)).toThrow(/Invalid parameter date/);
    }
  });
});
