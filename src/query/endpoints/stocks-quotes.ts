/**
 * `GET /v1/stocks/quotes/{symbol}/`, `/v1/stocks/quotes/?symbols=A,B` and the deprecated alias
 * `/v1/stocks/bulkquotes/?symbols=…` (which also takes `snapshot=true`: every stored symbol).
 *
 * The store keeps bars, not NBBO quotes, so a quote is built from the bars known at the as-of: `last` is
 * the close of the latest bar known and `updated` the instant it became known (a minute bar's end, a
 * daily bar's close). No bid or ask is stored, yet the service's clients require numbers there (the
 * official SDKs refuse a null): `bid`, `ask` and `mid` are that last price and `bidSize`/`askSize` are 0,
 * a quote with no displayed size on either side, which no spread can be read from (no spread is made
 * up); `change`/`changepct` compare `last` with the previous session's close
 * (split-adjusted, a fraction for changepct, both to 4 decimals); `volume` is the session's volume so far.
 * `52week=true` (single-symbol requests only, as the service) adds the high and low of the daily bars of
 * the year ending at the quote's session; `candle=true` adds the session's `o,h,l,c` so far. `extended`
 * (default true) = false leaves out minute bars outside regular hours.
 *
 * An unknown single symbol is 404 "Symbol not found."; with several symbols the found ones are answered,
 * and no_data only when none has a quote.
 */
import { z } from 'zod';
import { resolveRelative } from '../../market-time/index.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import {
  adjustPrice,
  type Knowledge,
  knowledgeAt,
  knownDailyBars,
  loadSplits,
  splitFactor,
} from '../candles.js';
import { SYMBOL_NOT_FOUND } from '../no-data.js';
import { booleanParam, parseParams, symbolsParam } from '../params.js';
import type { Endpoint, EndpointContext, EndpointResult, Field, FieldKind } from '../types.js';
import { field, requestedSymbols, type StockSnapshot, stockSnapshots } from './stocks-common.js';

/**
 * The columns every stock quote has, in the service's order, with their human keys and kinds (the 52-week
 * and candle columns follow when asked): the one list, which the library's empty answers take too.
 */
export const STOCK_QUOTE_FIELDS = [
  ['symbol', 'Symbol', 'string'],
  ['ask', 'Ask', 'number'],
  ['askSize', 'Ask Size', 'integer'],
  ['bid', 'Bid', 'number'],
  ['bidSize', 'Bid Size', 'integer'],
  ['mid', 'Mid', 'number'],
  ['last', 'Last', 'number'],
  ['change', 'Change $', 'number'],
  ['changepct', 'Change %', 'number'],
  ['volume', 'Volume', 'integer'],
  ['updated', 'Date', 'instant'],
] as const satisfies readonly (readonly [string, string, FieldKind])[];

type StockQuoteKey = (typeof STOCK_QUOTE_FIELDS)[number][0];

const QuotesQuery = z.object({
  symbols: symbolsParam.optional(),
  '52week': booleanParam.optional(),
  extended: booleanParam.optional(),
  candle: booleanParam.optional(),
  /** Read everywhere (a bad value is a 400) but acts only on the bulk quotes alias. */
  snapshot: booleanParam.optional(),
});

function yearBefore(date: string): string {
  const shifted = resolveRelative({ kind: 'relative', amount: -1, unit: 'years' }, { kind: 'date', date });
  return (shifted as { date: string }).date;
}

/** The 52-week high and low at a snapshot: its session so far and the daily bars of the year before it. */
async function fiftyTwoWeek(
  sql: SqlSession,
  cache: StoreCache,
  snapshot: StockSnapshot,
  knowledge: Knowledge,
): Promise<{ high: number; low: number }> {
  const from = yearBefore(snapshot.session);
  // The bars strictly between the day a year before and the snapshot's session, as stored (unadjusted).
  const rows = (await knownDailyBars(sql, cache, snapshot.symbol, snapshot.session, undefined, from)).filter(
    (bar) => bar.date > from && bar.date < snapshot.session,
  );
  const splits =
    (await loadSplits(sql, cache, [snapshot.symbol], knowledge.splitsThrough)).get(snapshot.symbol) ?? [];
  let high = snapshot.candle.h;
  let low = snapshot.candle.l;
  for (const row of rows) {
    const factor = splitFactor(splits, row.date, snapshot.session);
    high = Math.max(high, adjustPrice(row.h, factor));
    low = Math.min(low, adjustPrice(row.l, factor));
  }
  return { high, low };
}

