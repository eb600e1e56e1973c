import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { etWallToSeconds, underlyingOfRoot } from '../../../src/market-time/index.js';
import { tryParseOccSymbol } from '../../../src/occ/index.js';
import type { AsOf, EndpointContext, Mode } from '../../../src/query/types.js';
import { StoreCache } from '../../../src/store/cache.js';
import { StoreReader } from '../../../src/store/store.js';
import { WriteTransaction } from '../../../src/store/writer.js';

/** One snapshot row to stage; times are ET wall clock (`HH:MM`) of `session`. */
export type QuoteRow = {
  readonly symbol: string;
  readonly session: string;
  readonly time: string;
  readonly bid: number | null;
  readonly ask: number | null;
  readonly underlyingPrice: number | null;
  readonly underlying?: string;
  readonly bidSize?: number;
  readonly askSize?: number;
  readonly last?: number | null;
  readonly volume?: number | null;
  readonly volumeTime?: string;
  readonly greeks?: readonly [iv: number, delta: number, gamma: number, theta: number, vega: number];
};

/** One open-interest figure: settled from `settled`, published at `published` (ET `YYYY-MM-DD HH:MM`). */
export type InterestRow = {
  readonly symbol: string;
  readonly settled: string;
  readonly published: string;
  readonly openInterest: number;
  readonly underlying?: string;
};

/** Instant (epoch seconds) of an ET wall time `YYYY-MM-DD HH:MM`. */
export function et(dateTime: string): number {
  const [date, time] = dateTime.split(' ');
  return etWallToSeconds(date!, time!);
}

function underlyingOf(symbol: string, given: string | undefined): string {
  return given ?? underlyingOfRoot(tryParseOccSymbol(symbol)!.root);
}

