/**
 * Stopping a server: SIGTERM stops accepting, answers the requests in flight, closes idle keep-alive
 * connections and exits, even with a client that keeps its connection busy (it used to wait for that
 * client for as long as it kept asking); past --grace what is left is cut. Started through npx or
 * npm start, the server stops when the wrapper gets SIGTERM rather than serve on as an orphan.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const NOW = '2020-03-16T15:45:00-04:00';
const STATUS = '/v1/markets/status/?date=2020-03-13';

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** GETs on one keep-alive connection, one after another, until the server closes it. */
async function busyClient(url: string): Promise<{ statuses: number[]; done: Promise<void> }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const statuses: number[] = [];
  const one = () =>
    new Promise<number>((resolve, reject) => {
      http
        .get(`${url}${STATUS}`, { agent }, (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        })
        .on('error', reject);
    });
  statuses.push(await one());
  const done = (async () => {
    for (;;) {
      try {
        statuses.push(await one());
      } catch {
        return; // refused or closed: the server is stopping
      }
    }
  })();
  return { statuses, done };
}

/** An idle keep-alive connection after one answered request. */
function idleConnection(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () =>
      socket.write(`GET ${STATUS} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`),
    );
    socket.once('data', () => resolve(socket));
    socket.on('error', reject);
  });
}

describe('SIGTERM', () => {
  it('stops a server with a busy and an idle keep-alive client, answering what was in flight', async () => {
    const server: ServerProcess = await startServer(['--now', NOW, '--grace', '20', '--no-log']);
    started.push(server.child);
    const idle = await idleConnection(server.url);
    const idleClosed = new Promise<void>((resolve) => idle.once('close', () => resolve()));
    const client = await busyClient(server.url);
    server.child.kill('SIGTERM');
    // Well inside the 20 s grace: nothing waits for the busy client to stop asking.
    const code = await server.exited;
    await client.done;
    await idleClosed;
    expect(code).toBe(0);
    // 200, or 203 once the answer is in the response cache: never a failure or a cut.
    expect(client.statuses.filter((status) => status !== 200 && status !== 203)).toEqual([]);
    expect(server.stderr()).toBe('');
  });
});

/** Starts a wrapper command; resolves with its address once the server behind it listens. */
function startWrapped(
  command: string,
  args: string[],
): Promise<{ child: ChildProcess; url: string; closed: Promise<void> }> {
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TZ: 'Asia/Kolkata' },
  });
  started.push(child);
  // The pipe ends once every process holding it has exited: the wrapper and the server behind it.
  const closed = new Promise<void>((resolve) => child.stdout!.once('end', () => resolve()));
  child.stderr!.resume();
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /(?:listening on|service at) (http:\/\/[\d.:]+)/.exec(out);
      if (match !== null) resolve({ child, url: match[1]!, closed });
    });
    child.once('exit', (code) => {
      if (!/http:\/\//.test(out)) reject(new Error(`${command} exited with ${code}: ${out}`));
    });
  });
}

describe('a server started through a wrapper', () => {
  it('stops when npx pitchain serve gets SIGTERM', async () => {
    const wrapped = await startWrapped('npx', [
      'pitchain',
      'serve',
      '--store',
      'data/sample',
      '--port',
      '0',
      '--now',
      NOW,
    ]);
    expect((await fetch(`${wrapped.url}${STATUS}`)).status).toBe(200);
    wrapped.child.kill('SIGTERM');
    await wrapped.closed;
    await expect(fetch(`${wrapped.url}${STATUS}`)).rejects.toThrow();
  }, 60_000);

  it('stops when npm start gets SIGTERM', async () => {
    const wrapped = await startWrapped('npm', ['start', '--', '--serve', '--port', '0']);
    wrapped.child.kill('SIGTERM');
    await wrapped.closed;
    await expect(fetch(`${wrapped.url}/status/`)).rejects.toThrow();
  }, 60_000);
});
