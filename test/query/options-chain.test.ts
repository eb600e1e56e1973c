import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knownAtByFamily } from '../../src/pit/known-at.js';
import type { OptionAnswer } from '../../src/query/endpoints/option-answer.js';
import { chain } from '../../src/query/endpoints/options-chain.js';
import type { Answer, AsOf } from '../../src/query/types.js';
import { keep, parseOutputOptions, renderAnswer } from '../../src/service/format.js';
import { StoreCache } from '../../src/store/cache.js';
import type { StoreReader } from '../../src/store/store.js';
import { withData } from '../helpers/shared-data.js';
import { buildSpySpxStore, context, dated, et, live, occ } from './helpers/options-market.js';
import { refusal } from './helpers/refusal.js';
import { columns, example, render, shapeMismatches } from './helpers/shape.js';

/** The documented example bodies these tests compare with. */
const docs = withData(['spec/examples/options_chain.json']);

let reader: StoreReader;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ reader, close } = await buildSpySpxStore());
});
afterAll(async () => close());

const NOW = '2024-03-19 12:00';

function ask(query: Record<string, string>, asOf: AsOf = dated('2024-03-14'), underlying = 'SPY') {
  return chain.run(context(reader, { now: NOW, asOf, path: { underlying }, query }));
}

async function symbols(query: Record<string, string>, asOf?: AsOf, underlying?: string): Promise<unknown> {
  const result = await ask(query, asOf, underlying);
  return result.kind === 'ok' ? columns(result)['optionSymbol'] : result;
}

const series = (
  root: string,
  expiration: string,
  strikes: readonly number[],
  sides: readonly ('C' | 'P')[] = ['C', 'P'],
) => sides.flatMap((side) => strikes.map((strike) => occ(root, expiration, side, strike)));
const STRIKES = [495, 500, 505, 510];

