/**
 * The shapes of the service's answers that are made without the pipeline: the response type, the headers
 * every answer carries, the web server's HTML 400 for a long request line, the 400 for an unreadable
 * clock instant, and the ray headers of a logged request.
 */
import { STATUS } from './errors.js';
import { invalidNowMessage } from './instant.js';

/** The maximum HTTP request line (specification L1). */
export const MAX_REQUEST_LINE = 4094;

/** What a request returns: status, headers and the body text exactly as the service would send them. */
export type ApiResponse = {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly credits: number;
  /** For logs only, on a 500: what failed, its causes and SQL. Never part of the body. */
  readonly detail?: string;
};

/** Headers of every answer of the service. */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'X-Content-Type-Options': 'nosniff',
  Vary: 'Accept, Origin',
};

/** The web server's HTML 400 for a request line over {@link MAX_REQUEST_LINE} bytes (specification §7). */
export function requestLineTooLarge(size: number): ApiResponse {
  return {
    status: STATUS.requestLineTooLarge,
    headers: { 'Content-Type': 'text/html' },
    body: `<html><head><title>Bad Request</title></head><body><h1><p>Bad Request</p></h1>Request Line is too large (${size} > ${MAX_REQUEST_LINE})</body></html>`,
    credits: 0,
  };
}

/** The headers naming a logged request's ray and log id. */
export function rayHeaders(entry: { ray: string; logId: number } | undefined): Record<string, string> {
  if (entry === undefined) return {};
  return { 'CF-Ray': entry.ray, 'X-Api-Response-Log-Id': String(entry.logId) };
}

/** The 400 for a clock instant that cannot be read (a caller's mistake in `now`). */
export function invalidNow(now: unknown): ApiResponse {
  const errmsg = invalidNowMessage(now);
  return {
    status: STATUS.invalidNow,
    headers: { ...BASE_HEADERS, 'Content-Type': 'application/json' },
    body: JSON.stringify({ s: 'error', errmsg }),
    credits: 0,
  };
}
