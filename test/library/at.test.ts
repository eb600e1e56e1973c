import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LookAheadError, MarketDataError } from '../../src/errors.js';
import { commitStaged, stageFiles } from '../../src/ingest/ingest.js';
import { openStore, type Store, storeInternals } from '../../src/library/store.js';
import { etWallToSeconds } from '../../src/market-time/index.js';
import { currentAsOf } from '../../src/pit/as-of.js';
import { isOptionAnswer } from '../../src/query/endpoints/option-answer.js';
import { chain } from '../../src/query/endpoints/options-chain.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { sharedPath, withData } from '../helpers/shared-data.js';

const et = (date: string, time: string) => etWallToSeconds(date, time);

/** A store in the system temporary directory holding one vendor file. */
async function storeOf(file: string, format: 'hod' | 'cboe-eod'): Promise<{ dir: string; store: Store }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `pitchain-at-${format}-`));
  const tx = await WriteTransaction.begin(dir, { create: true });
  await commitStaged(tx, await stageFiles(tx.sql, [sharedPath(file)], format));
  return { dir, store: await openStore(dir, { threads: 1 }) };
}

async function lookAheadOf(promise: Promise<unknown>): Promise<LookAheadError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof LookAheadError)) throw new Error(`expected a LookAheadError, got ${String(error)}`);
  return error;
}

