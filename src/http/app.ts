/**
 * The HTTP face: a Hono app that hands every request target to the service (`store.request`) and sends
 * back the service's status, headers and body unchanged. It is a leaf: routing, auth, modes, credits and
 * errors all live in the service, so the server answers byte for byte what `store.request` answers.
 */
import { timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import type { ApiResponse, RequestOptions } from '../service/service.js';

/** What the app needs of a store: its request step. */
export type RequestHandler = {
  request(target: string, options?: RequestOptions): Promise<ApiResponse>;
};

/** How the app answers. */
export type AppOptions = {
  /** Called with a 500's detail (its causes and SQL), which the body never carries. */
  readonly onError?: (detail: string, target: string) => void;
  /**
   * The clock of the requests, epoch seconds (a replay clock); default: the store's own. A request may
   * set its own instant with the `X-Pitchain-Now` header only when it carries the admin token.
   */
  readonly clock?: () => number;
  /** The token that lets a request set `X-Pitchain-Now` (sent as `X-Pitchain-Admin`); never a data token. */
  readonly adminToken?: string;
};

/** The header a backtest sets its clock instant with, and the one that carries the admin token. */
export const CLOCK_HEADER = 'x-pitchain-now';
export const ADMIN_HEADER = 'x-pitchain-admin';

/** The methods and headers a browser may use across origins (api-reference, CORS). */
const CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type',
  'Access-Control-Max-Age': '86400',
};

/** The Hono app of a store: GET and HEAD go to the service, OPTIONS answers the CORS preflight. */
export function createApp(store: RequestHandler, options: AppOptions = {}): Hono {
  const app = new Hono();
  app.options('*', () => new Response(null, { status: 204, headers: CORS_HEADERS }));
  app.on(['GET', 'HEAD'], '*', async (c) => {
    const url = new URL(c.req.url);
    const target = `${url.pathname}${url.search}`;
    const headers: Record<string, string> = {};
    c.req.raw.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
    const remote = incoming?.socket?.remoteAddress;
    // A dual-stack socket reports an IPv4 caller as ::ffff:a.b.c.d: the same device as a.b.c.d.
    const ip = remote?.startsWith('::ffff:') ? remote.slice(7) : remote;
    const asked = headers[CLOCK_HEADER];
    const admin = headers[ADMIN_HEADER];
    delete headers[CLOCK_HEADER];
    delete headers[ADMIN_HEADER];
    let now: number | string | undefined = options.clock?.();
    if (asked !== undefined) {
      if (options.adminToken === undefined || admin === undefined || !sameToken(admin, options.adminToken)) {
        return Response.json(
          { s: 'error', errmsg: `${CLOCK_HEADER} needs the server's admin token in ${ADMIN_HEADER}.` },
          { status: 403, headers: CORS_HEADERS },
        );
      }
      now = asked;
    }
    const response = await store.request(target, {
      headers,
      ...(ip === undefined ? {} : { ip }),
      ...(now === undefined ? {} : { now }),
    });
    if (response.detail !== undefined) options.onError?.(response.detail, url.pathname);
    const body = c.req.method === 'HEAD' || response.status === 204 ? null : response.body;
    return new Response(body, { status: response.status, headers: response.headers });
  });
  app.all('*', () =>
    Response.json(
      { s: 'error', errmsg: 'Method not allowed. The API answers GET, HEAD and OPTIONS.' },
      { status: 405, headers: { Allow: 'GET, HEAD, OPTIONS' } },
    ),
  );
  return app;
}

/** Compares tokens in time independent of where they differ. */
function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
