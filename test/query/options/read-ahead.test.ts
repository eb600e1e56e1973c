import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etWallToSeconds, sessionsBetween } from '../../../src/market-time/index.js';
import { type AsOf, currentAsOf } from '../../../src/pit/as-of.js';
import { announceSessionLoop, readAheadRows } from '../../../src/query/options/read-ahead.js';
import { assemble, scopeRows } from '../../../src/query/options/scope-answer.js';
import { sessionBlockRows } from '../../../src/query/options/session-block.js';
import { sessionPairRows } from '../../../src/query/options/session-pair.js';
import { rowSource } from '../../../src/query/options/snapshot-sql.js';
import { wholeHistoryRows } from '../../../src/query/options/whole-history.js';
import { StoreCache } from '../../../src/store/cache.js';
import { StoreReader } from '../../../src/store/store.js';
import { seededRandom } from '../../helpers/seeded-random.js';
import { expectColumnsAsRecords } from './answer-columns.js';

let reader: StoreReader;
beforeAll(async () => {
  reader = await StoreReader.open('data/sample');
});
afterAll(() => reader.close());

/** The records of an answer, sorted, as plain values: what a request would print. */
function recordsOf(asOf: AsOf, rows: Parameters<typeof assemble>[1]) {
  return assemble(asOf, rows).records;
}

