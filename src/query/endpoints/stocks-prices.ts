/**
 * `GET /v1/stocks/prices/{symbol}/` and `/v1/stocks/prices/?symbols=A,B`: the service's "SmartMid" price.
 * With bars only, `mid` is the latest price known at the as-of — the close of the latest bar known — and
 * `change`/`changepct`/`updated` are those of the stock quote (see `stocks-quotes.ts`). `extended`
 * (default true) = false leaves out minute bars outside regular hours. Billed like quotes: 1 per symbol
 * answered while `mid` is among the columns kept (the service's 1 credit per symbol).
 */
import { z } from 'zod';
import { knowledgeAt } from '../candles.js';
import { SYMBOL_NOT_FOUND } from '../no-data.js';
import { booleanParam, parseParams, symbolsParam } from '../params.js';
import type { Endpoint, EndpointContext, EndpointResult, FieldKind } from '../types.js';
import { field, requestedSymbols, stockSnapshots } from './stocks-common.js';

/** The columns of a stock price, in the service's order, with their human keys and kinds: the one list. */
export const STOCK_PRICE_FIELDS = [
  ['symbol', 'Symbol', 'string'],
  ['mid', 'Mid', 'number'],
  ['change', 'Change $', 'number'],
  ['changepct', 'Change %', 'number'],
  ['updated', 'Date', 'instant'],
] as const satisfies readonly (readonly [string, string, FieldKind])[];

type StockPriceKey = (typeof STOCK_PRICE_FIELDS)[number][0];

const PricesQuery = z.object({ symbols: symbolsParam.optional(), extended: booleanParam.optional() });

/** Answers a stock prices request. */
export async function prices(ctx: EndpointContext): Promise<EndpointResult> {
  const query = parseParams(PricesQuery, ctx.query);
  const symbols = await requestedSymbols(ctx.sql, ctx.path['symbol'], query.symbols, false);
  const snapshots = await stockSnapshots(
    ctx.sql,
    ctx.cache,
    symbols,
    knowledgeAt(ctx.asOf, ctx.nowSeconds),
    query.extended ?? true,
  );
  const found = symbols.flatMap((symbol) => {
    const snapshot = snapshots.get(symbol);
    return snapshot === undefined ? [] : [snapshot];
  });
  if (found.length === 0) return symbols.length === 1 ? SYMBOL_NOT_FOUND : { kind: 'no_data' };
  const values: Readonly<Record<StockPriceKey, readonly unknown[]>> = {
    symbol: found.map((q) => q.symbol),
    mid: found.map((q) => q.last),
    change: found.map((q) => q.change),
    changepct: found.map((q) => q.changepct),
    updated: found.map((q) => q.updated),
  };
  return {
    kind: 'ok',
    fields: STOCK_PRICE_FIELDS.map(([key, human, kind]) => field(key, human, kind, values[key])),
    rowKey: 'symbol',
    billing: 'per-symbol-with-quote',
    dataAsOfSeconds: found.reduce((max, q) => Math.max(max, q.updated), Number.NEGATIVE_INFINITY),
  };
}

/** `/v1/stocks/prices/{symbol}/`. */
export const stockPrices = {
  service: '/v1/stocks/prices/',
  pattern: '/v1/stocks/prices/:symbol/',
  family: 'prices',
  cacheable: false,
  dated: false,
  schema: () => PricesQuery,
  run: prices,
} satisfies Endpoint;

/** `/v1/stocks/prices/?symbols=A,B`. */
export const stockPricesList: Endpoint = { ...stockPrices, pattern: '/v1/stocks/prices/' };