describe('store.at on the embedded sample', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore('data/sample', { threads: 1 });
  });
  afterAll(() => store.close());

  it('serves the 15:45 snapshot at 15:45 with nothing unknown, and says what it used', async () => {
    const T = '2020-03-16T15:45:00-04:00';
    const view = store.at(T);
    // The sample takes 15:45 snapshots of contracts up to 4 days out; later ones were last quoted Friday.
    const chain = await view.options.chain('SPY', { dte: 2, side: 'put' });
    expect(chain.length).toBeGreaterThan(10);
    expect(new Set(chain.columns.updated)).toEqual(new Set([et('2020-03-16', '15:45')]));
    const month = await view.options.chain('SPY', { dte: 30, side: 'put' });
    expect(new Set(month.columns.updated)).toEqual(new Set([et('2020-03-13', '16:00')]));
    expect(new Set(month.columns.dte)).toEqual(new Set([month.columns.dte[0]])); // from Friday's snapshot
    expect(chain.meta.lookAhead).toEqual([]);
    expect(chain.meta.asOf).toBe(et('2020-03-16', '15:45'));
    expect(chain.meta.dataAsOf).toBeLessThanOrEqual(et('2020-03-16', '15:45'));
    expect(chain.meta.dataVersion).toBe(store.dataVersion);
    // The same answer as the API face at the same clock.
    const api = await store.options.chain('SPY', { dte: 2, side: 'put' }, { now: T });
    expect(chain.columns).toEqual(api.columns);
    expect(view.audit()).toMatchObject({ requests: 2, lookAheadReads: 0 });
  });

  it('serves and judges a whole chain made from its columns as the same rows made into records', async () => {
    const T = '2020-03-16T15:50:00-04:00';
    const whole = { expiration: 'all' } as const;
    // A strike limit past every strike keeps every row, and sends the answer through its records.
    const recorded = { expiration: 'all', strikeLimit: 100_000 } as const;
    const asOf = currentAsOf('live', et('2020-03-16', '15:50'));
    const answer = await storeInternals(store).api.answerAt(
      chain,
      { underlying: 'SPY' },
      { expiration: 'all' },
      asOf,
      'live',
      et('2020-03-16', '15:50'),
    );
    expect(answer.kind === 'ok' && isOptionAnswer(answer) && answer.knownAtColumns !== undefined).toBe(true);
    for (const policy of ['strict', 'mask', 'flag'] as const) {
      const fromColumns = await store.at(T, { policy }).options.chain('SPY', whole);
      const fromRecords = await store.at(T, { policy }).options.chain('SPY', recorded);
      expect(fromColumns.length).toBeGreaterThan(1_000);
      expect(fromColumns.columns).toEqual(fromRecords.columns);
      expect(fromColumns.meta).toEqual(fromRecords.meta);
      expect(fromColumns.knownAt()).toEqual(fromRecords.knownAt());
    }
    // The known-at columns handed out are the caller's: the same request, answered again from the
    // response cache, is judged and served by its own.
    const first = await store.at(T).options.chain('SPY', whole);
    const listed = first.knownAt()!.listedAt[0];
    first.knownAt()!.listedAt[0] = Number.MAX_SAFE_INTEGER;
    const again = await store.at(T).options.chain('SPY', whole);
    expect(again.meta.status).toBe(203);
    expect(again.knownAt()!.listedAt[0]).toBe(listed);
  });

  it("judges a dated request for T's own session by known-at: strict refuses, mask nulls, flag keeps", async () => {
    const T = '2020-03-16T15:45:00-04:00';
    const ask = { date: '2020-03-16', dte: 30, side: 'put', strikeLimit: 1 } as const;
    const refused = await lookAheadOf(store.at(T).options.chain('SPY', ask));
    expect(refused.message).toMatch(
      /^look-ahead at 2020-03-16T19:45:00\.000Z: \w+ of SPY\w+ \(known at 2020-03-16T20:00:00\.000Z\)/,
    );
    expect(refused.asOf).toBe(et('2020-03-16', '15:45'));
    const fields = new Map(refused.fields.map((f) => [f.field, f.knownAt]));
    expect(fields.get('bid')).toBe(et('2020-03-16', '16:00'));
    expect(fields.get('volume')).toBe(et('2020-03-16', '16:00'));
    expect(fields.has('openInterest')).toBe(false); // published 09:30 on D: known
    expect(refused.fields[0]!.optionSymbol).toMatch(/^SPY/);

    const masked = await store.at(T, { policy: 'mask' }).options.chain('SPY', ask);
    expect(masked.columns.bid.every((value) => value === null)).toBe(true);
    expect(masked.columns.volume.every((value) => value === null)).toBe(true);
    expect(masked.columns.openInterest.every((value) => typeof value === 'number')).toBe(true);
    expect(masked.meta.lookAhead.map((f) => f.field)).toContain('bid');
    expect(masked.meta.dataAsOf).toBeLessThanOrEqual(et('2020-03-16', '15:45'));

    const view = store.at(T, { policy: 'flag' });
    const flagged = await view.options.chain('SPY', ask);
    const honest = await store.options.chain('SPY', ask, { now: '2020-03-17T10:00:00-04:00' });
    expect(flagged.columns).toEqual(honest.columns);
    expect(flagged.meta.lookAhead.map((f) => f.field)).toEqual(expect.arrayContaining(['bid', 'volume']));
    expect(view.audit()).toMatchObject({ requests: 1, lookAheadReads: 1 });
    expect(view.audit().entries[0]!.target).toContain('/v1/options/chain/SPY/');

    // From 16:00 on D the end-of-day row is known.
    const after = await store.at('2020-03-16T16:00:00-04:00').options.chain('SPY', ask);
    expect(after.meta.lookAhead).toEqual([]);
  });

  it('on an early-close day serves the 12:45 snapshot at 13:05, and the later snapshot belongs to the session', async () => {
    const early = await store.at('2019-11-29T13:05:00-05:00').options.chain('SPY', { dte: 3 });
    expect(new Set(early.columns.updated)).toEqual(new Set([et('2019-11-29', '12:45')]));
    await lookAheadOf(store.at('2019-11-29T13:05:00-05:00').options.chain('SPY', { date: '2019-11-29' }));
    // eod mode after the close: the session's latest snapshot (taken after the 13:00 close) still serves it.
    const eod = await store.options.chain(
      'SPY',
      { dte: 3, mode: 'eod' },
      { now: '2019-11-29T18:00:00-05:00' },
    );
    expect(new Set(eod.columns.updated)).toEqual(new Set([et('2019-11-29', '16:00')]));
    expect(new Set(eod.columns.dte).size).toBe(1);
  });

  it('across the DST change, open interest published at 09:30 EDT is not known at 09:29', async () => {
    const ask = { date: '2020-03-09', dte: 30, side: 'call', strikeLimit: 1 } as const;
    const early = await lookAheadOf(store.at('2020-03-09T09:29:00-04:00').options.chain('SPY', ask));
    const oi = early.fields.find((f) => f.field === 'openInterest');
    expect(oi?.knownAt).toBe(Date.parse('2020-03-09T13:30:00Z') / 1000);
    const flagged = await store.at('2020-03-09T09:31:00-04:00', { policy: 'flag' }).options.chain('SPY', ask);
    expect(flagged.meta.lookAhead.map((f) => f.field)).not.toContain('openInterest');
  });

  it('refuses a bad instant or policy as a caller error, and a refused request as MarketDataError', async () => {
    expect(() => store.at('2020-03-16')).toThrow(/Invalid instant/);
    expect(() => store.at(Number.NaN)).toThrow(/Invalid instant/);
    expect(() => store.at('2020-03-16T15:45:00-04:00', { policy: 'lenient' as never })).toThrow(
      /look-ahead policy/,
    );
    const error = await store
      .at('2020-03-16T15:45:00-04:00')
      .options.chain('SPY', { dte: -1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MarketDataError);
    expect((error as MarketDataError).status).toBe(400);
  });
});