describe('read-ahead for session loops', () => {
  it('answers every as-of of a loop exactly as the query does, for every mode, dated and current', async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    // Every fifth session over four months: the loop outruns its first block and reads a second one.
    const sessions = sessionsBetween('2020-03-02', '2020-06-30').filter((_, i) => i % 5 === 0);
    const scope = { underlying: 'SPY' };
    let fromBlock = 0;
    for (const session of sessions) {
      const asOfs: AsOf[] = [
        currentAsOf('live', etWallToSeconds(session, '15:45')),
        currentAsOf('live', etWallToSeconds(session, '09:00')),
        currentAsOf('eod', etWallToSeconds(session, '18:00')),
        { kind: 'dated', session },
      ];
      for (const asOf of asOfs) {
        const ahead = await readAheadRows(reader.sql, cache, asOf, scope);
        if (ahead === undefined) continue;
        fromBlock++;
        expect(recordsOf(asOf, ahead), `${session} ${JSON.stringify(asOf)}`).toEqual(
          recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, scope))),
        );
        // A contract of the chain (one listed through the whole range, and one that expires inside it)
        // is answered from the same block exactly as its own query answers it.
        for (const optionSymbol of ['SPY200918P00250000', 'SPY200417P00240000']) {
          const contract = { optionSymbol, underlying: 'SPY' };
          const held = await readAheadRows(reader.sql, cache, asOf, contract);
          expect(held, `${optionSymbol} ${session}`).toBeDefined();
          expect(recordsOf(asOf, held!)).toEqual(
            recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, contract))),
          );
        }
      }
    }
    // After the first session the loop is recognised and most answers come from blocks.
    expect(fromBlock).toBeGreaterThan((sessions.length - 1) * 3);
  }, 240_000);

  it('does not start a read-ahead for a single request, a backward step or one forward step', async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const at = (session: string): AsOf => currentAsOf('live', etWallToSeconds(session, '15:45'));
    const contract = { optionSymbol: 'SPY200417P00240000', underlying: 'SPY' };
    const spy = { underlying: 'SPY' };
    expect(await readAheadRows(reader.sql, cache, at('2020-03-16'), contract)).toBeUndefined();
    expect(await readAheadRows(reader.sql, cache, at('2020-03-13'), spy)).toBeUndefined();
    // Random requests step forward now and then: one step is not yet a loop, two in a row are.
    expect(await readAheadRows(reader.sql, cache, at('2020-03-16'), spy)).toBeUndefined();
    expect(await readAheadRows(reader.sql, cache, at('2020-03-16'), spy)).toBeUndefined();
    expect(await readAheadRows(reader.sql, cache, at('2020-03-10'), spy)).toBeUndefined();
    expect(await readAheadRows(reader.sql, cache, at('2020-03-11'), spy)).toBeUndefined();
    expect(await readAheadRows(reader.sql, cache, at('2020-03-12'), spy)).toBeDefined();
  });

  it('counts the block a loop holds against the session cache, and keeps the loop going as random requests fill it', async () => {
    const capacity = 8 * 2 ** 20;
    const cache = new StoreCache(() => reader.dataVersion, { sessionCacheBytes: capacity });
    const at = (session: string, time = '15:45') =>
      currentAsOf('live', etWallToSeconds(session, time)) as Extract<AsOf, { kind: 'current' }>;
    const spy = { underlying: 'SPY' };
    const fits = () => cache.sessionCacheBytes === 0 || cache.sessionCacheBytes + cache.heldBytes <= capacity;
    expect(cache.heldBytes).toBe(0);
    for (const session of ['2020-03-10', '2020-03-11'])
      await readAheadRows(reader.sql, cache, at(session), spy);
    expect(await readAheadRows(reader.sql, cache, at('2020-03-12'), spy)).toBeDefined();
    const held = cache.heldBytes;
    expect(held).toBeGreaterThan(0);
    expect(fits()).toBe(true);
    // Requests at random instants of other months fill the session cache around the loop's block.
    const random = seededRandom(7);
    const later = sessionsBetween('2020-05-01', '2020-08-31');
    for (let i = 0; i < 12; i++) {
      const session = later[Math.floor(random() * later.length)]!;
      await sessionPairRows(reader.sql, cache, at(session, '11:00'), spy);
      expect(fits(), `after ${session}`).toBe(true);
    }
    // The loop goes on from the block it holds, still counted.
    const next = at('2020-03-13');
    const answer = await readAheadRows(reader.sql, cache, next, spy);
    expect(answer).toBeDefined();
    expect(recordsOf(next, answer!)).toEqual(
      recordsOf(next, rowSource(await scopeRows(reader.sql, next, spy))),
    );
    expect(cache.heldBytes).toBe(held);
  });

  it('recognises a minute-by-minute loop inside one session (intraday snapshots) and answers as the query does', async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const spy = { underlying: 'SPY' };
    const at = (time: string): AsOf => currentAsOf('live', etWallToSeconds('2020-03-16', time));
    // The same instant twice is not a step; two later instants in a row are.
    expect(await readAheadRows(reader.sql, cache, at('10:00'), spy)).toBeUndefined();
    expect(await readAheadRows(reader.sql, cache, at('10:00'), spy)).toBeUndefined();
    expect(await readAheadRows(reader.sql, cache, at('10:01'), spy)).toBeUndefined();
    for (const time of ['10:02', '10:03', '15:44', '15:45', '16:00']) {
      const held = await readAheadRows(reader.sql, cache, at(time), spy);
      expect(held, time).toBeDefined();
      expect(recordsOf(at(time), held!)).toEqual(
        recordsOf(at(time), rowSource(await scopeRows(reader.sql, at(time), spy))),
      );
    }
  });

  it("answers a loop over one contract from its underlying's block, as its own query does", async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const contract = { optionSymbol: 'SPY200417P00240000', underlying: 'SPY' };
    const sessions = sessionsBetween('2020-03-10', '2020-03-20');
    let fromBlock = 0;
    for (const session of sessions) {
      const asOf = currentAsOf('live', etWallToSeconds(session, '15:45'));
      const held = await readAheadRows(reader.sql, cache, asOf, contract);
      if (held === undefined) continue;
      fromBlock++;
      expect(recordsOf(asOf, held), session).toEqual(
        recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, contract))),
      );
    }
    expect(fromBlock).toBe(sessions.length - 2);
  });

  it("reads an announced loop's period from its first request, answering as the query does", async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    announceSessionLoop(cache, '2020-03-02', '2020-04-30');
    const first = currentAsOf('live', etWallToSeconds('2020-03-02', '15:45'));
    const held = await readAheadRows(reader.sql, cache, first, { underlying: 'SPY' });
    expect(held).toBeDefined();
    expect(recordsOf(first, held!)).toEqual(
      recordsOf(first, rowSource(await scopeRows(reader.sql, first, { underlying: 'SPY' }))),
    );
    // The period's last session is in the same block: no second read.
    const last = currentAsOf('live', etWallToSeconds('2020-04-30', '15:45'));
    const later = await readAheadRows(reader.sql, cache, last, { underlying: 'SPY' });
    expect(recordsOf(last, later!)).toEqual(
      recordsOf(last, rowSource(await scopeRows(reader.sql, last, { underlying: 'SPY' }))),
    );
    // Outside the period nothing is announced: a single request is not a loop.
    const outside = currentAsOf('live', etWallToSeconds('2020-09-01', '15:45'));
    expect(
      await readAheadRows(reader.sql, new StoreCache(() => reader.dataVersion), outside, {
        underlying: 'SPY',
      }),
    ).toBeUndefined();
  });
});

