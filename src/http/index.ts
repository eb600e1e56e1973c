/** The HTTP face of pitchain (a leaf adapter over the service): `createApp` for any runtime, `listen` on Node. */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
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
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: app.fetch, hostname: host, port: options.port ?? 8787 },
      (info: AddressInfo) => {
        const shown = host.includes(':') ? `[${host}]` : host;
        resolve({
          url: `http://${shown}:${info.port}`,
          port: info.port,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
            }),
        });
      },
    );
    server.once('error', reject);
  });
}
