/**
 * `/v1/options/quotes/{optionSymbol}/`: one contract's row in the chain's full field set and order
 * (api-reference §3.2 "Real response"): the current row, the EOD row of `date`, or one EOD row per session
 * of `from` (inclusive) … `to` (exclusive) or the last `countback` sessions.
 */
import { z } from 'zod';
import { MarketDataError } from '../../errors.js';
import { type Clock, previousSession, toEtDate } from '../../market-time/index.js';
import { parseOccSymbol } from '../../occ/index.js';
import { asOfSession } from '../../pit/as-of.js';
import { NO_OPTION_FOUND } from '../no-data.js';
import { dataAsOf, optionFields } from '../options/columns.js';
import { withComputedGreeks } from '../options/computed-greeks.js';
import { underlyingOfContract } from '../options/contract-underlying.js';
import { noDataAround } from '../options/no-data-around.js';
import { readAheadRows } from '../options/read-ahead.js';
import { compareRecords, type OptionRecord, toRecords } from '../options/records.js';
import { closedSession, type Scope } from '../options/scope.js';
import { readAnswerRows } from '../options/snapshot-sql.js';
import { badCombination, clockedParser, dayParam, integerParam } from '../params.js';
import type { Endpoint, EndpointContext, EndpointResult, NoData } from '../types.js';
import type { OptionAnswer } from './option-answer.js';

function quotesSchema(clock: Clock) {
  return z.object({
    from: dayParam(clock).optional(),
    to: dayParam(clock).optional(),
    countback: integerParam({ min: 1 }).optional(),
  });
}

type QuotesParams = z.output<ReturnType<typeof quotesSchema>>;

const parseQuotes = clockedParser(quotesSchema);

/**
 * The EOD rows of the sessions in range, each with dated semantics. Only sessions before T's Eastern
 * date are served, as for `date` (semantics §5): their rows are fully known at T.
 */
async function rangeRecords(
  ctx: EndpointContext,
  scope: Extract<Scope, { optionSymbol: string }>,
  params: QuotesParams,
): Promise<OptionRecord[] | NoData> {
  const today = toEtDate(ctx.nowSeconds);
  const upper = params.to !== undefined && params.to < today ? params.to : today;
  const lower = params.from;
  const found = await ctx.sql.all<{ session_date: string }>(
    `SELECT DISTINCT session_date FROM option_quotes
     WHERE underlying = $underlying AND option_symbol = $symbol AND session_date < CAST($upper AS DATE)
       ${lower === undefined ? '' : 'AND session_date >= CAST($lower AS DATE)'}
     ORDER BY session_date DESC
     ${params.countback === undefined ? '' : 'LIMIT $countback'}`,
    {
      symbol: scope.optionSymbol,
      underlying: scope.underlying,
      upper,
      ...(lower === undefined ? {} : { lower }),
      ...(params.countback === undefined ? {} : { countback: params.countback }),
    },
  );
  const sessions = found.map((row) => row.session_date);
  if (sessions.length === 0)
    return noDataAround(ctx.sql, ctx.cache, scope, lower ?? upper, previousSession(upper));
  const rows = await readAnswerRows(ctx.sql, { kind: 'dated', session: sessions[0]! }, scope, { sessions });
  return toRecords(rows, { kind: 'dated', session: sessions[0]! });
}

async function answerQuotes(ctx: EndpointContext): Promise<EndpointResult<OptionAnswer>> {
  const closed = closedSession(ctx.asOf);
  if (closed !== undefined) return closed;
  const optionSymbol = (ctx.path['optionSymbol'] ?? '').trim().toUpperCase();
  const { root } = parseOccSymbol(optionSymbol);
  const params = parseQuotes(ctx.query, ctx.nowSeconds);
  const ranged = params.from !== undefined || params.to !== undefined || params.countback !== undefined;
  if (ranged && ctx.asOf.kind === 'dated')
    throw badCombination('date cannot be combined with from, to or countback.');
  if (params.from !== undefined && params.countback !== undefined) {
    throw badCombination('countback cannot be combined with from.');
  }
  // Inside a session loop over the underlying's chain, the contract's rows are already in memory, in the
  // block of the underlying the store files it under (AAPL1's is AAPL's). Without a row there, the
  // contract is looked up: unlisted is not found, listed is no data (with the nearest sessions).
  // A range of sessions is always queried: it needs no owner.
  const owner = ranged ? undefined : await underlyingOfContract(ctx.sql, ctx.cache, optionSymbol, root);
  const held =
    owner === undefined
      ? undefined
      : await readAheadRows(ctx.sql, ctx.cache, ctx.asOf, { optionSymbol, underlying: owner });
  let underlying: string;
  let records: OptionRecord[];
  if (held !== undefined && held.length > 0 && owner !== undefined) {
    underlying = owner;
    records = toRecords(
      Array.from({ length: held.length }, (_, i) => held.row(i)),
      ctx.asOf,
    );
  } else {
    const listed = await ctx.sql.value<string | null>(
      'SELECT any_value(underlying) FROM contracts WHERE option_symbol = $symbol',
      { symbol: optionSymbol },
    );
    if (listed === null || listed === undefined) throw new MarketDataError(404, NO_OPTION_FOUND);
    underlying = listed;
    const scope = { optionSymbol, underlying };
    if (ranged) {
      const result = await rangeRecords(ctx, scope, params);
      if (!Array.isArray(result)) return result;
      records = result;
    } else {
      records = toRecords(await readAnswerRows(ctx.sql, ctx.asOf, scope), ctx.asOf);
    }
  }
  if (records.length === 0 && !ranged) {
    return noDataAround(ctx.sql, ctx.cache, { optionSymbol, underlying }, asOfSession(ctx.asOf));
  }
  // A lone contract has no parity pair: its computed Greeks are priced on the spot carried (see
  // computed-greeks.ts); the chain's, priced with its expiration's forward, may differ slightly.
  if (ctx.greeks === 'computed') records = withComputedGreeks(records, ctx.cache);
  records.sort((a, b) => a.updated - b.updated || compareRecords(a, b));
  return {
    kind: 'ok',
    fields: optionFields(records),
    rowKey: 'optionSymbol',
    billing: ranged || ctx.asOf.kind === 'dated' ? 'per-1000-rows' : 'per-symbol-with-quote',
    dataAsOfSeconds: dataAsOf(records),
    optionRecords: records,
    ...(ctx.greeks === 'computed' ? { greeksComputed: true as const } : {}),
  };
}

/** `GET /v1/options/quotes/{optionSymbol}/`: a contract's quote now, on `date`, or per session of a range. */
export const quotes = {
  service: '/v1/options/quotes/',
  pattern: '/v1/options/quotes/:optionSymbol/',
  family: 'options',
  cacheable: true,
  dated: true,
  schema: quotesSchema,
  run: answerQuotes,
} satisfies Endpoint;