/** The chains random requests ask: an ETF, an index with its weeklies' root, and a stock. */
const RANDOM_SCOPES = [
  { underlying: 'SPY' },
  { underlying: 'SPX' },
  { underlying: 'SPX', root: 'SPXW' },
  { underlying: 'AAPL' },
];

describe('random access to dated sessions', () => {
  it("answers a dated chain at sessions asked in random order from their one session's rows, as the query does", async () => {
    // A small cache, so that sessions are let go and read again while the contracts stay shared.
    const cache = new StoreCache(() => reader.dataVersion, { sessionCacheBytes: 256 * 1024 });
    const sessions = sessionsBetween('2019-01-02', '2020-12-31');
    const random = seededRandom(20_190_102);
    for (let i = 0; i < 24; i++) {
      const session = sessions[Math.floor(random() * sessions.length)]!;
      const scope = RANDOM_SCOPES[i % RANDOM_SCOPES.length]!;
      const asOf: AsOf = { kind: 'dated', session };
      const expected = recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, scope)));
      expect(expected.length, `${session} ${JSON.stringify(scope)}`).toBeGreaterThan(0);
      expect(recordsOf(asOf, await sessionBlockRows(reader.sql, cache, asOf, scope))).toEqual(expected);
      // Asked again: from the cache, the same.
      expect(recordsOf(asOf, await sessionBlockRows(reader.sql, cache, asOf, scope))).toEqual(expected);
      // Printed from the block's columns, without records: the query's records' fields.
      expectColumnsAsRecords(
        asOf,
        await sessionBlockRows(reader.sql, cache, asOf, scope),
        expected,
        `${session} ${JSON.stringify(scope)}`,
      );
    }
    expect(cache.sessionCacheBytes).toBeLessThanOrEqual(256 * 1024);
  }, 120_000);
});

describe('random access at current instants', () => {
  it('answers a current chain at random instants from a block of its session and the one before, as the query does', async () => {
    const cache = new StoreCache(() => reader.dataVersion, { sessionCacheBytes: 1024 * 1024 });
    const sessions = sessionsBetween('2018-01-03', '2020-12-31');
    const random = seededRandom(20_201_231);
    // Before the open, between the sample's 15:45 and 16:00 snapshots, at them, after the close, and the
    // delayed, end-of-day and historical modes: a contract's latest snapshot by the cutoff may be in the
    // session, in the one before, or carried from before both.
    const instants: [mode: 'live' | 'delayed' | 'eod' | 'historical', time: string][] = [
      ['live', '09:00'],
      ['live', '15:45'],
      ['live', '15:50'],
      ['live', '16:00'],
      ['delayed', '16:10'],
      ['eod', '18:00'],
      ['historical', '12:00'],
    ];
    let fromBlock = 0;
    for (let i = 0; i < 28; i++) {
      const session = sessions[Math.floor(random() * sessions.length)]!;
      const scope = RANDOM_SCOPES[i % RANDOM_SCOPES.length]!;
      const [mode, time] = instants[i % instants.length]!;
      const asOf = currentAsOf(mode, etWallToSeconds(session, time));
      if (asOf.kind !== 'current') continue;
      const where = `${session} ${time} ${mode} ${JSON.stringify(scope)}`;
      const expected = recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, scope)));
      const paired = await sessionPairRows(reader.sql, cache, asOf, scope);
      if (paired === undefined) continue;
      fromBlock++;
      expect(recordsOf(asOf, paired), where).toEqual(expected);
      // Printed from the block's columns, without records: the query's records' fields and known-at.
      expectColumnsAsRecords(asOf, paired, expected, where);
      // Another instant of the same session, from the block kept in the cache.
      const later = currentAsOf('live', etWallToSeconds(session, '16:05'));
      if (later.kind !== 'current') continue;
      const again = await sessionPairRows(reader.sql, cache, later, scope);
      if (again === undefined) continue;
      expect(recordsOf(later, again), `${where}, then 16:05`).toEqual(
        recordsOf(later, rowSource(await scopeRows(reader.sql, later, scope))),
      );
    }
    // The sample quotes its contracts every session: the two sessions answer nearly every instant.
    expect(fromBlock).toBeGreaterThanOrEqual(24);
    expect(cache.sessionCacheBytes).toBeLessThanOrEqual(1024 * 1024);
  }, 180_000);
});

