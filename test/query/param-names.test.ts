import { describe, expect, it } from 'vitest';
import { LOCAL_ACCOUNT } from '../../src/billing/accounts.js';
import { MarketDataError } from '../../src/errors.js';
import { chain, lookup } from '../../src/query/endpoints/options.js';
import { stockCandles } from '../../src/query/endpoints/stocks-candles.js';
import { stockPrices } from '../../src/query/endpoints/stocks-prices.js';
import { paramNames, parseDateParam } from '../../src/query/params.js';
import { defaultMode } from '../../src/service/modes.js';

describe('paramNames', () => {
  it('reads an endpoint schema, with `date` for a dated endpoint, once', () => {
    expect(paramNames(chain)).toContain('strike');
    expect(paramNames(chain)[0]).toBe('date');
    expect(paramNames(stockCandles).filter((name) => name === 'date')).toEqual(['date']);
    expect(paramNames(stockPrices)).toEqual(['symbols', 'extended']);
    expect(paramNames(lookup)).toEqual([]);
  });
});

describe('parseDateParam', () => {
  const NOON_2024_03_15 = Date.parse('2024-03-15T16:00:00Z') / 1000;

  it('reads every input form to its Eastern date, relative ones against the request instant', () => {
    expect(parseDateParam('2024-03-14', NOON_2024_03_15)).toBe('2024-03-14');
    expect(parseDateParam('3/14/2024', NOON_2024_03_15)).toBe('2024-03-14');
    // 02:00 UTC on the 15th is still the 14th in New York.
    expect(parseDateParam(String(Date.parse('2024-03-15T02:00:00Z') / 1000), NOON_2024_03_15)).toBe(
      '2024-03-14',
    );
    expect(parseDateParam('yesterday', NOON_2024_03_15)).toBe('2024-03-14');
  });

  it('answers an unreadable date with the 400 the service sends', () => {
    const error = (() => {
      try {
        return parseDateParam('next tuesday', NOON_2024_03_15);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(MarketDataError);
    expect(error).toMatchObject({
      status: 400,
      message: "Invalid date 'next tuesday'. Use a date such as 2024-03-15.",
    });
  });
});

describe('defaultMode', () => {
  it('is historical for free and trial plans, live for paid ones', () => {
    expect(defaultMode({ ...LOCAL_ACCOUNT, plan: 'free' })).toBe('historical');
    expect(defaultMode({ ...LOCAL_ACCOUNT, plan: 'trial' })).toBe('historical');
    expect(defaultMode({ ...LOCAL_ACCOUNT, plan: 'starter' })).toBe('live');
  });
});
