/**
 * The response cache keeps an answer's printed bodies beside it, one per output options asked: a repeated
 * request is sent without printing it again. Each body and its credits must stay those of a service that
 * prints every time, whatever the options and in whatever order they are asked; the printed bodies count
 * against the cache's bytes and go when the data version moves on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store, storeInternals } from '../../src/library/store.js';
import { ResponseCache } from '../../src/service/response-cache.js';

const NOW = '2020-03-16T15:45:00-04:00';
const CHAIN = '/v1/options/chain/SPY/?dte=30&side=put&strikeLimit=6';
/** The same answer asked in every output form the service prints. */
const FORMS = [
  '',
  '&format=csv',
  '&format=csv&headers=false',
  '&columns=strike,bid,ask',
  '&columns=strike,underlying',
  '&human=true',
  '&dateformat=timestamp',
  '&limit=2&offset=1',
  '&format=csv&columns=optionSymbol,mid&dateformat=spreadsheet',
];

type Seen = { status: number; body: string; credits: number; type: string | undefined };

async function ask(store: Store, target: string): Promise<Seen> {
  const r = await store.request(target);
  return { status: r.status, body: r.body, credits: r.credits, type: r.headers['Content-Type'] };
}

describe('printed bodies in the response cache', () => {
  let cached: Store;
  let printing: Store;
  beforeAll(async () => {
    cached = await openStore('data/sample', { now: NOW, threads: 1 });
    // A cache too small for any answer: every request is printed from the endpoint's answer.
    printing = await openStore('data/sample', { now: NOW, threads: 1, responseCacheBytes: 1 });
  }, 60_000);
  afterAll(() => {
    cached.close();
    printing.close();
  });

  it('answers every output form, first and repeated, as a service that prints each time', async () => {
    for (const round of [0, 1]) {
      for (const form of round === 0 ? FORMS : [...FORMS].reverse()) {
        const expected = await ask(printing, `${CHAIN}${form}`);
        expect(expected.status).toBe(200);
        const seen = await ask(cached, `${CHAIN}${form}`);
        // The first ask of the answer runs the endpoint (200); every other is a hit (203).
        expect(seen).toEqual({ ...expected, status: round === 0 && form === '' ? 200 : 203 });
      }
    }
  });

  it('bills a mode=cached hit 1 and sends the same body', async () => {
    const live = await ask(cached, `${CHAIN}&format=csv`);
    const hit = await ask(cached, `${CHAIN}&format=csv&mode=cached`);
    expect([hit.status, hit.credits, hit.body]).toEqual([203, 1, live.body]);
  });

  it('counts printed bodies against the cache bytes', async () => {
    const store = await openStore('data/sample', { now: NOW, threads: 1 });
    try {
      await store.request(CHAIN);
      const answerOnly = storeInternals(store).api.responseCache.sizeBytes;
      const printed = await store.request(`${CHAIN}&format=csv`);
      expect(storeInternals(store).api.responseCache.sizeBytes - answerOnly).toBeGreaterThanOrEqual(
        printed.body.length,
      );
      // Asked again, the same form adds nothing.
      const size = storeInternals(store).api.responseCache.sizeBytes;
      await store.request(`${CHAIN}&format=csv`);
      expect(storeInternals(store).api.responseCache.sizeBytes).toBe(size);
    } finally {
      store.close();
    }
  });

  it('keeps no printed body beside an answer too large to keep', async () => {
    const store = await openStore('data/sample', { now: NOW, threads: 1, responseCacheBytes: 60_000 });
    try {
      const first = await store.request(CHAIN);
      const bytes = storeInternals(store).api.responseCache.sizeBytes;
      expect(bytes).toBeGreaterThan(0);
      // A body that would take the answer past a quarter of the budget is printed each time instead.
      const wide = await store.request(`${CHAIN}&format=csv`);
      expect(wide.status).toBe(203);
      expect(storeInternals(store).api.responseCache.sizeBytes).toBeLessThanOrEqual(60_000);
      expect((await store.request(CHAIN)).body).toBe(first.body);
    } finally {
      store.close();
    }
  });

  it('keeps a dated answer once asked again: a repeat is the same 200, never a 203, and mode=cached never finds it', async () => {
    const store = await openStore('data/sample', { now: NOW, threads: 1 });
    try {
      const dated = '/v1/options/chain/SPY/?date=2020-03-13&dte=30&side=put&strikeLimit=6';
      const first = await ask(store, dated);
      expect(first.status).toBe(200);
      // Asked once, a dated answer is not kept (a server's random sessions are mostly asked once).
      expect(storeInternals(store).api.responseCache.size).toBe(0);
      expect(await ask(store, dated)).toEqual(first);
      const kept = storeInternals(store).api.responseCache.size;
      expect(kept).toBe(1);
      for (const form of ['', '&format=csv', '']) {
        const again = await ask(store, `${dated}${form}`);
        expect(again).toEqual(await ask(printing, `${dated}${form}`));
        expect(again.status).toBe(200);
      }
      expect(storeInternals(store).api.responseCache.size).toBe(kept);
      // Another session is another answer.
      const other = await ask(store, dated.replace('2020-03-13', '2020-03-12'));
      expect(other.body).not.toBe(first.body);
      expect(other).toEqual(await ask(printing, dated.replace('2020-03-13', '2020-03-12')));
      // The same parameters without the date ask the live cache, which holds no live answer yet.
      expect(
        (await ask(store, '/v1/options/chain/SPY/?dte=30&side=put&strikeLimit=6&mode=cached')).status,
      ).toBe(204);
    } finally {
      store.close();
    }
  });
});

describe('which dated answers are kept', () => {
  it('admits a key the second time it is asked, forgets keys asked once past ten thousand and on a new version', () => {
    let version = 'v1';
    const cache = new ResponseCache(() => version);
    expect(cache.admit('a')).toBe(false);
    expect(cache.admit('a')).toBe(true);
    // Admitted, the key is no longer remembered: let go of later, it is kept again only when asked twice.
    expect(cache.admit('a')).toBe(false);
    for (let i = 0; i < 10_000; i++) cache.admit(`k${i}`);
    // Ten thousand remembered: the next one asked forgets them all ('a' among them) and is remembered.
    expect(cache.admit('a')).toBe(false);
    expect(cache.admit('k9998')).toBe(false);
    expect(cache.admit('k9999')).toBe(true);
    expect(cache.admit('b')).toBe(false);
    version = 'v2';
    expect(cache.admit('b')).toBe(false);
    expect(cache.admit('b')).toBe(true);
  });
});
