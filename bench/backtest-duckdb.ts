/**
 * The SPY short put of `examples/spy-short-put.ts` as a user would write it without pitchain: plain
 * DuckDB SQL over the store's Parquet files, then a small JS loop. The rules are those of
 * `bench/short_put_pandas.py`, rule for rule (see its header): decisions at 16:00 ET of each session,
 * each contract's latest snapshot known at the decision, fills only on a two-sided quote with size no
 * older than 15 minutes (before the decision, or the session's close when earlier), the `dte=30`
 * expiration, the put whose Black–Scholes delta at the vendor IV is nearest -0.30 among puts with a bid,
 * fills at the mid, the buy-back at half the premium, settlement at the expiration's close, assigned
 * shares sold at the delayed stock quote.
 */
import path from 'node:path';
// A double-precision normal CDF, as a user takes one from a statistics library (a looser approximation
// would round a delta to 3 decimals differently now and then, and pick another put).
import { normalCdf } from '../src/pricing/normal.js';
import type { Manifest } from '../src/store/manifest.js';
import { quoteLiteral, SqlSession } from '../src/store/sql.js';

const TARGET_DTE = 30;
const TARGET_DELTA = -0.3;
const PROFIT_TAKE = 0.5;
const SECONDS_PER_YEAR = 365 * 86_400;
const STOCK_DELAY_SECONDS = 15 * 60;
const MAX_QUOTE_AGE_SECONDS = 15 * 60;
const DAY_MS = 86_400_000;

/** A trade as the benchmarks compare them: session, symbol, quantity, price. */
export type BaselineTrade = [session: string, symbol: string, quantity: number, price: number];

const roundPrice = (x: number) => Math.round(x * 10_000) / 10_000;

/** The service's mid: (bid + ask) / 2 half up to the cent on the exact decimal prices. */
function serviceMid(bid: number, ask: number): number {
  const total = Math.round(bid * 10_000) + Math.round(ask * 10_000);
  return Math.floor((total + 100) / 200) / 100;
}

/** Black–Scholes put delta at rate 0, to 3 decimals; undefined when the inputs cannot give one. */
function putDelta(spot: number, strike: number, years: number, vol: number): number | undefined {
  if (!(vol > 0 && spot > 0 && strike > 0 && years > 0)) return undefined;
  const d1 = (Math.log(spot / strike) + 0.5 * vol * vol * years) / (vol * Math.sqrt(years));
  const delta = normalCdf(d1) - 1;
  return Math.round(delta * 1000) / 1000 || 0;
}

const newYorkHour = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/New_York',
  hour: 'numeric',
  hourCycle: 'h23',
});

/** 16:00 New York time of a session (ISO date), in epoch seconds: 20:00 UTC under EDT, 21:00 under EST. */
function fourPmEt(session: string): number {
  const edt = Date.parse(`${session}T20:00:00Z`);
  return (Number(newYorkHour.format(edt)) === 16 ? edt : edt + 3_600_000) / 1000;
}

/** Calendar days from `a` to `b` (ISO dates). */
const daysBetween = (a: string, b: string) => Math.round((Date.parse(b) - Date.parse(a)) / DAY_MS);

/** The manifest's files of SPY's partitions of a table, as a DuckDB list literal. */
function files(dir: string, manifest: Manifest, table: 'option_quotes' | 'contracts' | 'stock_bars'): string {
  const key = table === 'stock_bars' ? 'symbol' : 'underlying';
  const list = manifest.tables[table]
    .filter((f) => f.partition[key] === 'SPY')
    .map((f) => quoteLiteral(path.join(dir, f.path)));
  return `[${list.join(', ')}]`;
}

