/**
 * A seeded fuzz of a real `pitchain serve` process over HTTP: hostile targets (random paths and
 * parameters, bad encodings, NUL bytes, prototype names as keys and values, huge numbers, SQL and
 * path-traversal fragments, repeated keys, over-long request lines), wrong methods, hostile headers and
 * tokens, some sent as raw bytes on a socket. No answer is a 5xx, no body carries a token, the log and
 * the server's stderr carry none, the server answers a good request afterwards and its memory stays bounded.
 *
 * 10,000 requests with PITCHAIN_TEST_SIZE=full (CI), 4,000 of the same seed otherwise; `HTTP_FUZZ_RUNS`
 * and `FUZZ_SEED` override the request count and the seed (a failure lists its requests).
 */
import { promises as fs } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { testSize } from '../helpers/size.js';
import {
  HOSTILE,
  hostile,
  PROTOTYPE_NAMES,
  requestTarget,
  shapeProblem,
} from '../service/helpers/hostile.js';
import { rawRequest, residentBytes, type ServerProcess, startServer } from './helpers/server.js';

const RUNS = Number(process.env['HTTP_FUZZ_RUNS'] ?? testSize(10_000, 4_000));
const SEED = Number(process.env['FUZZ_SEED'] ?? 20_200_316);
const NOW = '2020-03-20T15:45:00-04:00';
/** The accounts file's tokens: a free plan (historical only) and a paid one with credits to spare. */
const FREE = 'fuzz-free-token-5f1c2a9e';
const PAID = 'fuzz-paid-token-8d3b7e41';
const TOKENS = [FREE, PAID];
/** Requests in flight at once: well under the 50 an account may have. */
const PARALLEL = 8;

/** A header value node:http will send (no control characters but tab). */
function sendable(text: string): string {
  return text.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

/** A target node:http will send: what it refuses (spaces, controls, non-Latin-1) percent-escaped. */
function escapedTarget(target: string): string {
  return target.replace(/[^\u0021-\u00ff]/g, (c) => {
    try {
      return encodeURIComponent(c);
    } catch {
      return '%EF%BF%BD'; // a lone surrogate
    }
  });
}

type Fuzzed = {
  readonly target: string;
  readonly method: string;
  readonly auth: { readonly header?: string; readonly query?: string };
  readonly headers: Readonly<Record<string, string>>;
  /** Sent as raw bytes on its own socket (the target unescaped), else by node:http on a kept-alive one. */
  readonly raw: boolean;
};

const fuzzed: fc.Arbitrary<Fuzzed> = fc.record({
  target: requestTarget,
  method: fc.constantFrom(
    ...Array<string>(24).fill('GET'),
    'HEAD',
    'HEAD',
    'OPTIONS',
    'POST',
    'PUT',
    'DELETE',
    'PATCH',
    'TRACE',
  ),
  auth: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...TOKENS).map((t) => ({ header: `Bearer ${t}` })) },
    { weight: 2, arbitrary: fc.constantFrom(...TOKENS).map((t) => ({ query: t })) },
    { weight: 1, arbitrary: fc.constant({}) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom('Bearer ', 'Token ', 'Basic ', 'bearer  ', '', 'Bearer\t'),
          fc.constantFrom(...TOKENS),
          hostile,
        )
        .map(([scheme, token, bad]) => ({ header: sendable(`${scheme}${bad === '' ? token : bad}`) })),
    },
  ),
  headers: fc.dictionary(
    fc.constantFrom(
      ...PROTOTYPE_NAMES,
      'x-pitchain-now',
      'x-pitchain-admin',
      'accept',
      'x-forwarded-for',
      'cookie',
    ),
    fc.oneof(fc.constantFrom(...HOSTILE), fc.constant('2020-03-16T15:45:00-04:00')).map(sendable),
    { maxKeys: 2 },
  ),
  raw: fc.integer({ min: 0, max: 24 }).map((n) => n === 0),
});

type Answer = { status: number; contentType: string | undefined; body: string; via: 'http' | 'raw' };

const agent = new http.Agent({ keepAlive: true, maxSockets: PARALLEL });