describe('store.at on a real Cboe file at 15:50', () => {
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    ({ dir, store } = await storeOf('data/options/cboe_datashop_VIX_2016-06-01.csv', 'cboe-eod'));
  });
  afterAll(async () => {
    store.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('serves the 15:45 quotes; the full-session trade_volume is refused, masked or flagged', async () => {
    const T = '2016-06-01T15:50:00-04:00';
    const ask = { expiration: 'all' } as const;
    const refused = await lookAheadOf(store.at(T).options.chain('VIX', ask));
    expect(refused.fields.map((f) => f.field)).toEqual(['volume']);
    expect(refused.fields[0]!.knownAt).toBeGreaterThan(et('2016-06-01', '15:50'));

    const masked = await store.at(T, { policy: 'mask' }).options.chain('VIX', ask);
    expect(new Set(masked.columns.updated)).toEqual(new Set([et('2016-06-01', '15:45')]));
    expect(masked.columns.volume.every((v) => v === null)).toBe(true);
    expect(masked.meta.lookAhead.map((f) => f.field)).toEqual(['volume']);

    const flagged = await store.at(T, { policy: 'flag' }).options.chain('VIX', ask);
    expect(flagged.columns.volume.some((v) => typeof v === 'number' && v > 0)).toBe(true);
    expect(flagged.columns.bid).toEqual(masked.columns.bid);
    // The API face at the same clock never serves the volume.
    const api = await store.options.chain('VIX', ask, { now: T });
    expect(api.columns.volume.every((v) => v === null)).toBe(true);
  });
});

const SPXW = 'data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv';
const spxw = withData([SPXW]);

spxw.describe('store.at on a real HistoricalOptionData SPXW file', () => {
  let dir: string;
  let store: Store;
  spxw.beforeAll(async () => {
    ({ dir, store } = await storeOf(SPXW, 'hod'));
  });
  spxw.afterAll(async () => {
    store.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it("at 09:00 the session's open interest is not yet published; at 16:05 its end of day is known", async () => {
    const ask = { date: '2018-02-05', expiration: '2018-02-28', side: 'put', strike: 2700 } as const;
    const morning = await lookAheadOf(store.at('2018-02-05T09:00:00-05:00').options.chain('SPX', ask));
    const oi = morning.fields.find((f) => f.field === 'openInterest');
    expect(oi?.knownAt).toBe(et('2018-02-05', '09:30'));
    // A current request at 09:00 serves the session before, with the open interest known then.
    const current = await store.at('2018-02-05T09:00:00-05:00').options.chain('SPX', {
      expiration: '2018-02-28',
      side: 'put',
      strike: 2700,
    });
    expect(current.meta.lookAhead).toEqual([]);
    expect(current.columns.updated.every((u) => u <= et('2018-02-02', '16:15'))).toBe(true);

    const evening = await store.at('2018-02-05T16:05:00-05:00', { policy: 'flag' }).options.chain('SPX', ask);
    const quoteTime = evening.columns.updated[0]!;
    const late = evening.meta.lookAhead.map((f) => f.field);
    // Judged by the row's true quote time: known at 16:05 when the vendor stamped it at the 16:00 close.
    expect(late.includes('bid')).toBe(quoteTime > et('2018-02-05', '16:05'));
  });
});