describe("an underlying's whole history", () => {
  it('is read once random requests have asked eight sessions, and answers every later one as the query does', async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const sessions = sessionsBetween('2019-01-02', '2020-12-31');
    const random = seededRandom(20_190_704);
    const spy = { underlying: 'SPY' };
    const asked = () => sessions[Math.floor(random() * sessions.length)]!;
    // The first seven distinct sessions are left to the session paths.
    const first = new Set<string>();
    while (first.size < 7) {
      const session = asked();
      if (first.has(session)) continue;
      first.add(session);
      expect(await wholeHistoryRows(reader.sql, cache, { kind: 'dated', session }, spy)).toBeUndefined();
    }
    let answered = 0;
    for (let i = 0; i < 16; i++) {
      const session = asked();
      const asOfs: AsOf[] = [
        { kind: 'dated', session },
        currentAsOf('live', etWallToSeconds(session, i % 2 === 0 ? '15:50' : '09:00')),
        currentAsOf('eod', etWallToSeconds(session, '18:00')),
      ];
      const scopes = [
        spy,
        { underlying: 'SPY', optionSymbol: 'SPY200918P00250000' },
        { underlying: 'SPY', optionSymbol: 'SPY190118C00250000' },
      ];
      for (const asOf of asOfs) {
        for (const scope of scopes) {
          const whole = await wholeHistoryRows(reader.sql, cache, asOf, scope);
          if (whole === undefined) continue;
          answered++;
          expect(
            recordsOf(asOf, whole),
            `${session} ${JSON.stringify(asOf)} ${JSON.stringify(scope)}`,
          ).toEqual(recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, scope))));
        }
      }
    }
    expect(answered).toBeGreaterThanOrEqual(16 * 3 * 3 - 6);
  }, 240_000);

  it('is not read when it would take more than half the session cache, nor read again once let go', async () => {
    // SPX's history on the sample is some 670,000 quote rows: past half of a 64 MB cache.
    const small = new StoreCache(() => reader.dataVersion, { sessionCacheBytes: 64 * 2 ** 20 });
    const sessions = sessionsBetween('2020-01-02', '2020-01-31');
    for (const session of sessions) {
      expect(
        await wholeHistoryRows(reader.sql, small, { kind: 'dated', session }, { underlying: 'SPX' }),
      ).toBeUndefined();
    }
    expect(small.sessionCacheBytes).toBe(0);
    // AAPL's fits; read once, then let go by a smaller entry's arrival past the capacity, not read again.
    const cache = new StoreCache(() => reader.dataVersion, { sessionCacheBytes: 96 * 2 ** 20 });
    const aapl = { underlying: 'AAPL' };
    let read = false;
    for (const session of sessions) {
      read ||= (await wholeHistoryRows(reader.sql, cache, { kind: 'dated', session }, aapl)) !== undefined;
    }
    expect(read).toBe(true);
    await cache.sized(
      'filler',
      async () => 'x',
      () => 96 * 2 ** 20,
    );
    expect(
      await wholeHistoryRows(reader.sql, cache, { kind: 'dated', session: '2020-02-03' }, aapl),
    ).toBeUndefined();
  }, 120_000);
});

