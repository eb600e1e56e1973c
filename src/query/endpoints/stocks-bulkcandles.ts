/**
 * `GET /v1/stocks/bulkcandles/{resolution}/`: one daily candle per symbol (`daily`, `D` or `1D` only).
 *
 * `date` picks the session (a non-session is 404 "Market closed on this date."); without it, the most
 * recent session with data known at the as-of among the requested symbols — during a session, with minute
 * bars stored, that is the session in progress, summarised from its minute bars known so far (as the
 * service answers during market hours); with daily bars only, the last closed session. Symbols without a
 * candle for that session are left out; none at all is no_data. `snapshot=true` asks for every stored
 * symbol. `adjustsplits` (default true) adjusts for splits known at the as-of whose ex-date is after the
 * session; `adjustdividends` follows the daily candles rule (no dividends are stored; `adjustsplits=false`
 * needs `adjustdividends=false`). Billed 1 credit per symbol returned.
 */
import { z } from 'zod';
import { etMidnightSeconds, type fixedClock } from '../../market-time/index.js';
import {
  adjustPrice,
  adjustVolume,
  knowledgeAt,
  loadSplits,
  parseResolution,
  splitFactor,
} from '../candles.js';
import { MARKET_CLOSED } from '../no-data.js';
import { booleanParam, clockedParser, dayParam, symbolsParam } from '../params.js';
import type { Endpoint, EndpointContext, EndpointResult } from '../types.js';
import { DIVIDEND_ONLY_UNSUPPORTED } from './stocks-candles.js';
import {
  badRequest,
  field,
  isTradingDay,
  latestSessions,
  requestedDay,
  requestedSymbols,
} from './stocks-common.js';

function bulkCandlesQuery(clock: ReturnType<typeof fixedClock>) {
  return z.object({
    symbols: symbolsParam.optional(),
    snapshot: booleanParam.optional(),
    date: dayParam(clock).optional(),
    adjustsplits: booleanParam.optional(),
    adjustdividends: booleanParam.optional(),
  });
}

const parseBulkCandles = clockedParser(bulkCandlesQuery);

/** Answers a bulk candles request (see the module comment). */
export async function bulkCandles(ctx: EndpointContext): Promise<EndpointResult> {
  const resolutionText = ctx.path['resolution'] ?? '';
  const resolution = parseResolution(resolutionText);
  if (resolution?.unit !== 'days' || resolution.count !== 1) {
    throw badRequest(`Invalid resolution "${resolutionText}". Bulk candles are daily only: daily, D or 1D.`);
  }
  const query = parseBulkCandles(ctx.query, ctx.nowSeconds);
  const adjustSplits = query.adjustsplits ?? true;
  if (!adjustSplits && (query.adjustdividends ?? true)) throw badRequest(DIVIDEND_ONLY_UNSUPPORTED);
  const symbols = await requestedSymbols(ctx.sql, undefined, query.symbols, query.snapshot === true);
  const day = requestedDay(ctx.asOf, query.date);
  if (day !== undefined && !isTradingDay(day)) return MARKET_CLOSED;

  const knowledge = knowledgeAt(ctx.asOf, ctx.nowSeconds);
  const sessions = await latestSessions(ctx.sql, ctx.cache, symbols, knowledge, {
    count: 1,
    extended: false,
    ...(day === undefined ? {} : { session: day }),
  });
  const latest = [...sessions.values()].map((list) => list[0]!);
  if (latest.length === 0) return { kind: 'no_data' };
  const session = latest
    .map((summary) => summary.session)
    .sort()
    .at(-1)!;
  const rows = symbols.flatMap((symbol) => {
    const summary = sessions.get(symbol)?.[0];
    return summary?.session === session ? [summary] : [];
  });
  const splits = adjustSplits
    ? await loadSplits(
        ctx.sql,
        ctx.cache,
        rows.map((row) => row.symbol),
        knowledge.splitsThrough,
      )
    : new Map();
  const factors = rows.map((row) => splitFactor(splits.get(row.symbol) ?? [], session));
  const t = etMidnightSeconds(session);
  return {
    kind: 'ok',
    fields: [
      field(
        'symbol',
        'Symbol',
        'string',
        rows.map((row) => row.symbol),
      ),
      field(
        'o',
        'Open',
        'number',
        rows.map((row, i) => adjustPrice(row.o, factors[i]!)),
      ),
      field(
        'h',
        'High',
        'number',
        rows.map((row, i) => adjustPrice(row.h, factors[i]!)),
      ),
      field(
        'l',
        'Low',
        'number',
        rows.map((row, i) => adjustPrice(row.l, factors[i]!)),
      ),
      field(
        'c',
        'Close',
        'number',
        rows.map((row, i) => adjustPrice(row.c, factors[i]!)),
      ),
      field(
        'v',
        'Volume',
        'integer',
        rows.map((row, i) => adjustVolume(row.v, factors[i]!)),
      ),
      field(
        't',
        'Date',
        'instant',
        rows.map(() => t),
      ),
    ],
    rowKey: 'symbol',
    billing: 'per-row',
    dataAsOfSeconds: rows.reduce((max, row) => Math.max(max, row.knownAt), Number.NEGATIVE_INFINITY),
  };
}

/** The bulk candles endpoint. */
export const stockBulkCandles = {
  service: '/v1/stocks/bulkcandles/',
  pattern: '/v1/stocks/bulkcandles/:resolution/',
  family: 'stocks',
  cacheable: false,
  dated: true,
  schema: bulkCandlesQuery,
  run: bulkCandles,
} satisfies Endpoint;
