/** Every endpoint the API face answers, in one list for the router. */
import type { Endpoint } from '../types.js';
import { OPTION_ENDPOINTS } from './options.js';

export const ENDPOINTS: readonly Endpoint[] = [...OPTION_ENDPOINTS];
