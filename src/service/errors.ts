/**
 * The one table from error class to the service's status and body. Causes are kept for the request log
 * and the operator's console, never put in a body: a body says only what the service would say.
 */
import { type ErrorBody, InvalidInputError, MarketDataError, StoreError } from '../errors.js';

/** What the service answers for a failure, and what an operator may read about it. */
export type Failure = {
  readonly status: number;
  readonly body: ErrorBody;
  /** For logs: the error, its cause chain and, for store errors, the SQL. Undefined for plain refusals. */
  readonly detail?: string;
};

/** The body of every 500: no internals, the ray id in the headers says where to look. */
const INTERNAL_ERROR: ErrorBody = { s: 'error', errmsg: 'Internal error.' };

/**
 * Maps an error to the service's answer:
 * - `MarketDataError`: its status and body (a refusal the specification describes);
 * - `InvalidInputError`: 400 with its message (a value the caller gave that cannot be read);
 * - anything else, `StoreError` included: 500 "Internal error.", with the detail kept for logs.
 */
export function failureOf(error: unknown): Failure {
  if (error instanceof MarketDataError) return { status: error.status, body: error.body };
  if (error instanceof InvalidInputError) return { status: 400, body: { s: 'error', errmsg: error.message } };
  return { status: 500, body: INTERNAL_ERROR, detail: describe(error) };
}

/** An error, its SQL when a statement failed, and its causes, one per line. */
export function describe(error: unknown): string {
  const lines: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 8; depth++) {
    if (current instanceof Error) {
      lines.push(`${depth === 0 ? '' : 'caused by: '}${current.name}: ${current.message}`);
      if (current instanceof StoreError && current.sql !== undefined)
        lines.push(`sql: ${current.sql.trim()}`);
      current = current.cause;
    } else {
      lines.push(`${depth === 0 ? '' : 'caused by: '}${String(current)}`);
      current = undefined;
    }
  }
  return lines.join('\n');
}
