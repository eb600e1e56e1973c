/** What a mirror run asks the service for: one request per chain, month of minute bars and daily bars. */
import type { Client } from '../client/index.js';
import { requestTarget } from '../client/index.js';
import type { AnyParams } from '../library/params.js';
import type { QueryResult } from '../library/result.js';
import type { MirrorOptions } from './types.js';

/** One request of the plan: what it fetches, the source name it is recorded under, its predicted cost. */
export type Item = {
  readonly kind: 'chain' | 'daily' | 'minute';
  readonly underlying: string;
  /** The session of a chain; the first session of a month of minute bars. */
  readonly session: string | undefined;
  readonly sessions: number;
  readonly source: string;
  readonly fetch: () => Promise<QueryResult>;
  /** Rows expected (chain contracts, bars), from the estimate; undefined when not estimated. */
  expectedRows?: number;
};

const CHAIN = '/v1/options/chain/';

const CANDLES = '/v1/stocks/candles/';

/** Every request the range needs: per underlying its daily bars, its minute bars by month, and a chain per session. */
export function planItems(client: Client, options: MirrorOptions, sessions: readonly string[]): Item[] {
  const items: Item[] = [];
  for (const underlying of options.underlyings) {
    const daily: AnyParams = {
      from: options.from,
      to: options.to,
      adjustsplits: false,
      adjustdividends: false,
    };
    items.push({
      kind: 'daily',
      underlying,
      session: undefined,
      sessions: sessions.length,
      source: requestTarget({
        service: CANDLES,
        path: { resolution: 'D', symbol: underlying },
        params: daily,
      }),
      fetch: () => client.stocks.candles('D', underlying, daily),
    });
    if (!options.noIntraday) {
      for (const month of monthWindows(sessions)) {
        const minute: AnyParams = { from: month.from, to: month.to, extended: true };
        items.push({
          kind: 'minute',
          underlying,
          session: month.from,
          sessions: month.sessions,
          source: requestTarget({
            service: CANDLES,
            path: { resolution: '1', symbol: underlying },
            params: minute,
          }),
          fetch: () => client.stocks.candles('1', underlying, minute),
        });
      }
    }
  }
  for (const session of sessions) {
    for (const underlying of options.underlyings) {
      const params: AnyParams = { date: session, expiration: 'all', nonstandard: true };
      items.push({
        kind: 'chain',
        underlying,
        session,
        sessions: 1,
        source: requestTarget({ service: CHAIN, path: { underlying }, params }),
        fetch: () => client.options.chain(underlying, params),
      });
    }
  }
  return items;
}

/** The sessions grouped by calendar month: one minute-bar request each (its own source, so a rerun resumes by month). */
function monthWindows(sessions: readonly string[]): { from: string; to: string; sessions: number }[] {
  const months = new Map<string, string[]>();
  for (const session of sessions) {
    const key = session.slice(0, 7);
    const list = months.get(key) ?? [];
    list.push(session);
    months.set(key, list);
  }
  return [...months.values()].map((list) => ({ from: list[0]!, to: list.at(-1)!, sessions: list.length }));
}