function send(url: string, request: Fuzzed): Promise<Answer> {
  const separator = request.target.includes('?') ? '&' : '?';
  const withToken =
    request.auth.query === undefined
      ? request.target
      : `${request.target}${separator}token=${request.auth.query}`;
  const headers: Record<string, string> = { ...request.headers };
  if (request.auth.header !== undefined) headers['authorization'] = request.auth.header;
  if (request.raw) {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    const bytes = Buffer.from(
      `${request.method} ${withToken} HTTP/1.1\r\nHost: x\r\n${lines.join('')}Connection: close\r\n\r\n`,
    );
    return rawRequest(url, bytes).then((text) => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const type = /^content-type: *(.*)$/im.exec(head)?.[1]?.trim();
      return { status: Number(head.slice(9, 12)) || 0, contentType: type, body, via: 'raw' };
    });
  }
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      `${url}${escapedTarget(withToken)}`,
      { method: request.method, headers, agent },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: response.headers['content-type'],
            body,
            via: 'http',
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** What is wrong with an answer, or undefined. */
function problem(request: Fuzzed, answer: Answer): string | undefined {
  if (answer.status === 0) return 'no status line';
  if (answer.status >= 500) return `status ${answer.status}`;
  const leaked = TOKENS.find((token) => answer.body.includes(token));
  if (leaked !== undefined) return 'a token in the body';
  if (request.method === 'HEAD' && answer.body !== '') return 'a body on HEAD';
  // Node's own 400s for bytes it cannot parse have no body: only the service's answers have shapes.
  if (answer.status >= 400 && answer.body !== '' && request.method === 'GET') {
    const type = answer.contentType?.split(';')[0];
    const shape = shapeProblem({
      status: answer.status,
      headers: { 'Content-Type': type },
      body: answer.body,
    });
    if (shape !== undefined) return shape;
  }
  return undefined;
}

let dir: string;
let logFile: string;
let server: ServerProcess;
beforeAll(async () => {
  await ensureBuilt();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-http-fuzz-'));
  const accounts = path.join(dir, 'accounts.json');
  logFile = path.join(dir, 'requests.jsonl');
  await fs.writeFile(
    accounts,
    JSON.stringify({
      [FREE]: { plan: 'free' },
      [PAID]: { plan: 'prime', opra: true, credits: { limit: 1_000_000_000_000, period: 'day' } },
    }),
  );
  server = await startServer(['--now', NOW, '--accounts', accounts, '--log', logFile]);
}, 120_000);
afterAll(async () => {
  agent.destroy();
  server.child.kill('SIGTERM');
  await server.exited;
  await fs.rm(dir, { recursive: true, force: true });
});

it(`answers ${RUNS} seeded hostile requests over HTTP below 500, leaking no token, in bounded memory`, async () => {
  const requests = fc.sample(fuzzed, { seed: SEED, numRuns: RUNS });
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  const pid = server.child.pid!;
  let warmBytes = 0;
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const index = next++;
      const request = requests[index]!;
      // Warm: caches, DuckDB's buffers and the request log's ring have filled by then (they plateau).
      if (index === Math.floor(RUNS * 0.3)) warmBytes = residentBytes(pid);
      const answer = await send(server.url, request).catch((error: unknown) => ({
        status: 0,
        contentType: undefined,
        body: String(error),
        via: 'http' as const,
      }));
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const wrong = problem(request, answer);
      if (wrong !== undefined && failures.length < 20) {
        failures.push(
          `#${index} ${request.method} ${JSON.stringify(request.target).slice(0, 300)} (${answer.via} ${JSON.stringify(request.auth)} ${JSON.stringify(request.headers)}): ${wrong}: ${answer.body.slice(0, 200)}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  const histogram = [...statuses]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}:${count}`)
    .join(' ');
  console.log(`http fuzz: ${RUNS} requests, seed ${SEED}; statuses ${histogram}`);
  expect(failures).toEqual([]);

  // Still serving, in memory bounded by what it held after the first 30% of the requests.
  const good = await fetch(`${server.url}/v1/options/chain/SPY/?dte=2&side=put&strikeLimit=1`, {
    headers: { Authorization: `Bearer ${PAID}` },
  });
  expect([200, 203]).toContain(good.status);
  const endBytes = residentBytes(pid);
  console.log(
    `http fuzz: RSS ${Math.round(warmBytes / 2 ** 20)} MiB warm, ${Math.round(endBytes / 2 ** 20)} MiB at the end`,
  );
  expect(endBytes).toBeLessThan(warmBytes * 1.25);
  expect(endBytes).toBeLessThan(1024 * 2 ** 20);
  // No token in the request log or on the server's stderr.
  const written = `${await fs.readFile(logFile, 'utf8')}${server.stderr()}`;
  expect(written.length).toBeGreaterThan(0);
  expect(TOKENS.filter((token) => written.includes(token))).toEqual([]);
}, 600_000);
