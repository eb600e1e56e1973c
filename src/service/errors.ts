/**
 * The one table from error class to the service's status and body, and the refusals the service itself
 * makes (credits, concurrency, devices, limits, an unwritable request log). Causes are kept for the
 * request log and the operator's console, never put in a body: a body says only what the service would say.
 */
import { LogUnavailableError } from '../billing/ledger.js';
import { type ErrorBody, InvalidInputError, MarketDataError, StoreError } from '../errors.js';

/** What the service answers for a failure, and what an operator may read about it. */
export type Failure = {
  readonly status: number;
  readonly body: ErrorBody;
  /** Headers the answer carries besides the usual ones (`Retry-After` of a 503). */
  readonly headers?: Readonly<Record<string, string>>;
  /** For logs: the error, its cause chain and, for store errors, the SQL. Undefined for plain refusals. */
  readonly detail?: string;
};

/** The body of every 500: no internals, the ray id in the headers says where to look. */
const INTERNAL_ERROR: ErrorBody = { s: 'error', errmsg: 'Internal error.' };

/** Seconds a client is asked to wait after a 503 (the request log could not be written). */
export const RETRY_AFTER_SECONDS = 5;

/**
 * Maps an error to the service's answer:
 * - `MarketDataError`: its status and body (a refusal the specification describes);
 * - `InvalidInputError`: 400 with its message (a value the caller gave that cannot be read);
 * - `LogUnavailableError`: 503 with `Retry-After`, the cause kept for the operator;
 * - anything else, `StoreError` included: 500 "Internal error.", with the detail kept for logs.
 */
export function failureOf(error: unknown): Failure {
  if (error instanceof MarketDataError) return { status: error.status, body: error.body };
  if (error instanceof InvalidInputError) return { status: 400, body: { s: 'error', errmsg: error.message } };
  if (error instanceof LogUnavailableError) {
    return {
      status: 503,
      body: { s: 'error', errmsg: 'Service temporarily unavailable. Please retry shortly.' },
      headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      detail: describe(error),
    };
  }
  return { status: 500, body: INTERNAL_ERROR, detail: describe(error) };
}

/** A refusal with the service's body: the message, any extra keys, and its troubleshooting guide. */
export function refusal(
  status: number,
  errmsg: string,
  guide: string,
  extra: Record<string, unknown> = {},
): MarketDataError {
  return new MarketDataError(status, errmsg, {
    body: {
      s: 'error',
      errmsg,
      ...extra,
      troubleshootingGuide: `https://www.marketdata.app/docs/api/troubleshooting/${guide}`,
    },
  });
}

/** The service's refusals, each with its status in one place. */
export const REFUSALS = {
  unauthorized: () =>
    new MarketDataError(
      401,
      'Unauthorized. Send a valid token in the Authorization header (Bearer) or as the token parameter.',
    ),
  malformedUrl: () =>
    new MarketDataError(400, 'Malformed URL. Start the query string with ? and separate parameters with &.'),
  badEscape: () =>
    new MarketDataError(400, 'Malformed URL: a percent escape in the path could not be decoded.'),
  noEndpoint: (path: string) => new MarketDataError(404, `No endpoint at ${path}.`),
  multipleDevices: (authorizedIP: string, blockedIP: string | undefined) =>
    refusal(
      403,
      'Access denied. Only one device is permitted. Your IP address has changed, and your account is temporarily blocked for security reasons. Please wait 5 minutes before trying again.',
      'multiple-ip-addresses',
      { authorizedIP, blockedIP },
    ),
  outOfCredits: () => refusal(429, 'API credit limit reached for current window.', 'running-out-of-credits'),
  tooManyConcurrent: () =>
    refusal(
      429,
      'Too many concurrent requests. Please reduce parallel requests and retry.',
      'too-many-concurrent-requests',
    ),
  /** An answer over the server's limits (rows or bytes): 413, as the service answers a range too large. */
  tooLarge: (what: string) =>
    new MarketDataError(
      413,
      `Payload too large: ${what}. Ask for fewer rows (limit, offset, a shorter range) or fewer columns.`,
    ),
  /** A request that ran past the server's time limit: the service's gateway answers 524 at 100 s. */
  timedOut: (seconds: number) =>
    new MarketDataError(524, `The request took longer than ${seconds} s. Ask for less data per request.`),
} as const;

/**
 * The statuses of what is not a failure of the service's pipeline, each decided here: a question
 * without data, a request line too long, a clock instant that cannot be read, and the HTTP face's own
 * answers (a clock set without the admin token, a method other than GET/HEAD/OPTIONS, a request no
 * `Request` can be made of).
 */
export const STATUS = {
  /** A valid question without data: 404, but 200 with the service's `0` body in CSV unless it says why. */
  noData: (format: 'json' | 'csv', saysWhy: boolean): 200 | 404 => (format === 'csv' && !saysWhy ? 200 : 404),
  /** The web server's HTML answer to a request line over 4094 bytes. */
  requestLineTooLarge: 400,
  /** A clock instant (`now`) that cannot be read. */
  invalidNow: 400,
  /** `X-Pitchain-Now` without the server's admin token. */
  clockWithoutAdmin: 403,
  /** A method the API does not answer. */
  methodNotAllowed: 405,
  /** A request target or Host header that cannot be read (else a fault of the adapter: 500). */
  unreadable: (malformed: boolean): 400 | 500 => (malformed ? 400 : 500),
} as const;

/** A question without data that says why (an unknown symbol): the service's 404 `no_data` refusal. */
export function noDataRefusal(errmsg: string): MarketDataError {
  return new MarketDataError(404, errmsg, { body: { s: 'no_data', errmsg } });
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  203: 'Non-Authoritative Information',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  524: 'A Timeout Occurred',
};

/** The reason phrase of a status code. */
export function statusText(status: number): string {
  return STATUS_TEXT[status] ?? '';
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
