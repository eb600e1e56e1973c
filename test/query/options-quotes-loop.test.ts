/**
 * An option quote asked session after session (as a backtest marks what it holds) is answered from the
 * loop's blocks: every answer must be the one a freshly opened store gives, a contract the store does
 * not list included (404, not found), one past its expiration (no data, with the nearest sessions), and
 * Greeks computed from snapshots the loop's store priced before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/library/store.js';
import { sessionsBetween } from '../../src/market-time/index.js';

const NOW = '2020-12-31T12:00:00-05:00';
const SESSIONS = sessionsBetween('2019-01-22', '2019-02-05');
const SYMBOLS = [
  'SPY190215P00240000', // listed, quoted every session asked
  'SPY190118P00242000', // expired the Friday before the first session asked
  'SPY190215P00999000', // not listed
];

let looping: Store;
beforeAll(async () => {
  looping = await openStore('data/sample', { now: NOW });
});
afterAll(() => looping.close());

describe('option quotes in a session loop', () => {
  it('answer each session as a fresh store does', async () => {
    const answers = async (store: Store, symbol: string, session: string) => {
      const response = await store.request(`/v1/options/quotes/${symbol}/?date=${session}`, { now: NOW });
      return `${response.status} ${response.body}`;
    };
    // A store opened for each request: no loop, every answer from its own statements.
    const alone = async (symbol: string, session: string) => {
      const fresh = await openStore('data/sample', { now: NOW });
      try {
        return await answers(fresh, symbol, session);
      } finally {
        fresh.close();
      }
    };
    for (const symbol of SYMBOLS) {
      for (const session of SESSIONS) {
        expect(await answers(looping, symbol, session), `${symbol} on ${session}`).toBe(
          await alone(symbol, session),
        );
      }
    }
    // The loop did answer from its blocks: the listed contract's answers carry its quotes.
    expect(await answers(looping, SYMBOLS[0]!, SESSIONS.at(-1)!)).toMatch(/^200 /);
  });

  it('answer with computed Greeks as a fresh store does, kept snapshots and all', async () => {
    // A loop's store prices each snapshot once and keeps it: a contract not quoted again carries the
    // same snapshot into the next session, whose figures then come from the cache.
    const at = (session: string) => `${session}T15:50:00-05:00`;
    const paths = ['/v1/options/chain/SPY/?dte=30&side=put', `/v1/options/quotes/${SYMBOLS[0]}/`];
    const answer = async (store: Store, path: string, session: string) => {
      const response = await store.request(path, { now: at(session) });
      return `${response.status} ${response.body}`;
    };
    const current = await openStore('data/sample', { greeks: 'computed' });
    try {
      for (const session of SESSIONS.slice(0, 5)) {
        for (const path of paths) {
          const fresh = await openStore('data/sample', { greeks: 'computed' });
          try {
            expect(await answer(current, path, session), `${path} at ${at(session)}`).toBe(
              await answer(fresh, path, session),
            );
          } finally {
            fresh.close();
          }
        }
      }
    } finally {
      current.close();
    }
  });

  it('answer each instant of a session loop as a fresh store does', async () => {
    const at = (session: string) => `${session}T15:50:00-05:00`;
    const answer = async (store: Store, symbol: string, session: string) => {
      const response = await store.request(`/v1/options/quotes/${symbol}/`, { now: at(session) });
      return `${response.status} ${response.body}`;
    };
    const current = await openStore('data/sample');
    try {
      for (const session of SESSIONS.slice(0, 6)) {
        for (const symbol of SYMBOLS) {
          const fresh = await openStore('data/sample');
          try {
            expect(await answer(current, symbol, session), `${symbol} at ${at(session)}`).toBe(
              await answer(fresh, symbol, session),
            );
          } finally {
            fresh.close();
          }
        }
      }
    } finally {
      current.close();
    }
  });
});
