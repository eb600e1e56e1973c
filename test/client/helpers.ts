/**
 * Helpers of the client tests: a small generated store served by the real `pitchain serve`, and a test
 * double of the remote service's failure modes (statuses, `Retry-After`, dropped connections), which the
 * real server never produces on purpose.
 */
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { type ServerProcess, startServer } from '../http/helpers/server.js';

/** The served clock: after the generated range, so every dated request is historical. */
export const NOW = '2020-03-20T12:00:00-04:00';
export const FROM = '2020-03-02';
export const TO = '2020-03-13';
export const UNDERLYINGS = ['SPY', 'AAPL'];

/** A temporary directory holding a generated store (`<dir>/source`) of SPY and AAPL, EOD snapshots, minute bars. */
export async function generatedStore(): Promise<{ dir: string; source: string }> {
  await ensureBuilt();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-client-'));
  const source = path.join(dir, 'source');
  const run = await runCli(
    ['generate', '--store', source, '--underlyings', UNDERLYINGS.join(','), '--from', FROM, '--to', TO],
    { env: { ...process.env, TZ: 'UTC' }, timeoutMs: 60_000 },
  );
  if (run.code !== 0) throw new Error(`pitchain generate failed: ${run.stderr}`);
  return { dir, source };
}

/** `pitchain serve` on `store` at the pinned clock, its request log in `log`. */
export function serve(store: string, log: string): Promise<ServerProcess> {
  return startServer(['--store', store, '--now', NOW, '--log', log]);
}

/** The credits of every request in a request log (JSON lines). */
export async function loggedCredits(log: string): Promise<number> {
  const text = await fs.readFile(log, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .reduce((sum, line) => sum + (JSON.parse(line) as { credits: number }).credits, 0);
}

/** What the double answers: a status, headers and a body, or `drop` to destroy the connection unanswered. */
export type Scripted = { status: number; headers?: Record<string, string>; body?: string } | 'drop';

/** A test double: answers each request with the next scripted answer (the last repeats); records requests. */
export async function scriptedServer(
  answer: (request: http.IncomingMessage, index: number) => Scripted | Promise<Scripted>,
): Promise<{ url: string; requests: http.IncomingMessage[]; close(): Promise<void> }> {
  const requests: http.IncomingMessage[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer(async (request, response) => {
    const index = requests.push(request) - 1;
    const scripted = await answer(request, index);
    if (scripted === 'drop') {
      request.socket.destroy();
      return;
    }
    response.writeHead(scripted.status, { 'Content-Type': 'application/json', ...scripted.headers });
    response.end(scripted.body ?? '');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A columnar candles body of `n` bars. */
export function candlesBody(n = 1): string {
  const t = Array.from({ length: n }, (_, i) => 1583159400 + 60 * i);
  return JSON.stringify({
    s: 'ok',
    t,
    o: t.map(() => 1),
    h: t.map(() => 2),
    l: t.map(() => 0.5),
    c: t.map(() => 1.5),
    v: t.map(() => 10),
  });
}

/** The four rate-limit headers, as the service sends them. */
export function rateHeaders(consumed: number, remaining = 1000): Record<string, string> {
  return {
    'X-Api-Ratelimit-Limit': '100000',
    'X-Api-Ratelimit-Remaining': String(remaining),
    'X-Api-Ratelimit-Reset': '4102444800',
    'X-Api-Ratelimit-Consumed': String(consumed),
  };
}