/** Commits the rows into a new store in a temp dir and opens it; `close` removes it. */
export async function buildStore(
  quotes: readonly QuoteRow[],
  interest: readonly InterestRow[],
): Promise<{ reader: StoreReader; close: () => Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-options-'));
  const tx = await WriteTransaction.begin(dir, { create: true });
  await tx.sql.append('option_quotes', [
    quotes.map((q) => underlyingOf(q.symbol, q.underlying)),
    quotes.map((q) => q.symbol),
    quotes.map((q) => q.session),
    quotes.map((q) => et(`${q.session} ${q.time}`)),
    quotes.map((q) => q.bid),
    quotes.map((q) => q.ask),
    quotes.map((q) => q.bidSize ?? null),
    quotes.map((q) => q.askSize ?? null),
    quotes.map((q) => q.last ?? null),
    quotes.map((q) => q.volume ?? null),
    quotes.map((q) => et(`${q.session} ${q.volumeTime ?? q.time}`)),
    quotes.map((q) => q.underlyingPrice),
    ...[0, 1, 2, 3, 4].map((i) => quotes.map((q) => q.greeks?.[i] ?? null)),
  ]);
  await tx.sql.append('open_interest', [
    interest.map((o) => underlyingOf(o.symbol, o.underlying)),
    interest.map((o) => o.symbol),
    interest.map((o) => o.settled),
    interest.map((o) => et(o.published)),
    interest.map((o) => o.openInterest),
  ]);
  await tx.commit([
    {
      source: 'synthetic',
      sha256: 'synthetic',
      format: 'test',
      rows: { option_quotes: quotes.length },
      rejected: 0,
    },
  ]);
  const reader = await StoreReader.open(dir);
  return {
    reader,
    close: async () => {
      reader.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** A store of the SPY and SPX markets (`spyMarket`, `spxMarket`): what the option endpoints' tests ask. */
export function buildSpySpxStore(): Promise<{ reader: StoreReader; close: () => Promise<void> }> {
  const spy = spyMarket();
  const spx = spxMarket();
  return buildStore([...spy.quotes, ...spx.quotes], [...spy.interest, ...spx.interest]);
}

/** An endpoint context over `reader` at clock `now` (ET `YYYY-MM-DD HH:MM`). */
export function context(
  reader: StoreReader,
  options: {
    now: string;
    asOf: AsOf;
    path: Record<string, string>;
    query?: Record<string, string>;
    mode?: Mode;
  },
): EndpointContext {
  return {
    sql: reader.sql,
    cache: cacheOf(reader),
    nowSeconds: et(options.now),
    greeks: 'vendor',
    path: options.path,
    query: options.query ?? {},
    asOf: options.asOf,
    mode: options.mode ?? (options.asOf.kind === 'dated' ? 'historical' : 'live'),
  };
}

const caches = new WeakMap<StoreReader, StoreCache>();

/** One cache per reader, as an opened store has. */
function cacheOf(reader: StoreReader): StoreCache {
  let cache = caches.get(reader);
  if (cache === undefined) {
    cache = new StoreCache(() => reader.dataVersion);
    caches.set(reader, cache);
  }
  return cache;
}

/** A live as-of at an ET wall time. */
export function live(dateTime: string): AsOf {
  return { kind: 'current', cutoffSeconds: et(dateTime), eodOnly: false, maxSession: null };
}

/** The dated as-of of session D. */
export function dated(session: string): AsOf {
  return { kind: 'dated', session };
}

// The synthetic SPY market: four sessions, standard expirations of every kind, one nonstandard root.

export const SESSIONS = ['2024-03-13', '2024-03-14', '2024-03-15', '2024-03-18'] as const;
/** OI settled from these sessions is published at 09:30 ET of the next one. */
export const SETTLED = ['2024-03-12', '2024-03-13', '2024-03-14', '2024-03-15', '2024-03-18'] as const;
const NEXT_SESSION: Record<string, string> = {
  '2024-03-12': '2024-03-13',
  '2024-03-13': '2024-03-14',
  '2024-03-14': '2024-03-15',
  '2024-03-15': '2024-03-18',
  '2024-03-18': '2024-03-19',
};
export const SPOT: Record<string, number> = {
  '2024-03-13': 500,
  '2024-03-14': 502.5,
  '2024-03-15': 503,
  '2024-03-18': 498,
};
/** 2024-03-15 monthly, 03-22 weekly, 03-28 quarterly (last session of March), 04-19 monthly. */
export const SPY_SERIES: readonly { root: string; expiration: string; strikes: readonly number[] }[] = [
  { root: 'SPY', expiration: '2024-03-15', strikes: [495, 500, 505, 510] },
  { root: 'SPY', expiration: '2024-03-22', strikes: [495, 500, 505, 510] },
  { root: 'SPY', expiration: '2024-03-28', strikes: [495, 500, 505, 510] },
  { root: 'SPY', expiration: '2024-04-19', strikes: [495, 500, 505, 510, 520] },
  { root: 'SPY1', expiration: '2024-05-17', strikes: [500] },
];

/** The OCC symbol of a synthetic contract. */
export function occ(root: string, expiration: string, side: 'C' | 'P', strike: number): string {
  return `${root}${expiration.slice(2, 4)}${expiration.slice(5, 7)}${expiration.slice(8, 10)}${side}${String(strike * 1000).padStart(8, '0')}`;
}

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000);
}

/**
 * Prices in cents: intrinsic + 50 + 5 per day to expiration; the spread widens by 5 cents per strike step
 * (5, 10, 15, 20, 25), the bid sits floor(spread / 2) under that value.
 */
export function spyPrice(
  strike: number,
  side: 'C' | 'P',
  expiration: string,
  session: string,
  shiftCents = 0,
): { bid: number; ask: number } {
  const spotCents = Math.round(SPOT[session]! * 100);
  const intrinsic = Math.max(0, side === 'C' ? spotCents - strike * 100 : strike * 100 - spotCents);
  const value = intrinsic + 50 + 5 * daysBetween(session, expiration);
  const spread = 5 * (1 + [495, 500, 505, 510, 520].indexOf(strike));
  const bid = value - Math.floor(spread / 2) + shiftCents;
  return { bid: bid / 100, ask: (bid + spread) / 100 };
}

/** The open interest settled from `settled`: 1000 per settled-session index, plus the strike. */
export function spyInterest(strike: number, settled: string): number {
  return 1000 * SETTLED.indexOf(settled as (typeof SETTLED)[number]) + strike;
}

/** Full-session volume on `session`: 100 + strike − 495 + the session's index. */
export function spyVolume(strike: number, session: string): number {
  return 100 + strike - 495 + SESSIONS.indexOf(session as (typeof SESSIONS)[number]);
}

/**
 * Every contract has an EOD row (16:00 ET) on each session up to its expiration. On 2024-03-14 there is
 * also a Cboe-style 15:45 snapshot (prices 2 cents higher, full-session volume stamped at the close),
 * with vendor Greeks on the 500 strikes only.
 */
export function spyMarket(): { quotes: QuoteRow[]; interest: InterestRow[] } {
  const quotes: QuoteRow[] = [];
  const interest: InterestRow[] = [];
  for (const series of SPY_SERIES) {
    for (const strike of series.strikes) {
      for (const side of ['C', 'P'] as const) {
        const symbol = occ(series.root, series.expiration, side, strike);
        for (const session of SESSIONS) {
          if (session > series.expiration) continue;
          const base = {
            symbol,
            session,
            underlyingPrice: SPOT[session]!,
            underlying: 'SPY',
            bidSize: 10,
            askSize: 20,
          };
          quotes.push({
            ...base,
            time: '16:00',
            ...spyPrice(strike, side, series.expiration, session),
            last: spyPrice(strike, side, series.expiration, session).ask,
            volume: spyVolume(strike, session),
          });
          if (session === '2024-03-14') {
            quotes.push({
              ...base,
              time: '15:45',
              volumeTime: '16:00',
              ...spyPrice(strike, side, series.expiration, session, 2),
              volume: spyVolume(strike, session),
              ...(strike === 500
                ? { greeks: [0.2, side === 'C' ? 0.55 : -0.45, 0.05, -0.3, 0.1] as const }
                : {}),
            });
          }
        }
        for (const settled of SETTLED) {
          if (settled >= series.expiration) continue;
          interest.push({
            symbol,
            underlying: 'SPY',
            settled,
            published: `${NEXT_SESSION[settled]} 09:30`,
            openInterest: spyInterest(strike, settled),
          });
        }
      }
    }
  }
  return { quotes, interest };
}

/**
 * SPX on 2024-03-14: root SPX (the AM-settled 03-15 monthly) and SPXW (PM 03-15 and 03-22). EOD rows are
 * stamped at the 16:15 index close; SPXW 03-15 also has a 16:00 row that the 16:15 one must win over.
 */
export function spxMarket(): { quotes: QuoteRow[]; interest: InterestRow[] } {
  const quotes: QuoteRow[] = [];
  const interest: InterestRow[] = [];
  const series = [
    { root: 'SPX', expiration: '2024-03-15' },
    { root: 'SPXW', expiration: '2024-03-15' },
    { root: 'SPXW', expiration: '2024-03-22' },
  ];
  for (const { root, expiration } of series) {
    for (const strike of [5100, 5150]) {
      for (const side of ['C', 'P'] as const) {
        const symbol = occ(root, expiration, side, strike);
        const base = {
          symbol,
          session: '2024-03-14',
          underlyingPrice: 5150.5,
          volume: 7,
          bidSize: 1,
          askSize: 1,
        };
        quotes.push({ ...base, time: '16:15', bid: 10, ask: 10.4 });
        if (root === 'SPXW' && expiration === '2024-03-15')
          quotes.push({ ...base, time: '16:00', bid: 9, ask: 9.2 });
        interest.push({ symbol, settled: '2024-03-13', published: '2024-03-14 09:30', openInterest: 42 });
      }
    }
  }
  return { quotes, interest };
}