describe('chain: shape and dated semantics', () => {
  docs.it('has the documented keys in order with the documented JSON types', async () => {
    const current = render(await ask({ strike: '500' }, live('2024-03-14 16:30')));
    expect(shapeMismatches(current, example('options_chain.json'))).toEqual([]);
    const historical = render(await ask({ strike: '500' }));
    expect(
      shapeMismatches(historical, example('options_chain.json'), ['iv', 'delta', 'gamma', 'theta', 'vega']),
    ).toEqual([]);
  });

  it('answers date=D from the EOD row of D: Greeks null, OI settled D−1, updated 16:00 ET, mid to the cent', async () => {
    const result = await ask({});
    expect(result).toMatchObject({ kind: 'ok', rowKey: 'optionSymbol', billing: 'per-1000-rows' });
    expect(columns(result)).toEqual({
      optionSymbol: series('SPY', '2024-03-15', STRIKES),
      underlying: Array(8).fill('SPY'),
      expiration: Array(8).fill(et('2024-03-15 16:00')),
      side: [...Array(4).fill('call'), ...Array(4).fill('put')],
      strike: [...STRIKES, ...STRIKES],
      // The first session with a quote; the OI settled the day before does not make a contract traded.
      firstTraded: Array(8).fill(et('2024-03-13 09:30')),
      dte: Array(8).fill(1),
      updated: Array(8).fill(et('2024-03-14 16:00')),
      bid: [8.03, 3, 0.48, 0.45, 0.53, 0.5, 2.98, 7.95],
      bidSize: Array(8).fill(10),
      // (8.03 + 8.08) / 2 is 8.055 on paper (8.05499… in binary): half-up on the exact decimal, 8.06.
      mid: [8.06, 3.05, 0.56, 0.55, 0.56, 0.55, 3.06, 8.05],
      ask: [8.08, 3.1, 0.63, 0.65, 0.58, 0.6, 3.13, 8.15],
      askSize: Array(8).fill(20),
      last: [8.08, 3.1, 0.63, 0.65, 0.58, 0.6, 3.13, 8.15],
      openInterest: [1495, 1500, 1505, 1510, 1495, 1500, 1505, 1510],
      volume: [101, 106, 111, 116, 101, 106, 111, 116],
      inTheMoney: [true, true, false, false, false, false, true, true],
      intrinsicValue: [7.5, 2.5, 0, 0, 0, 0, 2.5, 7.5],
      extrinsicValue: [0.56, 0.55, 0.56, 0.55, 0.56, 0.55, 0.56, 0.55],
      underlyingPrice: Array(8).fill(502.5),
      iv: Array(8).fill(null),
      delta: Array(8).fill(null),
      gamma: Array(8).fill(null),
      theta: Array(8).fill(null),
      vega: Array(8).fill(null),
    });
    expect(result.kind === 'ok' && result.dataAsOfSeconds).toBe(et('2024-03-14 16:00'));
  });

  it('takes the latest snapshot of D for index roots (the 16:15 close) and prints its true quote time', async () => {
    const result = await ask({ expiration: 'all', strike: '5100', side: 'call' }, dated('2024-03-14'), 'SPX');
    expect(columns(result)).toMatchObject({
      optionSymbol: ['SPX240315C05100000', 'SPXW240315C05100000', 'SPXW240322C05100000'],
      underlying: ['SPX', 'SPX', 'SPX'],
      expiration: [et('2024-03-15 09:30'), et('2024-03-15 16:15'), et('2024-03-22 16:15')],
      bid: [10, 10, 10],
      updated: Array(3).fill(et('2024-03-14 16:15')),
      openInterest: [42, 42, 42],
    });
  });

  it('answers no_data for a session without rows, for filters matching nothing, and for an unknown symbol', async () => {
    expect(await ask({}, dated('2024-03-12'))).toEqual({
      kind: 'no_data',
      nextTime: et('2024-03-13 16:00'),
      prevTime: null,
    });
    expect(await ask({ strike: '1000' })).toEqual({
      kind: 'no_data',
      nextTime: et('2024-03-15 16:00'),
      prevTime: et('2024-03-13 16:00'),
    });
    expect(await ask({}, dated('2024-03-14'), 'QQQ')).toEqual({
      kind: 'no_data',
      errmsg: 'Symbol not found.',
    });
    expect(await ask({}, dated('2024-03-16'))).toEqual({
      kind: 'no_data',
      errmsg: 'Market closed on this date.',
    });
  });
});

/** Output options a columnar answer is printed with: pages and columns pick rows of its kept texts. */
const OUTPUTS: readonly Record<string, string>[] = [
  {},
  { dateformat: 'timestamp' },
  { dateformat: 'spreadsheet' },
  { limit: '3', offset: '2' },
  { limit: '5' },
  { columns: 'optionSymbol,bid,updated,iv' },
  { human: 'true' },
  { format: 'csv' },
  { format: 'csv', dateformat: 'timestamp', headers: 'false' },
  { format: 'csv', limit: '4', offset: '1' },
  {},
];

