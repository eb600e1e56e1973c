/** The option endpoints of the API face, in the order the service lists them. */
import type { Endpoint } from '../types.js';
import { chain } from './options-chain.js';
import { expirations } from './options-expirations.js';
import { lookup } from './options-lookup.js';
import { quotes } from './options-quotes.js';
import { strikes } from './options-strikes.js';

export { chain, expirations, lookup, quotes, strikes };

/** Every option endpoint, for the request pipeline's router. */
export const OPTION_ENDPOINTS: readonly Endpoint[] = [chain, quotes, lookup, expirations, strikes];
