/**
 * An option quote asked session after session (as a backtest marks what it holds) is answered from the
 * loop's blocks: every answer must be the one a freshly opened store gives, a contract the store does
 * not list included (404, not found), one past its expiration (no data, with the nearest sessions), and
 * Greeks computed from snapshots the loop's store priced before.
 */
import { describe, expect, it } from 'vitest';
import { type OpenOptions, openStore, type Store } from '../../src/library/store.js';
import { sessionsBetween } from '../../src/market-time/index.js';

const SESSIONS = sessionsBetween('2019-01-22', '2019-02-05');
const SYMBOLS = [
  'SPY190215P00240000', // listed, quoted every session asked
  'SPY190118P00242000', // expired the Friday before the first session asked
  'SPY190215P00999000', // not listed
];
/** A clock after the sample, for dated requests; and 15:50 ET of a session, for current ones. */
const LATER = '2020-12-31T12:00:00-05:00';
const at = (session: string) => `${session}T15:50:00-05:00`;

/** Status and body of one request at `now`. */
async function answer(store: Store, path: string, now: string): Promise<string> {
  const response = await store.request(path, { now });
  return `${response.status} ${response.body}`;
}

/**
 * Asks each `[path, now]` in order of one store, as a loop does, and each of a store opened for that
 * request alone (no loop: every answer from its own statements); the two must agree, request by request.
 */
async function expectLoopLikeFresh(
  requests: readonly (readonly [path: string, now: string])[],
  options: OpenOptions = {},
): Promise<string[]> {
  const looping = await openStore('data/sample', options);
  try {
    const answers: string[] = [];
    for (const [path, now] of requests) {
      const fresh = await openStore('data/sample', options);
      try {
        const looped = await answer(looping, path, now);
        expect(looped, `${path} at ${now}`).toBe(await answer(fresh, path, now));
        answers.push(looped);
      } finally {
        fresh.close();
      }
    }
    return answers;
  } finally {
    looping.close();
  }
}

describe('option quotes in a session loop', () => {
  it('answer each session as a fresh store does', async () => {
    const requests = SYMBOLS.flatMap((symbol) =>
      SESSIONS.map((session) => [`/v1/options/quotes/${symbol}/?date=${session}`, LATER] as const),
    );
    const answers = await expectLoopLikeFresh(requests);
    // The loop did answer from its blocks: the listed contract's last answer carries its quote.
    expect(answers[SESSIONS.length - 1]).toMatch(/^200 /);
  });

  it('answer each instant of a session loop as a fresh store does', async () => {
    const requests = SESSIONS.slice(0, 6).flatMap((session) =>
      SYMBOLS.map((symbol) => [`/v1/options/quotes/${symbol}/`, at(session)] as const),
    );
    await expectLoopLikeFresh(requests);
  });

  it('answer with computed Greeks as a fresh store does, kept snapshots and all', async () => {
    // A loop's store prices each snapshot once and keeps it: a contract not quoted again carries the
    // same snapshot into the next session, whose figures then come from the cache.
    const paths = ['/v1/options/chain/SPY/?dte=30&side=put', `/v1/options/quotes/${SYMBOLS[0]}/`];
    const requests = SESSIONS.slice(0, 5).flatMap((session) =>
      paths.map((path) => [path, at(session)] as const),
    );
    await expectLoopLikeFresh(requests, { greeks: 'computed' });
  });
});
