/**
 * The client's errors, one class per failure family. A refusal of the service is a `MarketDataError` (as a
 * local store throws it), subclassed by status so that a script can catch the one it handles; what never
 * reached an answer (the network, a body that is not the service's) has its own classes.
 */
import { type ErrorBody, MarketDataError } from '../errors.js';

/** What the service said beside the status: its ray id (quote it to support) and the raw body text. */
export type ResponseContext = { readonly rayId?: string; readonly text?: string; readonly cause?: unknown };

/** A refusal by the service (any 4xx or 5xx), with its status, body and ray id. */
export class ServiceError extends MarketDataError {
  readonly rayId: string | undefined;

  constructor(status: number, errmsg: string, body: ErrorBody, context: ResponseContext = {}) {
    super(status, errmsg, { body, ...(context.cause === undefined ? {} : { cause: context.cause }) });
    this.name = 'ServiceError';
    this.rayId = context.rayId;
  }
}

/** 400: the request could not be read (a parameter, an OCC symbol, a request line over 4,094 bytes). */
export class BadRequestError extends ServiceError {
  override name = 'BadRequestError';
}
/** 401: the token is missing or unknown. */
export class AuthenticationError extends ServiceError {
  override name = 'AuthenticationError';
}
/** 402: the plan does not cover the request (history, mode). */
export class PaymentRequiredError extends ServiceError {
  override name = 'PaymentRequiredError';
}
/** 403: refused by policy (e.g. a second IP address). */
export class ForbiddenError extends ServiceError {
  override name = 'ForbiddenError';
}
/** 404 with an `errmsg`: the question names nothing that exists (a 404 without one is an empty answer). */
export class NotFoundError extends ServiceError {
  override name = 'NotFoundError';
}
/** 413: an intraday candle range of a year or more (the client splits ranges, so this is rare). */
export class PayloadTooLargeError extends ServiceError {
  override name = 'PayloadTooLargeError';
}

/** 429: out of credits for the window, or over 50 requests in flight; `retryAfterSeconds` when the service says. */
export class RateLimitError extends ServiceError {
  override name = 'RateLimitError';
  readonly retryAfterSeconds: number | undefined;

  constructor(
    status: number,
    errmsg: string,
    body: ErrorBody,
    context: ResponseContext & { retryAfterSeconds?: number } = {},
  ) {
    super(status, errmsg, body, context);
    this.retryAfterSeconds = context.retryAfterSeconds;
  }
}

/** 5xx: the service failed; those above 500 were retried before this was thrown. */
export class ServerError extends ServiceError {
  override name = 'ServerError';
}

/** The service could not be reached or dropped the connection, after the retries. */
export class NetworkError extends Error {
  readonly code = 'network' as const;

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'NetworkError';
  }
}

/** A success status whose body is not the service's JSON. */
export class ParseError extends Error {
  readonly code = 'parse' as const;

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ParseError';
  }
}

const BY_STATUS: Readonly<Record<number, typeof ServiceError>> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: PaymentRequiredError,
  403: ForbiddenError,
  404: NotFoundError,
  413: PayloadTooLargeError,
};

/** The typed error of a refusal: the status's class, with the body's errmsg (or the text of an HTML body). */
export function errorForStatus(
  status: number,
  text: string,
  context: ResponseContext & { retryAfterSeconds?: number } = {},
): ServiceError {
  const body = parseErrorBody(text);
  const errmsg = body?.errmsg ?? (stripTags(text) || `HTTP ${status}`);
  const full = { ...context, text };
  const errorBody: ErrorBody = body ?? { s: 'error', errmsg };
  if (status === 429) return new RateLimitError(status, errmsg, errorBody, full);
  if (status >= 500) return new ServerError(status, errmsg, errorBody, full);
  const Kind = BY_STATUS[status] ?? ServiceError;
  return new Kind(status, errmsg, errorBody, full);
}

function parseErrorBody(text: string): (ErrorBody & { errmsg?: string }) | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const record = parsed as Record<string, unknown>;
    const s = record['s'] === 'no_data' ? 'no_data' : 'error';
    return { ...record, s, ...(typeof record['errmsg'] === 'string' ? { errmsg: record['errmsg'] } : {}) };
  } catch {
    return undefined;
  }
}

function stripTags(text: string): string {
  return text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
