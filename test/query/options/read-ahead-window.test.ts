/**
 * A session loop that asks one date of a chain at a time (the date `dte=30` picks, the contracts a
 * backtest holds) reads blocks of the dates it can ask, not the whole chain. Every answer must still be
 * the query's: a date leaving the window, a held contract of an earlier date, and a whole-chain request in
 * the middle of the loop each read a block that holds what they ask.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etWallToSeconds, sessionsBetween } from '../../../src/market-time/index.js';
import { type AsOf, currentAsOf } from '../../../src/pit/as-of.js';
import { dayNumberOfIso, isoDateOfDay } from '../../../src/query/options/days.js';
import {
  contractSymbolsSql,
  nextWindow,
  WINDOW_SLACK_DAYS,
  windowHolds,
} from '../../../src/query/options/expiration-window.js';
import { loopBlockDates, readAheadRows } from '../../../src/query/options/read-ahead.js';
import { assemble, scopeRows } from '../../../src/query/options/scope-answer.js';
import { rowSource } from '../../../src/query/options/snapshot-sql.js';
import { StoreCache } from '../../../src/store/cache.js';
import { StoreReader } from '../../../src/store/store.js';

let reader: StoreReader;
beforeAll(async () => {
  reader = await StoreReader.open('data/sample');
});
afterAll(() => reader.close());

/** The sample's chains are sparse: windows are read for them too (the default starts at 10,000 rows a session). */
const DATES_ALWAYS = { loopWindowRows: 0 };

const recordsOf = (asOf: AsOf, rows: Parameters<typeof assemble>[1]) => assemble(asOf, rows).records;

/** `date` moved on by `days` calendar days. */
const plusDays = (date: string, days: number) => isoDateOfDay(dayNumberOfIso(date) + days);

describe('a loop over one date of a chain at a time', () => {
  it('answers every request as the query does, from blocks of the dates it asks', async () => {
    const cache = new StoreCache(() => reader.dataVersion, DATES_ALWAYS);
    const scope = { underlying: 'SPY' };
    const expirations = (
      await reader.sql.all<{ expiration: string }>(
        `SELECT DISTINCT strftime(expiration, '%Y-%m-%d') AS expiration FROM contracts
         WHERE underlying = 'SPY' ORDER BY 1`,
      )
    ).map((row) => row.expiration);
    /** The first date at least 30 days out: what a `dte=30` loop asks, about. */
    const picked = (session: string) => expirations.find((date) => date >= plusDays(session, 30))!;
    // Every other session of half a year, blocks ending and dates leaving their windows; then, past the
    // whole chain's block, two months of the next year.
    const sessions = [
      ...sessionsBetween('2019-01-02', '2019-06-28'),
      ...sessionsBetween('2020-07-01', '2020-08-31'),
    ].filter((_, i) => i % 2 === 0);
    const wholeAt = sessions[30]!;
    let held: { optionSymbol: string; expiration: string; until: string } | undefined;
    let fromBlock = 0;
    const windows: string[] = [];
    for (const session of sessions) {
      const expiration = picked(session);
      const asks: { label: string; scope: Parameters<typeof readAheadRows>[3] }[] = [
        { label: `dte ${expiration}`, scope: { ...scope, expiration } },
      ];
      // A contract picked earlier, held for 20 sessions while the loop asks later dates.
      if (held !== undefined && session > held.until) held = undefined;
      if (held !== undefined) {
        asks.push({ label: held.optionSymbol, scope: { ...scope, optionSymbol: held.optionSymbol } });
      }

      // At an instant of the session, and dated (what a mirror asks a server, session after session).
      const asOfs: AsOf[] = [
        currentAsOf('live', etWallToSeconds(session, '15:45')),
        { kind: 'dated', session },
      ];
      for (const asOf of asOfs) {
        // Once, the whole chain: its block holds every date, and once a block has passed without a
        // request of the whole chain, the loop goes back to blocks of its dates.
        const all =
          session === wholeAt && asOf.kind === 'current' ? [...asks, { label: 'whole chain', scope }] : asks;
        for (const { label, scope: asked } of all) {
          const ahead = await readAheadRows(reader.sql, cache, asOf, asked);
          if (ahead === undefined) continue;
          fromBlock++;
          const expected = recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, asked)));
          expect(recordsOf(asOf, ahead), `${session} ${asOf.kind} ${label}`).toEqual(expected);
          if (label.startsWith('dte') && held === undefined && expected.length > 0) {
            const record = expected[Math.floor(expected.length / 2)]!;
            held = {
              optionSymbol: record.optionSymbol,
              expiration: String(record.expirationDate),
              until: sessions[sessions.indexOf(session) + 20] ?? session,
            };
          }
        }
      }
      const dates = await loopBlockDates(cache, scope);
      windows.push(dates === null ? 'none' : dates === undefined ? 'whole' : `${dates.low}…${dates.high}`);
      if (dates) {
        // The block holds the date asked, and the held contract's while it is alive.
        for (const date of [
          expiration,
          ...(held !== undefined && held.expiration >= session ? [held.expiration] : []),
        ]) {
          expect(dates.low <= date && date <= dates.high, `${session} ${date} ${windows.at(-1)}`).toBe(true);
        }
      }
    }
    // Nearly every request after the first two came from a block.
    expect(fromBlock).toBeGreaterThan(2 * sessions.length + 10);
    // Blocks of some dates before the whole chain, its block, and some dates again once a block past it is read.
    const at = sessions.indexOf(wholeAt);
    expect(windows.slice(2, at).every((w) => w.includes('…'))).toBe(true);
    expect(windows[at]).toBe('whole');
    expect(windows.at(-1)).toContain('…');
  }, 240_000);
});

