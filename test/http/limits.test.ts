/**
 * The service's limits over a real port (semantics §6, api-reference §8): 429 when an account's credits
 * run out and when it has more than 50 requests in flight, 403 for a second IP address within 5 minutes,
 * the HTML 400 of a request line over 4094 bytes (no log entry, no credits), and the request log the
 * server writes as `pitchain log` reads it.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, promises as fs, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountId } from '../../src/billing/accounts.js';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { getFrom, rawRequest, type ServerProcess, startServer } from './helpers/server.js';

const NOW = '2020-03-16T15:45:00-04:00';
/** Two contracts (one strike each side of the money) of the 03-18 expiry: 2 credits live. */
const CHAIN = '/v1/options/chain/SPY/?dte=2&side=put&strikeLimit=1';
const LIMITED = 'limited-token-0123456789';
const DEVICE = 'device-token-0123456789';
const OTHER = 'other-token-0123456789';
const QUIET = 'quiet-token-0123456789';

type Entry = { ray: string; account: string; path: string; status: number; credits: number };

async function readLog(file: string): Promise<Entry[]> {
  const text = await fs.readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Entry);
}

function pitchainLog(...args: string[]) {
  return runCli(['log', ...args], {
    env: { ...process.env, TZ: 'Asia/Kolkata' },
  });
}

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-http-limits-'));
}, 120_000);
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('an accounts file over a real port', () => {
  let server: ServerProcess;
  let logFile: string;
  beforeAll(async () => {
    const accounts = path.join(dir, 'accounts.json');
    logFile = path.join(dir, 'requests.jsonl');
    await fs.writeFile(
      accounts,
      JSON.stringify({
        [LIMITED]: { id: 'limited', plan: 'starter', opra: true, credits: { limit: 3, period: 'day' } },
        [DEVICE]: { plan: 'trader', opra: true },
        [OTHER]: { plan: 'trader', opra: true },
        [QUIET]: { plan: 'trader', opra: true },
      }),
    );
    server = await startServer(['--now', NOW, '--accounts', accounts, '--log', logFile]);
  }, 120_000);
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });

  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it('answers 429 once the credits of the window are spent, and logs every request', async () => {
    const first = await fetch(`${server.url}${CHAIN}`, { headers: bearer(LIMITED) });
    expect([first.status, first.headers.get('x-api-ratelimit-consumed')]).toEqual([200, '2']);
    expect(first.headers.get('x-api-ratelimit-remaining')).toBe('1');
    // One credit left is enough to ask: the balance may go below zero (api-reference §8).
    const second = await fetch(`${server.url}${CHAIN}&token=${LIMITED}`);
    expect([second.status, second.headers.get('x-api-ratelimit-remaining')]).toEqual([203, '-1']);
    const refused = await fetch(`${server.url}${CHAIN}`, { headers: bearer(LIMITED) });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      s: 'error',
      errmsg: 'API credit limit reached for current window.',
      troubleshootingGuide: 'https://www.marketdata.app/docs/api/troubleshooting/running-out-of-credits',
    });
    expect(refused.headers.get('x-api-ratelimit-consumed')).toBe('0');
    const ray = refused.headers.get('cf-ray')!;
    expect(ray).toMatch(/^[0-9a-f]{16}-LCL$/);

    // What the server wrote, as `pitchain log` reads it; no token anywhere in the file.
    const logged = (await readLog(logFile)).filter((e) => e.account === 'limited');
    expect(logged.map((e) => [e.path, e.status, e.credits])).toEqual([
      ['/v1/options/chain/SPY/', 200, 2],
      ['/v1/options/chain/SPY/', 203, 2],
      ['/v1/options/chain/SPY/', 429, 0],
    ]);
    expect(logged.at(-1)!.ray).toBe(ray);
    expect(await fs.readFile(logFile, 'utf8')).not.toContain('token-0123456789');
    const one = await pitchainLog('--log', logFile, '--ray', ray);
    expect([one.code, one.stderr]).toEqual([0, '']);
    expect(one.stdout.split('\n')).toEqual([
      expect.stringMatching(/^time \(ET\)\s+ray\s+account\s+status\s+credits\s+path$/),
      expect.stringMatching(
        new RegExp(`^2020-03-16T15:45:00-04:00\\s+${ray}\\s+limited\\s+429\\s+0\\s+/v1/options/chain/SPY/$`),
      ),
      '',
    ]);
    const json = await pitchainLog('--log', logFile, '--json', '--last', '1');
    expect(JSON.parse(json.stdout)).toMatchObject({ ray, status: 429, credits: 0, atSeconds: 1584387900 });
    const missing = await pitchainLog('--log', logFile, '--ray', 'ffffffffffffffff-LCL');
    expect([missing.code, missing.stdout]).toEqual([1, '']);
    expect(missing.stderr).toContain('no request with ray id ffffffffffffffff-LCL');
  });

  it('answers 403 with X-API-Authorized-IP when a token comes from a second IP address', async () => {
    const url = `${server.url}${CHAIN}`;
    expect([200, 203]).toContain((await getFrom(url, '127.0.0.1', bearer(DEVICE))).status);
    const blocked = await getFrom(url, '127.0.0.2', bearer(DEVICE));
    expect(blocked.status).toBe(403);
    expect(blocked.headers['x-api-authorized-ip']).toBe('127.0.0.1');
    expect(JSON.parse(blocked.body)).toEqual({
      s: 'error',
      errmsg:
        'Access denied. Only one device is permitted. Your IP address has changed, and your account is temporarily blocked for security reasons. Please wait 5 minutes before trying again.',
      authorizedIP: '127.0.0.1',
      blockedIP: '127.0.0.2',
      troubleshootingGuide: 'https://www.marketdata.app/docs/api/troubleshooting/multiple-ip-addresses',
    });
    // The account is blocked for 5 minutes of the server's clock, from its first address too; other
    // accounts are not.
    expect((await getFrom(url, '127.0.0.1', bearer(DEVICE))).status).toBe(403);
    expect([200, 203]).toContain((await getFrom(url, '127.0.0.2', bearer(OTHER))).status);
  });

  it('gives a request line over 4094 bytes the HTML 400 on a raw socket: no log entry, no credits', async () => {
    const target = (length: number) => {
      const head = `/v1/options/chain/SPY/?token=${QUIET}&dte=2&side=put&strikeLimit=1&pad=`;
      return `${head}${'p'.repeat(length - 'GET  HTTP/1.1'.length - head.length)}`;
    };
    const long = target(4095);
    expect(`GET ${long} HTTP/1.1`.length).toBe(4095);
    const answer = await rawRequest(
      server.url,
      `GET ${long} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    const [head, body] = answer.split('\r\n\r\n');
    expect(head!.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(head).toMatch(/^content-type: text\/html$/im);
    expect(head).not.toMatch(/^(cf-ray|x-api-ratelimit-[a-z]+):/im);
    expect(body).toBe(
      '<html><head><title>Bad Request</title></head><body><h1><p>Bad Request</p></h1>Request Line is too large (4095 > 4094)</body></html>',
    );
    // Nothing of it reached the account: the next request finds its whole window left.
    const next = await fetch(`${server.url}${CHAIN}`, { headers: bearer(QUIET) });
    expect([next.status, next.headers.get('x-api-ratelimit-remaining')]).toEqual([203, String(100_000 - 2)]);
    const quiet = (await readLog(logFile)).filter((e) => e.account === accountId(QUIET));
    expect(quiet.map((e) => e.status)).toEqual([203]);
    // Longer lines too: past node:http's head limit the server answers it itself, with the size it read.
    for (const length of [20_035, 70_035]) {
      const line = `GET ${target(length)} HTTP/1.1`;
      expect(line.length).toBe(length);
      const huge = await rawRequest(server.url, `${line}\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(huge.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      const size = Number(/Request Line is too large \((\d+) > 4094\)<\/body><\/html>$/.exec(huge)?.[1]);
      if (length < 65_536) expect(size).toBe(length);
      else expect(size >= 65_536 && size <= length).toBe(true);
    }
    expect((await readLog(logFile)).filter((e) => e.account === accountId(QUIET)).length).toBe(1);
    // 4094 bytes is within the limit.
    const atLimit = await rawRequest(
      server.url,
      `GET ${target(4094)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(atLimit.split('\r\n')[0]).toMatch(/^HTTP\/1.1 20[03] /);
  });
});

/**
 * Opens a TCP connection and writes one request on it; resolves once the bytes are in the kernel, with
 * the answer to come.
 */
function sendRequest(url: string, target: string): Promise<{ answer: Promise<string> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    const answer = new Promise<string>((done, fail) => {
      socket.on('data', (chunk) => {
        text += chunk.toString();
      });
      socket.on('end', () => done(text));
      socket.on('error', fail);
    });
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, () =>
        resolve({ answer }),
      );
    });
  });
}

/** The server-side ends of the established connections to a port, with the bytes not yet read on each. */
function unreadBytes(port: number): number[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((cells) => cells[1]?.endsWith(`:${hexPort}`) && cells[3] === '01')
    .map((cells) => Number.parseInt(cells[4]!.split(':')[1]!, 16));
}

describe('more than 50 requests in flight for one account', () => {
  let server: ServerProcess;
  let fifo: string;
  let reader: number;
  beforeAll(async () => {
    // The server's request log is a pipe that this test fills before the server starts: no request can
    // finish (each waits to write its log line) until the test reads it. That holds 60 requests in flight
    // at once whatever the machine's speed, as 60 slow parallel clients would.
    fifo = path.join(dir, 'requests.fifo');
    execFileSync('mkfifo', [fifo]);
    reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    for (const size of [4096, 1]) {
      try {
        for (;;) writeSync(writer, Buffer.alloc(size, '\n'));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      }
    }
    closeSync(writer);
    // Without an accounts file every request is the local account.
    server = await startServer(['--now', NOW, '--log', fifo]);
  }, 120_000);
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    closeSync(reader);
  });

  it('answers 429 "Too many concurrent requests" beyond the 50th, and recovers', async () => {
    const port = Number(new URL(server.url).port);
    const sent = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        sendRequest(server.url, `/v1/options/chain/SPY/?dte=30&side=put&strikeLimit=${i + 1}`),
      ),
    );
    // Once the server has read every request off its socket, each was counted in or refused.
    while (unreadBytes(port).length < 60 || unreadBytes(port).some((bytes) => bytes > 0)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    let logged = '';
    let answered = false;
    const answers = Promise.all(sent.map((s) => s.answer)).finally(() => {
      answered = true;
    });
    const chunk = Buffer.alloc(65_536);
    /** Adds what the pipe holds now to `logged`; false when it held nothing. */
    const readSome = (): boolean => {
      try {
        const n = readSync(reader, chunk);
        logged += chunk.subarray(0, n).toString();
        return n > 0;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        return false;
      }
    };
    const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
    while (!answered) if (!readSome()) await pause();
    // The last answers can arrive while the pipe still holds the last lines (the loop was pausing): read on
    // until a whole line of every request is in.
    const wholeLines = () =>
      logged
        .split('\n')
        .slice(0, -1)
        .filter((line) => line !== '');
    const deadline = Date.now() + 20_000;
    while (wholeLines().length < 60 && Date.now() < deadline) if (!readSome()) await pause();
    const statuses = (await answers).map((a) => Number(a.slice(9, 12)));
    expect([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 429).length]).toEqual([
      50, 10,
    ]);
    const refused = (await answers).filter((a) => a.startsWith('HTTP/1.1 429'));
    for (const answer of refused) {
      expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toEqual({
        s: 'error',
        errmsg: 'Too many concurrent requests. Please reduce parallel requests and retry.',
        troubleshootingGuide:
          'https://www.marketdata.app/docs/api/troubleshooting/too-many-concurrent-requests',
      });
    }
    // Refusals are logged like any request, with no credits.
    const entries = wholeLines().map((line) => JSON.parse(line) as Entry);
    expect(entries.filter((e) => e.status === 429).map((e) => [e.account, e.credits])).toEqual(
      Array.from({ length: 10 }, () => ['local', 0]),
    );
    // Every request left the count when it was answered: the next one is served.
    const next = fetch(`${server.url}${CHAIN}`);
    while (!readSome()) await pause();
    expect((await next).status).toBe(200);
  });
});