/** Runs the strategy over `first`…`last` and returns its trades. */
export async function shortPutDuckDb(
  dir: string,
  manifest: Manifest,
  first: string,
  last: string,
): Promise<BaselineTrade[]> {
  const sql = await SqlSession.open();
  try {
    // Every standard SPY snapshot with its contract's terms, in quote-time order: the snapshots known at
    // an instant are a prefix.
    const quotes = await sql.typedColumns(
      `SELECT q.option_symbol, CAST(c.expiration AS VARCHAR) AS expiration, c.side,
         CAST(epoch(q.quote_time) AS DOUBLE), CAST(epoch(c.expiration_time) AS DOUBLE),
         CAST(c.strike AS DOUBLE), CAST(q.bid AS DOUBLE), CAST(q.ask AS DOUBLE),
         CAST(q.bid_size AS DOUBLE), CAST(q.ask_size AS DOUBLE),
         CAST(q.underlying_price AS DOUBLE), CAST(q.iv AS DOUBLE)
       FROM read_parquet(${files(dir, manifest, 'option_quotes')}) q
       JOIN read_parquet(${files(dir, manifest, 'contracts')}) c USING (option_symbol)
       WHERE NOT c.nonstandard
       ORDER BY q.quote_time, q.option_symbol`,
    );
    const [symbol, expiration, side] = quotes.columns as (string | null)[][];
    const [quoteTime, expirationTime, strike, bid, ask, bidSize, askSize, spot, iv] = quotes.columns.slice(
      3,
    ) as Float64Array[];
    const bars = await sql.typedColumns(
      `SELECT CAST(session_date AS VARCHAR), resolution, CAST(epoch(t) AS DOUBLE), CAST(c AS DOUBLE)
       FROM read_parquet(${files(dir, manifest, 'stock_bars')}) ORDER BY t`,
    );
    const [barSession, resolution] = bars.columns as (string | null)[][];
    const [barTime, barClose] = bars.columns.slice(2) as Float64Array[];
    const daily = new Map<string, number>();
    const closes = new Map<string, number>();
    const minutes: number[] = [];
    for (let i = 0; i < barTime!.length; i++) {
      if (resolution![i] === 'D') daily.set(barSession![i]!, barClose![i]!);
      else {
        minutes.push(i);
        closes.set(barSession![i]!, Math.max(closes.get(barSession![i]!) ?? 0, barTime![i]! + 60));
      }
    }
    const sessions = [...closes.keys()].filter((s) => s >= first && s <= last).sort();
    const dailySessions = [...daily.keys()].sort();

    /** The delayed quote: the session's latest minute bar ended by now - 15 min, else the last close. */
    const stockQuote = (session: string, now: number): number => {
      let found: number | undefined;
      for (const i of minutes) {
        if (barSession![i] === session && barTime![i]! + 60 <= now - STOCK_DELAY_SECONDS) found = i;
      }
      if (found !== undefined) return barClose![found]!;
      const before = dailySessions.filter((s) => s < session);
      return daily.get(before.at(-1)!)!;
    };

    // Each contract's rows in quote-time order, and the latest row of each known so far.
    const rowsOf = new Map<string, number[]>();
    for (let i = 0; i < symbol!.length; i++) {
      const list = rowsOf.get(symbol![i]!);
      if (list === undefined) rowsOf.set(symbol![i]!, [i]);
      else list.push(i);
    }
    const latestOf = new Map<string, number>();
    let known = 0;
    const latest = (contract: string, now: number): number | undefined => {
      let found: number | undefined;
      for (const i of rowsOf.get(contract) ?? []) if (quoteTime![i]! <= now) found = i;
      return found;
    };

    /** A price (two-sided, not crossed, with size) no older than the limit at the decision. */
    const fillable = (i: number, session: string, now: number): boolean => {
      if (!(bid![i]! > 0 && ask![i]! > 0 && ask![i]! >= bid![i]!)) return false;
      if (bidSize![i] === 0 || askSize![i] === 0) return false;
      return Math.min(now, closes.get(session)!) - quoteTime![i]! <= MAX_QUOTE_AGE_SECONDS;
    };

    const trades: BaselineTrade[] = [];
    let option: { symbol: string; strike: number; expiration: string; premium: number } | undefined;
    let shares = 0;
    for (const session of sessions) {
      const now = fourPmEt(session);
      while (known < quoteTime!.length && quoteTime![known]! <= now) latestOf.set(symbol![known]!, known++);
      if (option !== undefined) {
        const i = latest(option.symbol, now);
        if (
          i !== undefined &&
          fillable(i, session, now) &&
          serviceMid(bid![i]!, ask![i]!) <= option.premium * PROFIT_TAKE
        ) {
          trades.push([session, option.symbol, 1, roundPrice((bid![i]! + ask![i]!) / 2)]);
          option = undefined;
        }
      } else if (shares !== 0) {
        trades.push([session, 'SPY', -shares, roundPrice(stockQuote(session, now))]);
        shares = 0;
      } else {
        const chain = [...latestOf.values()].filter((i) => expiration![i]! >= session);
        const expirations = [...new Set(chain.map((i) => expiration![i]!))].sort();
        let chosen = expirations[0];
        for (const e of expirations) {
          const distance = (x: string) => Math.abs(daysBetween(session, x) - TARGET_DTE);
          if (distance(e) < distance(chosen!)) chosen = e;
        }
        const puts = chain
          .filter((i) => expiration![i] === chosen && side![i] === 'put')
          .sort((a, b) => strike![a]! - strike![b]! || (symbol![a]! < symbol![b]! ? -1 : 1));
        let best: { row: number; delta: number } | undefined;
        for (const i of puts) {
          const delta = putDelta(
            spot![i]!,
            strike![i]!,
            (expirationTime![i]! - quoteTime![i]!) / SECONDS_PER_YEAR,
            iv![i]!,
          );
          if (delta === undefined || !(bid![i]! > 0)) continue;
          if (best === undefined || Math.abs(delta - TARGET_DELTA) < Math.abs(best.delta - TARGET_DELTA)) {
            best = { row: i, delta };
          }
        }
        if (best !== undefined && fillable(best.row, session, now)) {
          const i = best.row;
          const premium = roundPrice((bid![i]! + ask![i]!) / 2);
          trades.push([session, symbol![i]!, -1, premium]);
          option = { symbol: symbol![i]!, strike: strike![i]!, expiration: expiration![i]!, premium };
        }
      }
      // After the close: the put expires and settles at its session's close.
      if (option !== undefined && option.expiration <= session) {
        const settlement = daily.get(option.expiration)!;
        const intrinsic = roundPrice(Math.max(0, option.strike - settlement));
        trades.push([session, option.symbol, 1, intrinsic]);
        if (intrinsic >= 0.01) {
          trades.push([session, 'SPY', 100, settlement]);
          shares = 100;
        }
        option = undefined;
      }
    }
    return trades;
  } finally {
    sql.close();
  }
}
