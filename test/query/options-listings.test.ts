import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPTION_ENDPOINTS } from '../../src/query/endpoints/options.js';
import { expirations } from '../../src/query/endpoints/options-expirations.js';
import { lookup } from '../../src/query/endpoints/options-lookup.js';
import { strikes } from '../../src/query/endpoints/options-strikes.js';
import type { AsOf, Endpoint } from '../../src/query/types.js';
import type { StoreReader } from '../../src/store/store.js';
import { withData } from '../helpers/shared-data.js';
import { buildSpySpxStore, context, dated, et, live } from './helpers/options-market.js';
import { refusal } from './helpers/refusal.js';
import { example, render, shapeMismatches, shapeOf } from './helpers/shape.js';

/** The documented example bodies these tests compare with. */
const docs = withData([
  'spec/examples/options_lookup.json',
  'spec/examples/options_expirations.json',
  'spec/examples/options_strikes_2023_removed_page.json',
]);

let reader: StoreReader;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ reader, close } = await buildSpySpxStore());
});
afterAll(async () => close());

function call(endpoint: Endpoint, path: Record<string, string>, query: Record<string, string>, asOf: AsOf) {
  return endpoint.run(context(reader, { now: '2024-03-19 12:00', asOf, path, query }));
}

describe('the option endpoint list', () => {
  it('routes the five option paths', () => {
    expect(OPTION_ENDPOINTS.map((e) => [e.service, e.pattern, e.cacheable, e.dated])).toEqual([
      ['/v1/options/chain/', '/v1/options/chain/:underlying/', true, true],
      ['/v1/options/quotes/', '/v1/options/quotes/:optionSymbol/', true, true],
      ['/v1/options/lookup/', '/v1/options/lookup/*text', false, false],
      ['/v1/options/expirations/', '/v1/options/expirations/:underlying/', false, true],
      ['/v1/options/strikes/', '/v1/options/strikes/:underlying/', false, true],
    ]);
  });
});

describe('lookup', () => {
  const find = (text: string, asOf: AsOf = live('2024-03-19 12:00')) => call(lookup, { text }, {}, asOf);

  docs.it('answers the OCC symbol as a scalar, in the documented shape', async () => {
    const result = await find('SPY%203/22/24%20500%20Call');
    expect(render(result)).toEqual({ s: 'ok', optionSymbol: 'SPY240322C00500000' });
    expect(shapeMismatches(render(result), example('options_lookup.json'))).toEqual([]);
    expect(result).toMatchObject({ billing: 'per-response', scalars: [{ human: 'Symbol' }] });
  });

  it('finds a sibling root of the same underlying, preferring the root as written', async () => {
    expect(render(await find('SPX 2024-03-22 5100 put'))).toEqual({
      s: 'ok',
      optionSymbol: 'SPXW240322P05100000',
    });
    expect(render(await find('SPX 3/15/2024 $5,100 C'))).toEqual({
      s: 'ok',
      optionSymbol: 'SPX240315C05100000',
    });
    expect(render(await find('spxw 3/15/24 5100 call'))).toEqual({
      s: 'ok',
      optionSymbol: 'SPXW240315C05100000',
    });
  });

  it('answers 404 for a contract the store does not list at the as-of, 400 for unreadable text', async () => {
    const notFound = {
      status: 404,
      body: { s: 'error', errmsg: 'No option found. No option was found for this strike and expiration.' },
    };
    expect(await refusal(find('SPY 3/22/24 506 call'))).toEqual(notFound);
    expect(await refusal(find('SPY 3/22/24 500 call', live('2024-03-11 12:00')))).toEqual(notFound);
    expect(await refusal(find('SPY 3/22/24 call'))).toEqual({
      status: 400,
      body: {
        s: 'error',
        errmsg:
          'Invalid lookup text: expected underlying, expiration date, strike and side separated by spaces.',
      },
    });
  });
});