describe('a chain scope of one expiration', () => {
  it('answers, from a loop block, a session block and the query alike, the whole chain’s records of that date', async () => {
    const loopCache = new StoreCache(() => reader.dataVersion);
    const randomCache = new StoreCache(() => reader.dataVersion);
    const sessions = sessionsBetween('2020-04-01', '2020-05-29').filter((_, i) => i % 8 === 0);
    let fromBlock = 0;
    for (const session of sessions) {
      const asOfs: AsOf[] = [
        currentAsOf('live', etWallToSeconds(session, '15:45')),
        currentAsOf('eod', etWallToSeconds(session, '18:00')),
        { kind: 'dated', session },
      ];
      for (const asOf of asOfs) {
        const whole = recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, { underlying: 'SPX' })));
        // A weekly that expires inside the period, a quarterly beyond it, a date with no contract, and one
        // of SPXW's alone.
        for (const [root, expiration] of [
          [undefined, '2020-05-15'],
          [undefined, '2020-06-30'],
          [undefined, '2020-05-16'],
          ['SPXW', '2020-05-29'],
        ] as const) {
          const scope =
            root === undefined ? { underlying: 'SPX', expiration } : { underlying: 'SPX', root, expiration };
          const label = `${session} ${JSON.stringify(asOf)} ${JSON.stringify(scope)}`;
          const expected = whole.filter(
            (record) =>
              record.expirationDate === expiration &&
              (root === undefined || record.optionSymbol.startsWith(root)),
          );
          expect(recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, scope))), label).toEqual(
            expected,
          );
          const ahead = await readAheadRows(reader.sql, loopCache, asOf, scope);
          if (ahead !== undefined) {
            fromBlock++;
            expect(recordsOf(asOf, ahead), label).toEqual(expected);
          }
          if (asOf.kind === 'dated') {
            expect(
              recordsOf(asOf, await sessionBlockRows(reader.sql, randomCache, asOf, scope)),
              label,
            ).toEqual(expected);
          }
        }
      }
    }
    expect(fromBlock).toBeGreaterThan(sessions.length * 4);
  }, 240_000);

  it('answers current instants at sessions in random order from a block of that date alone, as the query does', async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const sessions = sessionsBetween('2019-01-02', '2020-12-31');
    let seed = 20_200_316;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let answered = 0;
    for (let i = 0; i < 16; i++) {
      const session = sessions[Math.floor(random() * sessions.length)]!;
      const whole = { underlying: i % 2 === 0 ? 'SPY' : 'SPX' };
      // The chain's nearest expirations at that session, as the query lists them.
      const dates = [
        ...new Set(
          recordsOf(
            { kind: 'dated', session },
            rowSource(await scopeRows(reader.sql, { kind: 'dated', session }, whole)),
          ).map((record) => record.expirationDate),
        ),
      ].sort();
      const expiration = dates[Math.floor(random() * Math.min(4, dates.length))]!;
      const scope = { ...whole, expiration };
      for (const asOf of [
        currentAsOf('live', etWallToSeconds(session, '15:45')),
        currentAsOf('live', etWallToSeconds(session, '09:00')),
        currentAsOf('live', etWallToSeconds(session, '16:10')),
        currentAsOf('eod', etWallToSeconds(session, '18:00')),
      ]) {
        const label = `${session} ${JSON.stringify(asOf)} ${JSON.stringify(scope)}`;
        const ahead = await readAheadRows(reader.sql, cache, asOf, scope);
        if (ahead === undefined) continue;
        answered++;
        expect(recordsOf(asOf, ahead), label).toEqual(
          recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, scope))),
        );
      }
    }
    // Random sessions never make a loop: these came from the one-expiration blocks.
    expect(answered).toBeGreaterThan(40);
  }, 240_000);
});
