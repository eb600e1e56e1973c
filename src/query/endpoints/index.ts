/** Every endpoint the API face answers, in one list for the router. */
import type { Endpoint } from '../types.js';
import { OPTION_ENDPOINTS } from './options.js';
import { STOCK_ENDPOINTS } from './stocks.js';

export const ENDPOINTS: readonly Endpoint[] = [...OPTION_ENDPOINTS, ...STOCK_ENDPOINTS];