describe('chain: a whole dated chain printed from its columns', () => {
  it('prints what its records print, and makes the records when they are read', async () => {
    // A cache of its own: answers other tests made records of answer from their records.
    const cache = new StoreCache(() => reader.dataVersion);
    const ask = (query: Record<string, string>, asOf: AsOf, underlying: string) =>
      chain.run({ ...context(reader, { now: NOW, asOf, path: { underlying }, query }), cache });
    for (const [underlying, session] of [
      ['SPY', '2024-03-14'],
      ['SPY', '2024-03-15'],
      ['SPX', '2024-03-14'],
    ] as const) {
      const whole = await ask({ expiration: 'all' }, dated(session), underlying);
      // A row filter that keeps every row: the answer is then made from records.
      const fromRecords = await ask({ expiration: 'all', strikeLimit: '100000' }, dated(session), underlying);
      if (whole.kind !== 'ok' || fromRecords.kind !== 'ok')
        throw new Error(`${underlying} ${session}: no data`);
      // Printed from columns, not from records.
      expect(Object.getPrototypeOf(whole)).not.toBe(Object.getPrototypeOf(fromRecords));
      expect(columns(whole)).toEqual(columns(fromRecords));
      expect(render(whole)).toEqual(render(fromRecords));
      expect(whole).toMatchObject({
        kind: 'ok',
        rowKey: 'optionSymbol',
        billing: 'per-1000-rows',
        dataAsOfSeconds: fromRecords.dataAsOfSeconds,
      });
      // The bodies as the service prints them, for every output option, asked twice (kept texts reused).
      for (const output of OUTPUTS) {
        const options = parseOutputOptions(output);
        const body = (answer: Answer) => renderAnswer(answer, keep(answer, options).fields, options).body;
        const expected = body(fromRecords);
        expect(body(whole), JSON.stringify(output)).toBe(expected);
        expect(body(whole), JSON.stringify(output)).toBe(expected);
      }
      const records = (whole as typeof whole & { optionRecords: unknown[] }).optionRecords;
      // Made once, however often read (the backtest face reads them twice).
      expect((whole as typeof whole & { optionRecords: unknown[] }).optionRecords).toBe(records);
      expect(records).toEqual((fromRecords as typeof whole & { optionRecords: unknown[] }).optionRecords);
    }
  });
});

