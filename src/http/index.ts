/** The HTTP face of pitchain (a leaf adapter over the service): `createApp` for any runtime, `listen` on Node. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener, RequestError } from '@hono/node-server';
import { STATUS } from '../service/errors.js';
import { requestLineTooLarge } from '../service/service.js';
import { type AppOptions, createApp, type RequestHandler } from './app.js';

export { ADMIN_HEADER, type AppOptions, CLOCK_HEADER, createApp, type RequestHandler } from './app.js';

/** A running server: its address, and a graceful stop (in-flight requests finish). */
export type RunningServer = {
  readonly url: string;
  readonly port: number;
  /**
   * Stops accepting connections, closes idle keep-alive connections, answers the requests in flight
   * (each with `Connection: close`) and resolves once they are answered, or after `graceMs` (default
   * {@link DEFAULT_GRACE_MS}), when the connections still open are cut.
   */
  close(graceMs?: number): Promise<void>;
};

/** How long a stopping server waits for the requests in flight (`pitchain serve --grace`). */
export const DEFAULT_GRACE_MS = 10_000;

/** Serves a store over HTTP on Node (`node:http`); `port: 0` takes a free port. Loopback by default. */
export function listen(
  store: RequestHandler,
  options: AppOptions & { readonly host?: string; readonly port?: number } = {},
): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const app = createApp(store, options);
  // Request lines up to 64 KiB reach the service, which answers any over 4094 bytes with the exact HTML
  // 400 the specification gives; a longer head is answered the same way here, without reaching it.
  const server = createServer(
    { maxHeaderSize: MAX_HEAD_BYTES },
    getRequestListener(app.fetch, { hostname: host, errorHandler: unreadable }),
  );
  // A connection that has had a request is no longer at its first byte: see `answerClientError`.
  const answered = new WeakSet<Socket>();
  let closing = false;
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    answered.add(request.socket);
    // A stopping server answers what it was asked and closes the connection after it: a client that
    // keeps its connection busy cannot hold the server open.
    if (closing) response.setHeader('Connection', 'close');
    response.once('finish', () => {
      if (closing) server.closeIdleConnections();
    });
  });
  server.on('clientError', (error: Error, socket: Socket) =>
    answerClientError(error, socket, answered.has(socket)),
  );
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8787, host, () => {
      const info = server.address() as AddressInfo;
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${info.port}`,
        port: info.port,
        close: (graceMs = DEFAULT_GRACE_MS) =>
          new Promise<void>((done) => {
            closing = true;
            const cut = setTimeout(() => server.closeAllConnections(), graceMs);
            cut.unref();
            server.close(() => {
              clearTimeout(cut);
              done();
            });
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
    { status: STATUS.unreadable(malformed), headers: { 'Access-Control-Allow-Origin': '*' } },
  );
}

/** The largest request head node:http reads before it gives up on a request (its default is 16 KiB). */
const MAX_HEAD_BYTES = 65_536;

/**
 * A request node:http could not parse. A head over the limit gets the specification's HTML 400 for a
 * request line too large, with the line's size: counted from the connection's first byte when this is
 * its first request and the line ends in the bytes at hand, else the bytes read so far (a lower bound).
 * Anything else gets Node's own answer: 408 for a timeout, else a bare 400.
 */
function answerClientError(
  error: Error & { code?: string; rawPacket?: Buffer },
  socket: Socket,
  hadRequest: boolean,
): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    const packet = error.rawPacket ?? Buffer.alloc(0);
    const before = socket.bytesRead - packet.length;
    const end = packet.indexOf('\r\n');
    const size = !hadRequest && end >= 0 ? before + end : Math.max(socket.bytesRead, MAX_HEAD_BYTES);
    const answer = requestLineTooLarge(size);
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\nContent-Length: ${Buffer.byteLength(answer.body)}\r\nConnection: close\r\n\r\n${answer.body}`,
    );
    return;
  }
  socket.end(
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'
      : 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n',
  );
}
