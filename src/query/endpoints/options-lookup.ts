/**
 * `/v1/options/lookup/{text}`: the OCC symbol of a contract named in human text (`AAPL 7/28/23 $200 Call`),
 * when the store lists that contract at the as-of session. A root's sibling serves the same underlying's
 * contract (`SPX 1/31/18 2700 call` → `SPXW180131C02700000` when only the weekly root lists it).
 */
import { z } from 'zod';
import { MarketDataError } from '../../errors.js';
import { underlyingOfRoot } from '../../market-time/index.js';
import { formatOccSymbol, parseLookupText } from '../../occ/index.js';
import { asOfSession } from '../../pit/as-of.js';
import { NO_OPTION_FOUND } from '../no-data.js';
import type { Endpoint, EndpointContext, EndpointResult } from '../types.js';

/** Lookup reads no query parameter: the contract is the path's text. */
const lookupSchema = z.object({});

async function answerLookup(ctx: EndpointContext): Promise<EndpointResult> {
  const text = (ctx.path['text'] ?? '').replace(/\/+$/, '');
  const parts = parseLookupText(text);
  let symbol: string;
  try {
    symbol = formatOccSymbol(parts);
  } catch (cause) {
    throw new MarketDataError(400, `Invalid lookup text: ${(cause as Error).message}.`, { cause });
  }
  const found = await ctx.sql.value<string | undefined>(
    `SELECT option_symbol FROM contracts
     WHERE (option_symbol = $symbol
            OR (underlying = $underlying AND expiration = CAST($expiration AS DATE) AND side = $side
                AND strike = CAST($strike AS DECIMAL(12,3))))
       AND first_traded <= CAST($session AS DATE)
     ORDER BY option_symbol = $symbol DESC, nonstandard, root
     LIMIT 1`,
    {
      symbol,
      underlying: underlyingOfRoot(parts.root),
      expiration: parts.expirationDate,
      side: parts.side,
      strike: parts.strike,
      session: asOfSession(ctx.asOf),
    },
  );
  if (found === undefined) throw new MarketDataError(404, NO_OPTION_FOUND);
  return {
    kind: 'ok',
    fields: [],
    scalars: [{ key: 'optionSymbol', human: 'Symbol', kind: 'string', value: found, position: 'before' }],
    billing: 'per-response',
    dataAsOfSeconds: null,
  };
}

/** `GET /v1/options/lookup/{text}`: `{"s":"ok","optionSymbol":"AAPL230728C00200000"}`. */
export const lookup = {
  service: '/v1/options/lookup/',
  pattern: '/v1/options/lookup/*text',
  family: 'options',
  cacheable: false,
  dated: false,
  schema: () => lookupSchema,
  run: answerLookup,
} satisfies Endpoint;
