/**
 * The library face's typed parameters name exactly what each endpoint's schema reads (the schema is the
 * one list; these types only add the TypeScript value types). Checked by the type checker: a parameter
 * added to a schema and not here, or the reverse, fails `npm run typecheck`.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type {
  CandlesParams,
  ChainParams,
  CommonParams,
  ExpirationsParams,
  LookupParams,
  MarketStatusParams,
  OptionQuotesParams,
  StockPricesParams,
  StockQuotesParams,
  StrikesParams,
} from '../../src/library/params.js';
import type { Clock } from '../../src/market-time/index.js';
import type { marketStatusEndpoint } from '../../src/query/endpoints/markets-status.js';
import type { chain, expirations, lookup, quotes, strikes } from '../../src/query/endpoints/options.js';
import type { stockCandles } from '../../src/query/endpoints/stocks-candles.js';
import type { stockPrices } from '../../src/query/endpoints/stocks-prices.js';
import type { stockQuotes } from '../../src/query/endpoints/stocks-quotes.js';

type Schema = { schema: (clock: Clock) => { shape: object } };
/** What a schema reads, less `date` (the service reads it for dated endpoints) and what a path carries. */
type Reads<E extends Schema, Path extends string = never> = Exclude<
  keyof ReturnType<E['schema']>['shape'],
  'date' | Path
>;
/** What a typed parameter object names, less the universal keys and `date`. */
type Names<P> = Exclude<keyof P, keyof CommonParams | 'date'>;

describe('library parameter types', () => {
  it('name what each schema reads', () => {
    expectTypeOf<Names<ChainParams>>().toEqualTypeOf<Reads<typeof chain>>();
    expectTypeOf<Names<OptionQuotesParams>>().toEqualTypeOf<Reads<typeof quotes>>();
    expectTypeOf<Names<ExpirationsParams>>().toEqualTypeOf<Reads<typeof expirations>>();
    expectTypeOf<Names<StrikesParams>>().toEqualTypeOf<Reads<typeof strikes>>();
    expectTypeOf<Names<LookupParams>>().toEqualTypeOf<Reads<typeof lookup>>();
    expectTypeOf<Names<CandlesParams>>().toEqualTypeOf<Reads<typeof stockCandles, 'exchange' | 'country'>>();
    expectTypeOf<Names<StockQuotesParams>>().toEqualTypeOf<
      Reads<typeof stockQuotes, 'symbols' | 'snapshot'>
    >();
    expectTypeOf<Names<StockPricesParams>>().toEqualTypeOf<Reads<typeof stockPrices, 'symbols'>>();
    expectTypeOf<Names<MarketStatusParams>>().toEqualTypeOf<Reads<typeof marketStatusEndpoint>>();
  });
});