describe('chain: expiration filters', () => {
  it('defaults to the front monthly of the as-of session, and expiration=all lists every standard one', async () => {
    expect(await symbols({})).toEqual(series('SPY', '2024-03-15', STRIKES));
    expect(await symbols({}, dated('2024-03-18'))).toEqual(series('SPY', '2024-04-19', [...STRIKES, 520]));
    const all = await symbols({ expiration: 'all', strike: '500' });
    expect(all).toEqual([
      'SPY240315C00500000',
      'SPY240315P00500000',
      'SPY240322C00500000',
      'SPY240322P00500000',
      'SPY240328C00500000',
      'SPY240328P00500000',
      'SPY240419C00500000',
      'SPY240419P00500000',
    ]);
    expect(await symbols({ expiration: 'all', strike: '500', nonstandard: 'true' })).toEqual([
      ...(all as string[]),
      'SPY1240517C00500000',
      'SPY1240517P00500000',
    ]);
  });

  it('picks one expiration by date, or the one closest to dte (the earlier on a tie); expiration wins', async () => {
    expect(await symbols({ expiration: '2024-03-22', strike: '500' })).toEqual(
      series('SPY', '2024-03-22', [500]),
    );
    expect(await symbols({ expiration: '03/22/2024', strike: '500' })).toEqual(
      series('SPY', '2024-03-22', [500]),
    );
    expect(await symbols({ dte: '10', strike: '500' })).toEqual(series('SPY', '2024-03-22', [500]));
    expect(await symbols({ dte: '11', strike: '500' })).toEqual(series('SPY', '2024-03-22', [500]));
    expect(await symbols({ dte: '12', strike: '500' })).toEqual(series('SPY', '2024-03-28', [500]));
    expect(await symbols({ dte: '0', strike: '500' })).toEqual(series('SPY', '2024-03-15', [500]));
    expect(await symbols({ expiration: '2024-03-28', dte: '1', strike: '500' })).toEqual(
      series('SPY', '2024-03-28', [500]),
    );
  });

  it('windows by from/to (both inclusive) and by month/year', async () => {
    const expirations = async (query: Record<string, string>) => {
      const result = await ask({ strike: '500', side: 'call', ...query });
      return result.kind === 'ok' ? columns(result)['expiration'] : result;
    };
    const at = (date: string) => et(`${date} 16:00`);
    expect(await expirations({ from: '2024-03-22', to: '2024-03-28' })).toEqual([
      at('2024-03-22'),
      at('2024-03-28'),
    ]);
    expect(await expirations({ from: '2024-03-23' })).toEqual([at('2024-03-28'), at('2024-04-19')]);
    expect(await expirations({ to: '2024-03-21' })).toEqual([at('2024-03-15')]);
    expect(await expirations({ month: '4' })).toEqual([at('2024-04-19')]);
    expect(await expirations({ month: '3', year: '2024' })).toEqual([
      at('2024-03-15'),
      at('2024-03-22'),
      at('2024-03-28'),
    ]);
    expect(await expirations({ year: '2025' })).toMatchObject({ kind: 'no_data' });
  });

  it('keeps only the kinds asked for with weekly/monthly/quarterly=true and drops those set false', async () => {
    const expirations = async (query: Record<string, string>) => {
      const result = await ask({ strike: '500', side: 'put', ...query });
      return result.kind === 'ok' ? columns(result)['optionSymbol'] : result;
    };
    expect(await expirations({ weekly: 'true' })).toEqual(['SPY240322P00500000']);
    expect(await expirations({ quarterly: 'true' })).toEqual(['SPY240328P00500000']);
    expect(await expirations({ monthly: 'true', quarterly: 'true' })).toEqual([
      'SPY240315P00500000',
      'SPY240328P00500000',
      'SPY240419P00500000',
    ]);
    expect(await expirations({ monthly: 'false' })).toEqual(['SPY240322P00500000', 'SPY240328P00500000']);
    expect(await refusal(ask({ weekly: 'true', monthly: 'false' }))).toMatchObject({ status: 400 });
  });

  it('selects AM or PM settlement on index chains and refuses am/pm on a stock', async () => {
    const spx = (query: Record<string, string>) =>
      symbols({ strike: '5100', side: 'put', ...query }, undefined, 'SPX');
    expect(await spx({})).toEqual(['SPX240315P05100000', 'SPXW240315P05100000']);
    expect(await spx({ am: 'true' })).toEqual(['SPX240315P05100000']);
    expect(await spx({ pm: 'true' })).toEqual(['SPXW240315P05100000']);
    expect(await spx({ am: 'false', expiration: 'all' })).toEqual([
      'SPXW240315P05100000',
      'SPXW240322P05100000',
    ]);
    expect(await symbols({ expiration: 'all', strike: '5100', side: 'put' }, undefined, 'SPXW')).toEqual([
      'SPXW240315P05100000',
      'SPXW240322P05100000',
    ]);
    const refused = await refusal(ask({ am: 'true' }));
    expect(refused).toEqual({
      status: 400,
      body: {
        s: 'error',
        errmsg: 'Bad parameters. am and pm apply to index options only; SPY is not an index.',
      },
    });
  });

  it('refuses dte with from/to, and values it cannot read, naming the parameter', async () => {
    expect(await refusal(ask({ dte: '30', from: '2024-03-15' }))).toEqual({
      status: 400,
      body: { s: 'error', errmsg: 'Bad parameters. dte cannot be combined with from or to.' },
    });
    expect(await refusal(ask({ expiration: 'soon' }))).toEqual({
      status: 400,
      body: { s: 'error', errmsg: 'Invalid parameter expiration: expected a date or "all", got "soon".' },
    });
    expect(await refusal(ask({ dte: '-1' }))).toMatchObject({ status: 400 });
    expect(await refusal(ask({ month: '13' }))).toMatchObject({ status: 400 });
    expect(await refusal(ask({ weekly: 'yes' }))).toMatchObject({ status: 400 });
  });
});

