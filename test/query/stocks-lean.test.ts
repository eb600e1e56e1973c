import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { stageFiles } from '../../src/ingest/ingest.js';
import { candles } from '../../src/query/endpoints/stocks-candles.js';
import { quotes } from '../../src/query/endpoints/stocks-quotes.js';
import { sharedPath, withData } from '../helpers/shared-data.js';
import { buildStore, context, et, outcome, type TestStore } from './stock-helpers/store.js';

const MINUTE_DAYS = ['20131004', '20131007', '20131008', '20131009', '20131010', '20131011'];
const minuteKey = (day: string) => `data/stocks/lean_minute/${day}_spy_minute_trade.csv`;
const minuteFile = (day: string) => sharedPath(minuteKey(day));
const FACTORS = 'data/stocks/lean_factor_file_aapl.csv';
const { afterAll, beforeAll, describe, it } = withData([...MINUTE_DAYS.map(minuteKey), FACTORS]);

let store: TestStore;
beforeAll(async () => {
  store = await buildStore(async (sql) => {
    await stageFiles(sql, MINUTE_DAYS.map(minuteFile), 'candles');
    await stageFiles(
      sql,
      [
        sharedPath('data/stocks/lean_daily_spy_raw_19980102_20210331.csv'),
        sharedPath('data/stocks/lean_daily_aapl_raw_19980102_20210331.csv'),
      ],
      'candles',
    );
    await stageFiles(sql, [sharedPath(FACTORS)], 'lean-factors');
  });
});
afterAll(() => store.close());

const ask = (resolution: string, symbol: string, query: Record<string, string>, now: number) =>
  outcome(candles(context(store.sql, { now, path: { resolution, symbol }, query })));

type Bar = { t: number; o: number; h: number; l: number; c: number; v: number };

/** The regular-hours minute bars of a Lean file, read directly (ms since midnight ET, prices × 10000). */
function leanMinutes(day: string): (Bar & { ms: number })[] {
  const date = `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6)}`;
  return readFileSync(minuteFile(day), 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(',').map(Number))
    .filter(([ms]) => ms! >= 34_200_000 && ms! < 57_600_000)
    .map(([ms, o, h, l, c, v]) => ({
      ms: ms!,
      t: et(date) + ms! / 1000,
      o: o! / 10_000,
      h: h! / 10_000,
      l: l! / 10_000,
      c: c! / 10_000,
      v: v!,
    }));
}

/** Candles by hand: minute bars grouped by whole `minutes` from 09:30. */
function byHand(day: string, minutes: number): Bar[] {
  const groups = new Map<number, (Bar & { ms: number })[]>();
  for (const bar of leanMinutes(day)) {
    const key = Math.floor((bar.ms - 34_200_000) / (minutes * 60_000));
    groups.set(key, [...(groups.get(key) ?? []), bar]);
  }
  return [...groups.values()].map((group) => ({
    t: group[0]!.t - ((group[0]!.ms - 34_200_000) % (minutes * 60_000)) / 1000,
    o: group[0]!.o,
    h: Math.max(...group.map((b) => b.h)),
    l: Math.min(...group.map((b) => b.l)),
    c: group.at(-1)!.c,
    v: group.reduce((sum, b) => sum + b.v, 0),
  }));
}

const columns = (bars: readonly Bar[]) => ({
  s: 'ok',
  t: bars.map((b) => b.t),
  o: bars.map((b) => b.o),
  h: bars.map((b) => b.h),
  l: bars.map((b) => b.l),
  c: bars.map((b) => b.c),
  v: bars.map((b) => b.v),
});

const AFTER = et('2013-10-14', '12:00');