/** Answers a stock quotes request (see the module comment). */
async function answerQuotes(ctx: EndpointContext, allowSnapshot: boolean): Promise<EndpointResult> {
  const query = parseParams(QuotesQuery, ctx.query);
  const snapshotAll = allowSnapshot && query.snapshot === true;
  const symbols = await requestedSymbols(ctx.sql, ctx.path['symbol'], query.symbols, snapshotAll);
  const single = symbols.length === 1 && !snapshotAll;
  const knowledge = knowledgeAt(ctx.asOf, ctx.nowSeconds);
  const snapshots = await stockSnapshots(ctx.sql, ctx.cache, symbols, knowledge, query.extended ?? true);
  const found = symbols.flatMap((symbol) => {
    const snapshot = snapshots.get(symbol);
    return snapshot === undefined ? [] : [snapshot];
  });
  if (found.length === 0) return single ? SYMBOL_NOT_FOUND : { kind: 'no_data' };
  const lasts = found.map((q) => q.last);
  const noSize = found.map(() => 0);
  const values: Readonly<Record<StockQuoteKey, readonly unknown[]>> = {
    symbol: found.map((q) => q.symbol),
    ask: lasts,
    askSize: noSize,
    bid: lasts,
    bidSize: noSize,
    mid: lasts,
    last: lasts,
    change: found.map((q) => q.change),
    changepct: found.map((q) => q.changepct),
    volume: found.map((q) => q.volume),
    updated: found.map((q) => q.updated),
  };
  const fields: Field[] = STOCK_QUOTE_FIELDS.map(([key, human, kind]) =>
    field(key, human, kind, values[key]),
  );
  if (query['52week'] === true && single) {
    const { high, low } = await fiftyTwoWeek(ctx.sql, ctx.cache, found[0]!, knowledge);
    fields.push(field('52weekHigh', '52 Week High', 'number', [high]));
    fields.push(field('52weekLow', '52 Week Low', 'number', [low]));
  }
  if (query.candle === true) {
    fields.push(
      field(
        'o',
        'Open',
        'number',
        found.map((q) => q.candle.o),
      ),
    );
    fields.push(
      field(
        'h',
        'High',
        'number',
        found.map((q) => q.candle.h),
      ),
    );
    fields.push(
      field(
        'l',
        'Low',
        'number',
        found.map((q) => q.candle.l),
      ),
    );
    fields.push(
      field(
        'c',
        'Close',
        'number',
        found.map((q) => q.candle.c),
      ),
    );
  }
  return {
    kind: 'ok',
    fields,
    rowKey: 'symbol',
    billing: 'per-symbol-with-quote',
    dataAsOfSeconds: found.reduce((max, q) => Math.max(max, q.updated), Number.NEGATIVE_INFINITY),
  };
}

/** Answers `/v1/stocks/quotes/…` (one symbol in the path, or `symbols`). */
export function quotes(ctx: EndpointContext): Promise<EndpointResult> {
  return answerQuotes(ctx, false);
}

/** Answers the deprecated `/v1/stocks/bulkquotes/` (`symbols`, or `snapshot=true`). */
export function bulkQuotes(ctx: EndpointContext): Promise<EndpointResult> {
  return answerQuotes(ctx, true);
}

/** `/v1/stocks/quotes/{symbol}/`. */
export const stockQuotes = {
  service: '/v1/stocks/quotes/',
  pattern: '/v1/stocks/quotes/:symbol/',
  family: 'stocks',
  cacheable: true,
  dated: false,
  schema: () => QuotesQuery,
  run: quotes,
} satisfies Endpoint;

/** `/v1/stocks/quotes/?symbols=A,B`. */
export const stockQuotesList: Endpoint = { ...stockQuotes, pattern: '/v1/stocks/quotes/' };

/** `/v1/stocks/bulkquotes/?symbols=A,B` (deprecated alias, still served). */
export const stockBulkQuotes = {
  ...stockQuotes,
  service: '/v1/stocks/bulkquotes/',
  pattern: '/v1/stocks/bulkquotes/',
  run: bulkQuotes,
} satisfies Endpoint;
