/**
 * `/v1/options/expirations/{underlying}/`: the expiration dates listed at the as-of session and not yet
 * expired, standard contracts only unless `nonstandard=true`, optionally only those listing `strike`.
 */
import { z } from 'zod';
import { asOfSession } from '../../pit/as-of.js';
import { SYMBOL_NOT_FOUND } from '../no-data.js';
import { underlyingKnown } from '../options/contract-table.js';
import { noDataAround } from '../options/no-data-around.js';
import { closedSession, scopeOfSymbol } from '../options/scope.js';
import { answerRowsSql } from '../options/snapshot-sql.js';
import { booleanParam, numberParam, parseParams } from '../params.js';
import type { Endpoint, EndpointContext, EndpointResult } from '../types.js';

/** The largest strike OCC symbology can write: eight digits, three of them decimals. */
const MAX_STRIKE = 99_999.999;

const expirationsSchema = z.object({
  strike: numberParam({ min: 0, max: MAX_STRIKE }).optional(),
  nonstandard: booleanParam.optional(),
});

async function answerExpirations(ctx: EndpointContext): Promise<EndpointResult> {
  const closed = closedSession(ctx.asOf);
  if (closed !== undefined) return closed;
  const { scope, underlying, root } = scopeOfSymbol(ctx.path['underlying']);
  const params = parseParams(expirationsSchema, ctx.query);
  const universe = await answerRowsSql(ctx.sql, ctx.asOf, scope);
  const where = [params.nonstandard === true ? 'TRUE' : 'NOT nonstandard'];
  if (params.strike !== undefined) where.push('strike = CAST($strike AS DECIMAL(12,3))');
  const rows = await ctx.sql.all<{ expiration: string; updated: number }>(
    `${universe.sql}
     SELECT expiration, max(quote_time) AS updated FROM answer_rows
     WHERE ${where.join(' AND ')}
     GROUP BY expiration ORDER BY expiration`,
    params.strike === undefined ? universe.params : { ...universe.params, strike: params.strike },
  );
  if (rows.length === 0) {
    if (!(await underlyingKnown(ctx.sql, ctx.cache, underlying, root))) return SYMBOL_NOT_FOUND;
    return noDataAround(ctx.sql, ctx.cache, scope, asOfSession(ctx.asOf));
  }
  const latest = Math.max(...rows.map((row) => row.updated));
  return {
    kind: 'ok',
    fields: [
      { key: 'expirations', human: 'Expirations', kind: 'date', values: rows.map((row) => row.expiration) },
    ],
    scalars: [
      {
        key: 'updated',
        human: 'Date',
        kind: 'instant',
        value: latest, // the true quote time of the latest snapshot, dated or not (semantics §3.1)
        position: 'after',
      },
    ],
    billing: 'per-response',
    dataAsOfSeconds: latest,
  };
}

/** `GET /v1/options/expirations/{underlying}/`: `{"s":"ok","expirations":["2022-09-23",…],"updated":…}`. */
export const expirations = {
  service: '/v1/options/expirations/',
  pattern: '/v1/options/expirations/:underlying/',
  family: 'options',
  cacheable: false,
  dated: true,
  schema: () => expirationsSchema,
  run: answerExpirations,
} satisfies Endpoint;
