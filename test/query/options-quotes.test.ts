import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXED_MESSAGES } from '../../src/errors.js';
import { chain } from '../../src/query/endpoints/options-chain.js';
import { quotes } from '../../src/query/endpoints/options-quotes.js';
import type { AsOf } from '../../src/query/types.js';
import type { StoreReader } from '../../src/store/store.js';
import { withData } from '../helpers/shared-data.js';
import { buildStore, context, dated, et, live, spyMarket } from './helpers/options-market.js';
import { refusal } from './helpers/refusal.js';
import { columns, example, render, shapeMismatches } from './helpers/shape.js';

/** The documented example bodies these tests compare with. */
const docs = withData(['spec/examples/options_chain.json', 'spec/examples/options_quotes.json']);

let reader: StoreReader;
let close: () => Promise<void>;

beforeAll(async () => {
  const spy = spyMarket();
  ({ reader, close } = await buildStore(spy.quotes, spy.interest));
});
afterAll(async () => close());

const SYMBOL = 'SPY240322C00505000';

function ask(
  query: Record<string, string>,
  asOf: AsOf = live('2024-03-19 12:00'),
  optionSymbol = SYMBOL,
  now?: string,
) {
  return quotes.run(context(reader, { now: now ?? '2024-03-19 12:00', asOf, path: { optionSymbol }, query }));
}

describe('option quotes', () => {
  docs.it(
    'answers the full chain field set in chain order (the real response, not the shorter doc example)',
    async () => {
      const body = render(await ask({}, live('2024-03-14 16:30')));
      expect(shapeMismatches(body, example('options_chain.json'))).toEqual([]);
      const documented = Object.keys(example('options_quotes.json'));
      expect(documented.every((key) => key in body)).toBe(true);
    },
  );

  it('answers date=D with exactly the dated chain row of that contract', async () => {
    const quote = await ask({}, dated('2024-03-14'));
    const row = await chain.run(
      context(reader, {
        now: '2024-03-19 12:00',
        asOf: dated('2024-03-14'),
        path: { underlying: 'SPY' },
        query: { expiration: '2024-03-22', strike: '505', side: 'call' },
      }),
    );
    // The chain's fields also carry its kept column texts; the values are what must agree.
    const plain = (result: typeof row) =>
      result.kind === 'ok'
        ? {
            ...result,
            fields: result.fields.map(({ key, human, kind, values }) => ({ key, human, kind, values })),
          }
        : result;
    expect(plain(quote)).toEqual({ ...plain(row), billing: 'per-1000-rows' });
    expect(columns(quote)['openInterest']).toEqual([1505]);
  });

  it('answers a current request from the latest values known at the cutoff, billed per symbol', async () => {
    const result = await ask({}, live('2024-03-14 15:50'));
    expect(result).toMatchObject({ kind: 'ok', billing: 'per-symbol-with-quote' });
    const c = columns(result);
    expect([c['updated'], c['bid'], c['volume'], c['openInterest']]).toEqual([
      [et('2024-03-14 15:45')],
      [0.85],
      [null],
      [1505],
    ]);
  });

  it('answers one EOD row per session from `from` (inclusive) to `to` (exclusive), or the last countback', async () => {
    const sessions = async (query: Record<string, string>, now?: string) => {
      const result = await ask(query, live(now ?? '2024-03-19 12:00'), SYMBOL, now);
      if (result.kind !== 'ok') return result;
      expect(result.billing).toBe('per-1000-rows');
      const c = columns(result);
      return c['updated']!.map((updated, i) => [updated, c['openInterest']![i], c['iv']![i]]);
    };
    // OI on the row for D was settled from the session before D (index in SETTLED)
    const row = (session: string, settled: number) => [et(`${session} 16:00`), 1000 * settled + 505, null];
    expect(await sessions({ from: '2024-03-13', to: '2024-03-15' })).toEqual([
      row('2024-03-13', 0),
      row('2024-03-14', 1),
    ]);
    expect(await sessions({ from: '2024-03-14' })).toEqual([
      row('2024-03-14', 1),
      row('2024-03-15', 2),
      row('2024-03-18', 3),
    ]);
    expect(await sessions({ countback: '2', to: '2024-03-18' })).toEqual([
      row('2024-03-14', 1),
      row('2024-03-15', 2),
    ]);
    expect(await sessions({ countback: '2' })).toEqual([row('2024-03-15', 2), row('2024-03-18', 3)]);
    // only sessions before the clock's date, as for `date`
    expect(await sessions({ from: '2024-03-13' }, '2024-03-15 12:00')).toEqual([
      row('2024-03-13', 0),
      row('2024-03-14', 1),
    ]);
    expect(await sessions({ from: '2024-03-01', to: '2024-03-13' })).toEqual({
      kind: 'no_data',
      nextTime: et('2024-03-13 16:00'),
      prevTime: null,
    });
  });

  it('refuses ranges with date, countback with from, and unreadable values', async () => {
    expect(await refusal(ask({ from: '2024-03-13' }, dated('2024-03-14')))).toMatchObject({ status: 400 });
    expect(await refusal(ask({ from: '2024-03-13', countback: '2' }))).toEqual({
      status: 400,
      body: { s: 'error', errmsg: 'Bad parameters. countback cannot be combined with from.' },
    });
    expect(await refusal(ask({ countback: 'two' }))).toMatchObject({ status: 400 });
  });

  it('refuses an invalid OCC symbol with the fixed message and an unknown contract with a 404', async () => {
    expect(await refusal(ask({}, undefined, 'SPY24032C505'))).toEqual({
      status: 400,
      body: { s: 'error', errmsg: FIXED_MESSAGES.invalidOptionSymbol },
    });
    expect(await refusal(ask({}, undefined, 'SPY240322C00506000'))).toEqual({
      status: 404,
      body: { s: 'error', errmsg: 'No option found. No option was found for this strike and expiration.' },
    });
  });

  it('answers no_data before the first trade and after expiry, with the nearest sessions', async () => {
    expect(await ask({}, live('2024-03-12 12:00'))).toEqual({
      kind: 'no_data',
      nextTime: et('2024-03-13 16:00'),
      prevTime: null,
    });
    expect(await ask({}, live('2024-03-18 12:00'), 'SPY240315P00500000')).toEqual({
      kind: 'no_data',
      nextTime: null,
      prevTime: et('2024-03-15 16:00'),
    });
    expect(await ask({}, dated('2024-03-12'))).toEqual({
      kind: 'no_data',
      nextTime: et('2024-03-13 16:00'),
      prevTime: null,
    });
  });
});
