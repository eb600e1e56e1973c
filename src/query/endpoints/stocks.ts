/** The stock and market endpoints, in the order the request pipeline should try their patterns. */
import type { Endpoint } from '../types.js';
import { marketStatusEndpoint } from './markets-status.js';
import { stockBulkCandles } from './stocks-bulkcandles.js';
import { stockCandles } from './stocks-candles.js';
import { stockPrices, stockPricesList } from './stocks-prices.js';
import { stockBulkQuotes, stockQuotes, stockQuotesList } from './stocks-quotes.js';

/** Every stock endpoint (candles, bulk candles, quotes, bulk quotes, prices) and the market status. */
export const STOCK_ENDPOINTS: readonly Endpoint[] = [
  stockCandles,
  stockBulkCandles,
  stockQuotes,
  stockQuotesList,
  stockBulkQuotes,
  stockPrices,
  stockPricesList,
  marketStatusEndpoint,
];
