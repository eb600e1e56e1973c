import type { EndpointResult } from '../../../src/query/types.js';
import { failureOf } from '../../../src/service/errors.js';

/**
 * The status and body the service sends for an endpoint's refusal, through the service's one table from
 * error to status; a 500 (an unexpected error) fails the test with its detail.
 */
export async function refusal(promise: Promise<EndpointResult>): Promise<{ status: number; body: unknown }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error === undefined) throw new Error('expected a refusal, got an answer');
  const failure = failureOf(error);
  if (failure.status >= 500) throw new Error(`expected a refusal, got a 500: ${failure.detail}`);
  return { status: failure.status, body: failure.body };
}