describe('candles from the real Lean SPY minute files', () => {
  it('aggregates 5-minute candles as computed by hand', async () => {
    const answer = await ask('5', 'SPY', { date: '2013-10-04' }, AFTER);
    expect(answer).toEqual({ status: 200, body: columns(byHand('20131004', 5)) });
    const first = { t: et('2013-10-04', '09:30'), o: 167.74, h: 167.83, l: 167.53, c: 167.61, v: 2462144 };
    expect(columns(byHand('20131004', 5).slice(0, 1))).toEqual(columns([first]));
  });

  it('aggregates 4H candles starting 09:30 and 13:30', async () => {
    expect(await ask('4H', 'SPY', { from: '2013-10-04', to: '2013-10-04' }, AFTER)).toEqual({
      status: 200,
      body: columns([
        { t: et('2013-10-04', '09:30'), o: 167.74, h: 168.89, l: 167.53, c: 168.69, v: 55383775 },
        { t: et('2013-10-04', '13:30'), o: 168.69, h: 169.06, l: 168.62, c: 168.89, v: 29577096 },
      ]),
    });
    expect((await ask('4H', 'SPY', { from: '2013-10-07', to: '2013-10-11' }, AFTER)).body).toEqual(
      columns(MINUTE_DAYS.slice(1).flatMap((day) => byHand(day, 240))),
    );
  });

  it('sums the minute bars of each session to its daily bar (one low differs by a cent in the vendor files)', async () => {
    const range = { from: '2013-10-04', to: '2013-10-11' };
    const sessions = (await ask('390', 'SPY', range, AFTER)).body as ReturnType<typeof columns>;
    const daily = (await ask('D', 'SPY', range, AFTER)).body as ReturnType<typeof columns>;
    expect(sessions.t).toEqual(
      MINUTE_DAYS.map((d) => et(`${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6)}`, '09:30')),
    );
    expect([sessions.o, sessions.h, sessions.c, sessions.v]).toEqual([daily.o, daily.h, daily.c, daily.v]);
    expect(sessions.l).toEqual(daily.l.map((low, i) => (i === 2 ? 165.36 : low)));
    expect(daily.l[2]).toBe(165.37);
  });

  it('adds the pre- and post-market bars the lean-minute preset keeps with extended=true', async () => {
    const query = { from: '2013-10-04', to: '2013-10-05' };
    const regular = (await ask('15', 'SPY', query, AFTER)).body as ReturnType<typeof columns>;
    const extended = (await ask('15', 'SPY', { ...query, extended: 'true' }, AFTER)).body as ReturnType<
      typeof columns
    >;
    expect(regular.t.length).toBe(26); // 09:30–16:00 in 15-minute bars
    expect(extended.t.length).toBeGreaterThan(regular.t.length);
    expect(extended.t).toEqual(expect.arrayContaining(regular.t));
  });
});

describe('AAPL splits from the Lean factor file', () => {
  const aapl = (query: Record<string, string>, now: number) =>
    ask('D', 'AAPL', { from: '2020-08-26', to: '2020-09-02', ...query }, now);

  it('divides prices by 4 and multiplies volumes before 2020-08-31 once the split has happened', async () => {
    expect(await aapl({}, et('2020-09-02', '12:00'))).toEqual({
      status: 200,
      body: columns([
        { t: et('2020-08-26'), o: 126.245, h: 126.995, l: 125.085, c: 126.5225, v: 156666644 },
        { t: et('2020-08-27'), o: 127.125, h: 127.485, l: 123.8325, c: 125.01, v: 149404284 },
        { t: et('2020-08-28'), o: 126, h: 126.4425, l: 124.5775, c: 124.8075, v: 176436116 },
        { t: et('2020-08-31'), o: 127.67, h: 131, l: 126.25, c: 129.04, v: 210024091 },
        { t: et('2020-09-01'), o: 132.91, h: 134.8, l: 130.53, c: 134.18, v: 142927370 },
      ]),
    });
  });

  it('shows raw prices before the ex-date and on request', async () => {
    const before = (await aapl({}, et('2020-08-30', '12:00'))).body as ReturnType<typeof columns>;
    expect([before.t.at(-1), before.c]).toEqual([et('2020-08-28'), [506.09, 500.04, 499.23]]);
    const raw = (await aapl({ adjustsplits: 'false', adjustdividends: 'false' }, et('2020-09-02', '12:00')))
      .body as ReturnType<typeof columns>;
    expect([raw.c, raw.v.slice(0, 1)]).toEqual([[506.09, 500.04, 499.23, 129.04, 134.18], [39166661]]);
  });

  it('compounds the 7:1 of 2014 with the 4:1 of 2020', async () => {
    const body = (await ask('D', 'AAPL', { from: '2014-06-06', to: '2014-06-09' }, et('2020-09-02')))
      .body as ReturnType<typeof columns>;
    expect([body.c, body.o]).toEqual([
      [23.0561, 23.425],
      [23.2143, 23.1725],
    ]);
  });

  it('quotes the change against the split-adjusted previous close', async () => {
    const answer = await outcome(
      quotes(context(store.sql, { now: et('2020-09-01', '12:00'), path: { symbol: 'AAPL' } })),
    );
    expect(answer.body).toMatchObject({
      last: [129.04],
      change: [4.2325],
      changepct: [0.0339],
      volume: [210024091],
      updated: [et('2020-08-31', '16:00')],
    });
  });
});