describe('chain: strike, delta, side, range and strikeLimit', () => {
  const strikes = async (query: Record<string, string>, asOf?: AsOf) => {
    const result = await ask({ side: 'call', ...query }, asOf);
    return result.kind === 'ok' ? columns(result)['strike'] : result;
  };

  it('reads every strike form', async () => {
    expect(await strikes({ strike: '500' })).toEqual([500]);
    expect(await strikes({ strike: '500,510' })).toEqual([500, 510]);
    expect(await strikes({ strike: '>500' })).toEqual([505, 510]);
    expect(await strikes({ strike: '>=505' })).toEqual([505, 510]);
    expect(await strikes({ strike: '<500' })).toEqual([495]);
    expect(await strikes({ strike: '<=500' })).toEqual([495, 500]);
    expect(await strikes({ strike: '500-505' })).toEqual([500, 505]);
    expect(await strikes({ strike: '495,>=510' })).toEqual([495, 510]);
    expect(await refusal(ask({ strike: '510-500' }))).toMatchObject({ status: 400 });
    expect(await refusal(ask({ strike: 'abc' }))).toEqual({
      status: 400,
      body: {
        s: 'error',
        errmsg:
          'Invalid parameter strike: could not read "abc" (use 400, 400,405, >400, >=400, <400, <=410 or 400-410).',
      },
    });
  });

  it('filters by absolute delta on current chains (closest per side, ranges), strike winning over delta', async () => {
    const at = live('2024-03-14 15:50');
    const answer = async (query: Record<string, string>) => {
      const result = await ask({ expiration: '2024-03-22', ...query }, at);
      if (result.kind !== 'ok') return result;
      const c = columns(result);
      return c['optionSymbol']!.map((symbol, i) => [symbol, c['delta']![i]]);
    };
    const full = (await answer({})) as [string, number][];
    expect(full.every(([, delta]) => typeof delta === 'number')).toBe(true);
    // vendor Greeks on the 500 strikes of this snapshot (0.55 / −0.45); computed ones elsewhere
    expect(full.filter(([symbol]) => symbol.endsWith('00500000'))).toEqual([
      ['SPY240322C00500000', 0.55],
      ['SPY240322P00500000', -0.45],
    ]);
    const closest = (target: number, side: 'C' | 'P') =>
      full
        .filter(([symbol]) => symbol[9] === side)
        .reduce((best, row) =>
          Math.abs(Math.abs(row[1]) - target) < Math.abs(Math.abs(best[1]) - target) ? row : best,
        );
    expect(await answer({ delta: '.5' })).toEqual([closest(0.5, 'C'), closest(0.5, 'P')]);
    expect(await answer({ delta: '.30-.60' })).toEqual(
      full.filter(([, d]) => Math.abs(d) >= 0.3 && Math.abs(d) <= 0.6),
    );
    expect(await answer({ delta: '>.5' })).toEqual(full.filter(([, d]) => Math.abs(d) > 0.5));
    expect(await answer({ delta: '.5', strike: '510' })).toEqual(
      full.filter(([s]) => s.endsWith('00510000')),
    );
  });

  it('skips the delta filter silently when any contract has no delta (every dated chain)', async () => {
    expect(await strikes({ delta: '.5' })).toEqual(STRIKES);
    expect(await refusal(ask({ delta: 'half' }))).toMatchObject({ status: 400 });
  });

  it('keeps sides and moneyness as asked', async () => {
    expect(await symbols({ side: 'put', range: 'itm' })).toEqual([
      'SPY240315P00505000',
      'SPY240315P00510000',
    ]);
    expect(await symbols({ side: 'call', range: 'otm' })).toEqual([
      'SPY240315C00505000',
      'SPY240315C00510000',
    ]);
    expect(await symbols({ range: 'all', side: 'CALL' })).toEqual(
      series('SPY', '2024-03-15', STRIKES, ['C']),
    );
    expect(await refusal(ask({ range: 'atm' }))).toMatchObject({ status: 400 });
    expect(await refusal(ask({ side: 'both' }))).toMatchObject({ status: 400 });
  });

  it('keeps N strikes on each side of the money with strikeLimit, after range and side', async () => {
    expect(await symbols({ strikeLimit: '1' })).toEqual(series('SPY', '2024-03-15', [500, 505]));
    expect(await symbols({ strikeLimit: '1', range: 'itm' })).toEqual([
      'SPY240315C00500000',
      'SPY240315P00505000',
    ]);
    expect(await symbols({ strikeLimit: '2', side: 'put' })).toEqual(
      series('SPY', '2024-03-15', STRIKES, ['P']),
    );
    expect(await symbols({ strikeLimit: '1', range: 'otm', side: 'call' })).toEqual(['SPY240315C00505000']);
    expect(await refusal(ask({ strikeLimit: '0' }))).toMatchObject({ status: 400 });
  });
});

