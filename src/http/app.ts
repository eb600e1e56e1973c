/**
 * The HTTP face: a Hono app that hands every request target to the service (`store.request`) and sends
 * back the service's status, headers and body unchanged. It is a leaf: routing, auth, modes, credits and
 * errors all live in the service, so the server answers byte for byte what `store.request` answers.
 */
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
};

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
    const ip = incoming?.socket?.remoteAddress;
    const response = await store.request(target, { headers, ...(ip === undefined ? {} : { ip }) });
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