describe('a loop over a sparse chain', () => {
  it('reads whole blocks, which reach far ahead in a few statements', async () => {
    const cache = new StoreCache(() => reader.dataVersion);
    const scope = { underlying: 'SPY', expiration: '2019-04-18' };
    for (const session of sessionsBetween('2019-03-01', '2019-03-08')) {
      await readAheadRows(reader.sql, cache, currentAsOf('live', etWallToSeconds(session, '15:45')), scope);
    }
    expect(await loopBlockDates(cache, { underlying: 'SPY' })).toBeUndefined();
    const windowed = new StoreCache(() => reader.dataVersion, DATES_ALWAYS);
    for (const session of sessionsBetween('2019-03-01', '2019-03-08')) {
      await readAheadRows(
        reader.sql,
        windowed,
        currentAsOf('live', etWallToSeconds(session, '15:45')),
        scope,
      );
    }
    expect(await loopBlockDates(windowed, { underlying: 'SPY' })).toMatchObject({ low: '2019-04-18' });
  });
});

describe('a loop over one date of a dense chain at instants', () => {
  // The sample's chains are sparse: `oneDateSessionRows: 0` makes every session dense for the rule.
  it("answers each instant from its date's session block, as the query does, and reads no loop block", async () => {
    const scope = { underlying: 'SPY', expiration: '2019-04-18' };
    const sessions = sessionsBetween('2019-03-01', '2019-03-14');
    const dense = new StoreCache(() => reader.dataVersion, { oneDateSessionRows: 0 });
    let answered = 0;
    for (const session of sessions) {
      // Two instants a session after its last snapshot (the sample's are at 15:45 and 16:00, so the
      // session's block holds every answer): a minute loop that steps forward from session to session.
      for (const wall of ['16:05', '16:30']) {
        const asOf = currentAsOf('live', etWallToSeconds(session, wall));
        const ahead = await readAheadRows(reader.sql, dense, asOf, scope);
        if (ahead === undefined) continue;
        answered++;
        const expected = recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, scope)));
        expect(recordsOf(asOf, ahead), `${session} ${wall}`).toEqual(expected);
      }
      expect(await loopBlockDates(dense, { underlying: 'SPY' }), session).toBeNull();
    }
    expect(answered).toBeGreaterThanOrEqual(sessions.length);
    // The same requests on a chain below the rule's density make a loop and read its block.
    const sparse = new StoreCache(() => reader.dataVersion);
    for (const session of sessions) {
      for (const wall of ['16:05', '16:30']) {
        await readAheadRows(reader.sql, sparse, currentAsOf('live', etWallToSeconds(session, wall)), scope);
      }
    }
    expect(await loopBlockDates(sparse, { underlying: 'SPY' })).not.toBeNull();
  }, 120_000);
});

