/**
 * `/v1/options/strikes/{underlying}/`: the strikes listed at the as-of session per expiration date (both
 * sides, standard contracts), one key per `YYYY-MM-DD` after the scalar `updated`.
 */
import { z } from 'zod';
import type { Clock } from '../../market-time/index.js';
import { asOfSession } from '../../pit/as-of.js';
import { SYMBOL_NOT_FOUND } from '../no-data.js';
import { underlyingKnown } from '../options/contract-table.js';
import { noDataAround } from '../options/no-data-around.js';
import { closedSession, scopeOfSymbol } from '../options/scope.js';
import { answerRowsSql } from '../options/snapshot-sql.js';
import { clockedParser, expirationParam } from '../params.js';
import type { Endpoint, EndpointContext, EndpointResult } from '../types.js';

function strikesSchema(clock: Clock) {
  return z.object({ expiration: expirationParam(clock).optional() });
}

const parseStrikes = clockedParser(strikesSchema);

async function answerStrikes(ctx: EndpointContext): Promise<EndpointResult> {
  const closed = closedSession(ctx.asOf);
  if (closed !== undefined) return closed;
  const { scope, underlying, root } = scopeOfSymbol(ctx.path['underlying']);
  const params = parseStrikes(ctx.query, ctx.nowSeconds);
  const expiration = params.expiration === 'all' ? undefined : params.expiration;
  const universe = await answerRowsSql(ctx.sql, ctx.asOf, scope);
  const rows = await ctx.sql.all<{ expiration: string; strike: number; updated: number }>(
    `${universe.sql}
     SELECT expiration, strike, max(quote_time) AS updated FROM answer_rows
     WHERE NOT nonstandard ${expiration === undefined ? '' : 'AND expiration = CAST($expiration AS DATE)'}
     GROUP BY expiration, strike ORDER BY expiration, strike`,
    expiration === undefined ? universe.params : { ...universe.params, expiration },
  );
  if (rows.length === 0) {
    if (!(await underlyingKnown(ctx.sql, ctx.cache, underlying, root))) return SYMBOL_NOT_FOUND;
    return noDataAround(ctx.sql, ctx.cache, scope, asOfSession(ctx.asOf));
  }
  const byExpiration: Record<string, number[]> = {};
  for (const row of rows) {
    const list = byExpiration[row.expiration];
    if (list === undefined) byExpiration[row.expiration] = [Number(row.strike)];
    else list.push(Number(row.strike));
  }
  const latest = Math.max(...rows.map((row) => row.updated));
  return {
    kind: 'ok',
    fields: [],
    scalars: [
      {
        key: 'updated',
        human: 'Date',
        kind: 'instant',
        value: latest, // the true quote time of the latest snapshot, dated or not (semantics §3.1)
        position: 'before',
      },
    ],
    rawBody: byExpiration,
    billing: 'per-response',
    dataAsOfSeconds: latest,
  };
}

/** `GET /v1/options/strikes/{underlying}/`: `{"s":"ok","updated":…,"2023-01-20":[30,35,…]}`. */
export const strikes = {
  service: '/v1/options/strikes/',
  pattern: '/v1/options/strikes/:underlying/',
  family: 'options',
  cacheable: false,
  dated: true,
  schema: strikesSchema,
  run: answerStrikes,
} satisfies Endpoint;
