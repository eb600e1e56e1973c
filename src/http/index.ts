/** The HTTP face of pitchain (a leaf adapter over the service): `createApp` for any runtime, `listen` on Node. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener, RequestError } from '@hono/node-server';
import { type AppOptions, createApp, type RequestHandler } from './app.js';

export { ADMIN_HEADER, type AppOptions, CLOCK_HEADER, createApp, type RequestHandler } from './app.js';

/** A running server: its address, and a graceful stop (in-flight requests finish). */
export type RunningServer = {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
};

/** Serves a store over HTTP on Node (`node:http`); `port: 0` takes a free port. Loopback by default. */
export function listen(
  store: RequestHandler,
  options: AppOptions & { readonly host?: string; readonly port?: number } = {},
): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const app = createApp(store, options);
  const server = createServer(getRequestListener(app.fetch, { hostname: host, errorHandler: unreadable }));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8787, host, () => {
      const info = server.address() as AddressInfo;
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${info.port}`,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
          }),
      });
    });
  });
}

/**
 * The answer to a request no `Request` can be made of (a backslash in its path, a Host header that is not
 * a host): the service's 400 body rather than the adapter's empty one. The app itself never throws.
 */
function unreadable(error: unknown): Response {
  const malformed = error instanceof RequestError;
  return Response.json(
    {
      s: 'error',
      errmsg: malformed
        ? 'Malformed URL: the request target or its Host header cannot be read.'
        : 'Internal error.',
    },
    { status: malformed ? 400 : 500, headers: { 'Access-Control-Allow-Origin': '*' } },
  );
}