describe('expirations', () => {
  const list = (query: Record<string, string>, asOf: AsOf = dated('2024-03-14'), underlying = 'SPY') =>
    call(expirations, { underlying }, query, asOf);

  docs.it(
    'lists the expirations of the as-of session as dates with a scalar updated, in the documented shape',
    async () => {
      const body = render(await list({}));
      expect(body).toEqual({
        s: 'ok',
        expirations: ['2024-03-15', '2024-03-22', '2024-03-28', '2024-04-19'],
        updated: et('2024-03-14 16:00'),
      });
      expect(shapeMismatches(body, example('options_expirations.json'))).toEqual([]);
      expect(await list({})).toMatchObject({
        fields: [{ key: 'expirations', human: 'Expirations', kind: 'date' }],
        scalars: [{ key: 'updated', human: 'Date', kind: 'instant', position: 'after' }],
        billing: 'per-response',
      });
    },
  );

  it('adds nonstandard expirations on request and keeps only those listing a strike', async () => {
    expect(render(await list({ nonstandard: 'true' }))['expirations']).toEqual([
      '2024-03-15',
      '2024-03-22',
      '2024-03-28',
      '2024-04-19',
      '2024-05-17',
    ]);
    expect(render(await list({ strike: '520' }))['expirations']).toEqual(['2024-04-19']);
    expect(await list({ strike: '521' })).toMatchObject({ kind: 'no_data' });
    expect(await refusal(list({ strike: 'atm' }))).toMatchObject({ status: 400 });
  });

  it('drops expired dates on current requests and stamps updated with the snapshot served', async () => {
    expect(render(await list({}, live('2024-03-18 10:00')))).toEqual({
      s: 'ok',
      expirations: ['2024-03-22', '2024-03-28', '2024-04-19'],
      updated: et('2024-03-15 16:00'),
    });
    expect(render(await list({}, dated('2024-03-14'), 'SPX'))['expirations']).toEqual([
      '2024-03-15',
      '2024-03-22',
    ]);
  });

  it('answers Symbol not found for an unknown underlying and no_data for a session without rows', async () => {
    expect(await list({}, dated('2024-03-14'), 'QQQ')).toEqual({
      kind: 'no_data',
      errmsg: 'Symbol not found.',
    });
    expect(await list({}, dated('2024-03-12'))).toEqual({
      kind: 'no_data',
      nextTime: et('2024-03-13 16:00'),
      prevTime: null,
    });
  });
});

describe('strikes', () => {
  const list = (query: Record<string, string>, asOf: AsOf = dated('2024-03-14'), underlying = 'SPY') =>
    call(strikes, { underlying }, query, asOf);

  docs.it(
    'answers updated and one array of strikes per expiration date, in the documented shape',
    async () => {
      const body = render(await list({ expiration: '2024-04-19' }));
      expect(body).toEqual({
        s: 'ok',
        updated: et('2024-03-14 16:00'),
        '2024-04-19': [495, 500, 505, 510, 520],
      });
      const documented = shapeOf(example('options_strikes_2023_removed_page.json')).map(([, types]) => types);
      expect(shapeOf(body).map(([, types]) => types)).toEqual(documented);
    },
  );

  it('lists every current expiration without `expiration`, and no_data for one not listed', async () => {
    expect(render(await list({}, dated('2024-03-14'), 'SPX'))).toEqual({
      s: 'ok',
      updated: et('2024-03-14 16:15'), // the SPX snapshot's true quote time (semantics §3.1)
      '2024-03-15': [5100, 5150],
      '2024-03-22': [5100, 5150],
    });
    expect(Object.keys(render(await list({}, live('2024-03-18 10:00'))))).toEqual([
      's',
      'updated',
      '2024-03-22',
      '2024-03-28',
      '2024-04-19',
    ]);
    expect(await list({ expiration: '2024-03-29' })).toMatchObject({ kind: 'no_data' });
    expect(await list({}, dated('2024-03-14'), 'QQQ')).toEqual({
      kind: 'no_data',
      errmsg: 'Symbol not found.',
    });
    expect(await refusal(list({ expiration: 'next' }))).toMatchObject({ status: 400 });
  });
});
