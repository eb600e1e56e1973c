/**
 * `greeks: 'computed'` through every face: IV and Greeks from the quotes on dated requests (where the
 * service serves none), the delta filter on history, the header and `meta.greeks`, the known-at of the
 * values, and the response cache kept apart from the vendor's answers. The clock is pinned to an Eastern
 * session time, so the host's zone does not matter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store, storeInternals } from '../../src/library/store.js';
import { currentAsOf } from '../../src/pit/as-of.js';
import { withComputedGreeks } from '../../src/query/options/computed-greeks.js';
import { toRecords } from '../../src/query/options/records.js';
import { scopeRows } from '../../src/query/options/scope-answer.js';
import { StoreCache } from '../../src/store/cache.js';

const T = '2020-03-16T15:45:00-04:00';
let vendor: Store;
let computed: Store;
beforeAll(async () => {
  vendor = await openStore('data/sample', { now: T });
  computed = await openStore('data/sample', { now: T, greeks: 'computed' });
});
afterAll(() => {
  vendor.close();
  computed.close();
});

describe("greeks: 'computed'", () => {
  it('fills the Greeks of a dated chain, which the service leaves null, and filters it by delta', async () => {
    const params = { date: '2020-03-13', expiration: '2020-04-17', side: 'put' } as const;
    const served = await vendor.options.chain('SPY', params);
    expect(served.columns.delta.every((d) => d === null)).toBe(true);
    const chain = await computed.options.chain('SPY', params);
    expect(chain.meta.greeks).toBe('computed');
    const solved = chain.columns.delta.filter((d) => d !== null);
    expect(solved.length).toBeGreaterThan(chain.length / 2);
    for (const d of solved) expect(d!).toBeLessThanOrEqual(0);
    // The filter keeps the put whose |delta| is nearest .30.
    const near = await computed.options.chain('SPY', { ...params, delta: 0.3 });
    expect(near.length).toBe(1);
    const best = Math.min(...solved.map((d) => Math.abs(Math.abs(d!) - 0.3)));
    expect(Math.abs(Math.abs(near.columns.delta[0]!) - 0.3)).toBe(best);
  });

  it('agrees with the IV the sample was generated at, within a fraction of a vol point', async () => {
    const a = await vendor.options.chain('SPY', { expiration: '2020-04-17' });
    const b = await computed.options.chain('SPY', { expiration: '2020-04-17' });
    expect(b.columns.optionSymbol).toEqual(a.columns.optionSymbol);
    const diffs = a.columns.iv
      .map((iv, i) =>
        iv === null || b.columns.iv[i] === null ? null : Math.abs(iv - b.columns.iv[i]!) * 100,
      )
      .filter((d): d is number => d !== null)
      .sort((x, y) => x - y);
    expect(diffs.length).toBeGreaterThan(100);
    expect(diffs[diffs.length >> 1]!).toBeLessThan(0.5);
    // The bid's IV is below the mid's, the ask's above, wherever all three solve.
    const { ivBid, ivAsk } = b.quoteIv()!;
    b.columns.iv.forEach((iv, i) => {
      if (iv !== null && ivBid[i] !== null && ivAsk[i] !== null) {
        expect(ivBid[i]!).toBeLessThanOrEqual(iv);
        expect(ivAsk[i]!).toBeGreaterThanOrEqual(iv);
      }
    });
    expect(a.quoteIv()).toBeUndefined();
  });

  it('says so in a header, and keeps computed answers apart from the vendor ones in the response cache', async () => {
    const target = '/v1/options/chain/SPY/?expiration=2020-04-17&side=put&strikeLimit=2';
    const plain = await vendor.request(target);
    expect(plain.headers['X-Pitchain-Greeks']).toBeUndefined();
    const fresh = await computed.request(target);
    expect(fresh.status).toBe(200);
    expect(fresh.headers['X-Pitchain-Greeks']).toBe('computed');
    const cached = await computed.request(`${target}&mode=cached`);
    expect(cached.status).toBe(203);
    expect(cached.body).toBe(fresh.body);
    expect(fresh.body).not.toBe(plain.body);
  });

  it('gives the backtest face values known at their quote time, so strict serves them', async () => {
    const view = vendor.at(T, { greeks: 'computed' });
    const chain = await view.options.chain('SPY', { dte: 30, side: 'put', delta: 0.3 });
    expect(chain.length).toBe(1);
    expect(chain.meta.greeks).toBe('computed');
    expect(chain.meta.lookAhead).toEqual([]);
    const knownAt = chain.knownAt()!;
    expect(knownAt.quoteTime[0]!).toBeLessThanOrEqual(chain.meta.asOf);
    // A lone contract is priced too (on the carried spot, without its expiration's parity forward).
    const quote = await view.options.quotes(chain.columns.optionSymbol[0]!);
    expect(quote.meta.greeks).toBe('computed');
    expect(Math.abs(quote.columns.delta[0]! - chain.columns.delta[0]!)).toBeLessThan(0.05);
  });

  it('refuses a Greeks source it does not know', async () => {
    expect(() => vendor.at(T, { greeks: 'model' as never })).toThrow(/greeks must be/);
    await expect(openStore('data/sample', { greeks: 'both' as never })).rejects.toThrow(/greeks must be/);
  });
});

describe('snapshots priced once per store', () => {
  /** Dated whole chains of March 2020, where the quotes move most from one session to the next. */
  const SESSIONS = ['2020-03-09', '2020-03-10', '2020-03-11', '2020-03-12', '2020-03-13'];
  const chains = async (store: Store) => {
    const bodies: string[] = [];
    for (const date of SESSIONS) {
      for (const symbol of ['SPY', 'SPX', 'AAPL']) {
        const chain = await store.options.chain(symbol, { date, expiration: 'all' });
        bodies.push(JSON.stringify(chain.columns));
      }
    }
    return bodies;
  };

  it('gives a rerun on the same store the figures a fresh store computes', async () => {
    const rerun = await openStore('data/sample', { now: T, greeks: 'computed' });
    const fresh = await openStore('data/sample', { now: T, greeks: 'computed' });
    try {
      await chains(rerun); // prices every snapshot and keeps it
      const again = await chains(rerun); // the answers are assembled anew, from the kept snapshots
      expect(again).toEqual(await chains(fresh));
    } finally {
      rerun.close();
      fresh.close();
    }
  });

  it('takes kept figures only for the same members at the same quotes', async () => {
    const { reader } = storeInternals(computed);
    const asOf = currentAsOf('live', Date.parse(T) / 1000);
    const rows = await scopeRows(reader.sql, asOf, { underlying: 'SPY', expiration: '2020-04-17' });
    const group = toRecords(rows, asOf);
    const cache = new StoreCache(() => 'one version');
    let kept = 0;
    const priced = {
      computed: (key: string) => cache.computed(key),
      keepComputed: (key: string, value: unknown, bytes: number) => {
        kept++;
        cache.keepComputed(key, value, bytes);
      },
    };
    const first = withComputedGreeks(group, priced);
    const snapshots = kept;
    expect(snapshots).toBeGreaterThan(0);
    // The same snapshots again: every one found, nothing priced or kept anew, the same figures.
    expect(withComputedGreeks(group, priced)).toEqual(first);
    expect(kept).toBe(snapshots);
    // One call's bid moved (the parity forward with it): priced again, as without any kept figures.
    const at = group.findIndex((r) => r.side === 'call' && r.bid !== null && r.bid > 1);
    const moved = group.map((r, i) => (i === at ? { ...r, bid: r.bid! - 0.5 } : r));
    const repriced = withComputedGreeks(moved, priced);
    expect(repriced).toEqual(withComputedGreeks(moved));
    expect(repriced).not.toEqual(first);
    expect(kept).toBeGreaterThan(snapshots);
  });
});
