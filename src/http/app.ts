/**
 * The HTTP face: a Hono app that hands every request target to the service (`store.request`) and sends
 * back the service's status, headers and body unchanged. It is a leaf: routing, auth, modes, credits and
 * errors all live in the service, so the server answers byte for byte what `store.request` answers.
 */
import { timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import { STATUS } from '../service/errors.js';
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
          { status: STATUS.clockWithoutAdmin, headers: CORS_HEADERS },
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
    if (c.req.method === 'HEAD' || response.status === 204)
      return new Response(null, { status: response.status, headers: response.headers });
    const body = bodyOf(response.body);
    const sent =
      typeof body === 'string'
        ? response.headers
        : { ...response.headers, 'Content-Length': String(Buffer.byteLength(response.body)) };
    return new Response(body, { status: response.status, headers: sent });
  });
  app.all('*', () =>
    Response.json(
      { s: 'error', errmsg: 'Method not allowed. The API answers GET, HEAD and OPTIONS.' },
      { status: STATUS.methodNotAllowed, headers: { Allow: 'GET, HEAD, OPTIONS' } },
    ),
  );
  return app;
}

/** Characters of a body per written piece: a large answer is sent as the client reads it. */
const PIECE_CHARS = 64 * 1024;

/**
 * A body as the runtime sends it: a short one whole; a long one as a stream of pieces, each written when
 * the client has read the one before, so no single write holds the event loop or buffers the answer twice.
 */
function bodyOf(body: string): string | ReadableStream<Uint8Array> {
  if (body.length <= PIECE_CHARS) return body;
  const encoder = new TextEncoder();
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      let end = Math.min(body.length, at + PIECE_CHARS);
      // Never split a surrogate pair between pieces.
      const code = body.charCodeAt(end - 1);
      if (end < body.length && code >= 0xd800 && code <= 0xdbff) end++;
      controller.enqueue(encoder.encode(body.slice(at, end)));
      at = end;
      if (at >= body.length) controller.close();
    },
  });
}

/** Compares tokens in time independent of where they differ. */
function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