describe('requests of one loop asked at once', () => {
  it('answers a date and the whole chain asked together, each as the query does', async () => {
    const spy = { underlying: 'SPY' };
    const date = { ...spy, expiration: '2019-04-18' };
    const sessions = sessionsBetween('2019-03-01', '2019-03-08');
    // Both orders, on fresh loops: which of the two reads its session's density first depends on timing.
    for (const order of [
      [date, spy],
      [spy, date],
      [date, spy],
      [spy, date],
    ]) {
      const cache = new StoreCache(() => reader.dataVersion, DATES_ALWAYS);
      for (const [i, session] of sessions.entries()) {
        const asOf = currentAsOf('live', etWallToSeconds(session, '15:45'));
        // From the third session a block is read: both ask for one while the other reads its own.
        const asked = i < 2 ? [date] : order;
        const answers = await Promise.all(
          asked.map((scope) => readAheadRows(reader.sql, cache, asOf, scope)),
        );
        for (const [k, scope] of asked.entries()) {
          if (answers[k] === undefined) continue;
          expect(recordsOf(asOf, answers[k]!), `${session} ${JSON.stringify(scope)}`).toEqual(
            recordsOf(asOf, rowSource(await scopeRows(reader.sql, asOf, scope))),
          );
        }
        if (i >= 2) expect(answers.every((answer) => answer !== undefined)).toBe(true);
      }
    }
  }, 120_000);
});

describe('an expiration window', () => {
  it('holds the dates from the one asked to as far as the span and the slack move it', () => {
    const window = nextWindow(undefined, '2019-03-29', '2019-03-01', '2019-03-15');
    expect(window).toEqual({ low: '2019-03-29', high: plusDays('2019-03-29', 14 + WINDOW_SLACK_DAYS) });
    expect(windowHolds(window, '2019-03-29', '2019-03-01')).toBe(true);
    expect(windowHolds(window, window.high, '2019-03-01')).toBe(true);
    expect(windowHolds(window, plusDays(window.high, 1), '2019-03-01')).toBe(false);
    expect(windowHolds(window, '2019-03-22', '2019-03-01')).toBe(false);
    // The whole chain is never in a window; every request is in a block of every date.
    expect(windowHolds(window, undefined, '2019-03-01')).toBe(false);
    expect(windowHolds(undefined, undefined, '2019-03-01')).toBe(true);
    // A date expired before the session (and a contract the underlying does not list) has no row to miss.
    expect(windowHolds(window, '2019-02-15', '2019-03-01')).toBe(true);
    expect(windowHolds(window, '', '2019-03-01')).toBe(true);
  });

  it('keeps what the previous window held that is still alive, and lets the expired part go', () => {
    const previous = { low: '2019-03-15', high: '2019-05-17' };
    expect(nextWindow(previous, '2019-04-18', '2019-03-08', '2019-03-08')).toEqual({
      low: '2019-03-15',
      high: '2019-05-23',
    });
    expect(nextWindow(previous, '2019-04-18', '2019-03-20', '2019-03-20')).toEqual({
      low: '2019-03-20',
      high: '2019-05-23',
    });
    // A previous window wholly expired is not kept.
    expect(nextWindow(previous, '2019-07-19', '2019-06-03', '2019-06-03')).toEqual({
      low: '2019-07-19',
      high: plusDays('2019-07-19', WINDOW_SLACK_DAYS),
    });
  });

  it("bounds a read by each root's least and greatest symbol, whatever dates the symbols carry", () => {
    const contracts = [
      { root: 'SPX', option_symbol: 'SPX150117C02000000' },
      { root: 'SPX', option_symbol: 'SPX150220P01900000' },
      { root: 'SPXW', option_symbol: 'SPXW150116C02000000' },
    ];
    expect(contractSymbolsSql('q', contracts)).toBe(
      "AND ((q.option_symbol BETWEEN 'SPX150117C02000000' AND 'SPX150220P01900000') OR " +
        "(q.option_symbol BETWEEN 'SPXW150116C02000000' AND 'SPXW150116C02000000'))",
    );
    expect(contractSymbolsSql('q', [])).toBe('AND false');
  });
});