describe('chain: price and liquidity filters', () => {
  const pick = async (query: Record<string, string>, key = 'optionSymbol') => {
    const result = await ask({ side: 'call', ...query });
    return result.kind === 'ok' ? columns(result)[key] : result;
  };

  it('bounds bid and ask inclusively', async () => {
    // calls' bids 8.03, 3.00, 0.48, 0.45; asks 8.08, 3.10, 0.63, 0.65
    expect(await pick({ minBid: '3' }, 'bid')).toEqual([8.03, 3]);
    expect(await pick({ maxBid: '0.48' }, 'bid')).toEqual([0.48, 0.45]);
    expect(await pick({ minAsk: '0.63', maxAsk: '3.1' }, 'ask')).toEqual([3.1, 0.63, 0.65]);
    expect(await refusal(ask({ minBid: 'cheap' }))).toMatchObject({ status: 400 });
  });

  it('bounds the spread in dollars and in percent of the underlying price', async () => {
    // spreads 0.05, 0.10, 0.15, 0.20; underlying 502.50
    expect(await pick({ maxBidAskSpread: '0.1' }, 'strike')).toEqual([495, 500]);
    expect(await pick({ maxBidAskSpreadPct: '0.03' }, 'strike')).toEqual([495, 500, 505]); // ≤ $0.15075
    expect(await pick({ maxBidAskSpreadPct: '0.0199' }, 'strike')).toEqual([495]); // ≤ $0.099998
  });

  it('keeps contracts with at least the open interest and volume asked', async () => {
    expect(await pick({ minOpenInterest: '1505' }, 'openInterest')).toEqual([1505, 1510]);
    expect(await pick({ minVolume: '111' }, 'volume')).toEqual([111, 116]);
    expect(await pick({ minVolume: '117' })).toMatchObject({ kind: 'no_data' });
  });
});

describe('chain: current answers at the cutoff', () => {
  it('serves a 15:45 snapshot with its volume withheld until the close, and the OI published that morning', async () => {
    const result = await ask({ strike: '505' }, live('2024-03-14 15:50'));
    expect(result).toMatchObject({ kind: 'ok', billing: 'per-row', dataAsOfSeconds: et('2024-03-14 15:45') });
    const c = columns(result);
    expect([c['updated'], c['bid'], c['ask'], c['volume'], c['openInterest'], c['dte']]).toEqual([
      [et('2024-03-14 15:45'), et('2024-03-14 15:45')],
      [0.5, 3],
      [0.65, 3.15],
      [null, null],
      [1505, 1505],
      [1, 1],
    ]);
    for (const key of ['iv', 'delta', 'gamma', 'theta', 'vega']) {
      expect(c[key]!.every((value) => typeof value === 'number')).toBe(true);
    }
  });

  it('prints an answer without row filters from its columns, as the records of the same rows say', async () => {
    // A cache of its own, asked the printed answer first: answers whose records were made answer from them.
    // Columns for answers of any size (by default only past a thousand rows).
    const cache = new StoreCache(() => reader.dataVersion, { currentColumnsRows: 0 });
    const ask = (query: Record<string, string>, asOf: AsOf) =>
      chain.run({ ...context(reader, { now: NOW, asOf, path: { underlying: 'SPY' }, query }), cache });
    for (const at of ['2024-03-14 15:50', '2024-03-14 16:30', '2024-03-14 09:00']) {
      for (const query of [{}, { expiration: 'all' }]) {
        const printed = await ask(query, live(at));
        // A strike limit past every strike keeps every row, and sends the answer through its records.
        const recorded = await ask({ ...query, strikeLimit: '100' }, live(at));
        if (printed.kind !== 'ok' || recorded.kind !== 'ok') throw new Error(`no answer at ${at}`);
        const known = (printed as OptionAnswer).knownAtColumns;
        expect(known, at).toBeDefined();
        expect((recorded as OptionAnswer).knownAtColumns, at).toBeUndefined();
        expect(columns(printed), at).toEqual(columns(recorded));
        expect(printed.dataAsOfSeconds, at).toBe(recorded.dataAsOfSeconds);
        const records = (recorded as OptionAnswer).optionRecords;
        expect(known!.families, at).toEqual(knownAtByFamily(records));
        expect(known!.volumeOrWithheld, at).toEqual(records.map((r) => r.volume ?? r.withheldVolume));
      }
    }
    // By default an answer this small is made from records.
    const small = await chain.run({
      ...context(reader, {
        now: NOW,
        asOf: live('2024-03-14 15:51'),
        path: { underlying: 'SPY' },
        query: {},
      }),
      cache: new StoreCache(() => reader.dataVersion),
    });
    expect((small as OptionAnswer).knownAtColumns).toBeUndefined();
    // At 15:50 the 15:45 snapshot's volume, stamped at the close, is withheld and still judged.
    const withheld = await ask({}, live('2024-03-14 15:51'));
    expect(columns(withheld)['volume']!.every((volume) => volume === null)).toBe(true);
    expect((withheld as OptionAnswer).knownAtColumns!.volumeOrWithheld.some((v) => v !== null)).toBe(true);
  });

  it('serves the EOD row with its volume after the close, and yesterday’s row before the open, dte from its session', async () => {
    const after = columns(await ask({ strike: '505', side: 'call' }, live('2024-03-14 16:30')));
    expect([after['updated'], after['bid'], after['volume'], after['openInterest']]).toEqual([
      [et('2024-03-14 16:00')],
      [0.48],
      [111],
      [1505],
    ]);
    const before = columns(await ask({ strike: '505', side: 'call' }, live('2024-03-14 09:00')));
    expect([before['updated'], before['volume'], before['openInterest'], before['dte']]).toEqual([
      [et('2024-03-13 16:00')],
      [110],
      [505],
      [2], // semantics §3.1: dte describes the snapshot served (2024-03-13 → 2024-03-15)
    ]);
  });

  it('serves only sessions’ EOD rows in eod/historical modes', async () => {
    const eod: AsOf = {
      kind: 'current',
      cutoffSeconds: et('2024-03-14 16:15'),
      eodOnly: true,
      maxSession: '2024-03-14',
    };
    const c = columns(await ask({ strike: '505', side: 'call' }, eod));
    expect([c['updated'], c['bid'], c['volume']]).toEqual([[et('2024-03-14 16:00')], [0.48], [111]]);
  });

  it('leaves out contracts expired before the as-of session, and counts dte from the snapshot served', async () => {
    const c = columns(
      await ask({ expiration: 'all', strike: '500', side: 'call' }, live('2024-03-18 10:00')),
    );
    expect([c['optionSymbol'], c['dte'], c['updated']]).toEqual([
      ['SPY240322C00500000', 'SPY240328C00500000', 'SPY240419C00500000'],
      // Friday's snapshot on Monday: dte and updated both describe it (semantics §3.1).
      [7, 13, 35],
      Array(3).fill(et('2024-03-15 16:00')),
    ]);
  });

  it('answers no_data before the first snapshot, pointing at the first session', async () => {
    expect(await ask({}, live('2024-03-12 12:00'))).toEqual({
      kind: 'no_data',
      nextTime: et('2024-03-13 16:00'),
      prevTime: null,
    });
  });
});
