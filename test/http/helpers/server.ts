import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { CLI_BIN } from '../../helpers/build.js';
import { REPO_ROOT } from '../../helpers/paths.js';

/** A `pitchain serve` process, its address once it says it listens, and its exit code when it ends. */
export type ServerProcess = {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  /** What it has printed on stderr so far. */
  stderr(): string;
};

/**
 * Starts `pitchain serve` on the sample store as users start it (the built CLI, a free loopback port),
 * with further arguments, under a non-US time zone; resolves once it prints `listening on`.
 */
export function startServer(args: readonly string[]): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [CLI_BIN, 'serve', '--store', path.join(REPO_ROOT, 'data/sample'), '--port', '0', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TZ: 'Asia/Kolkata' } },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match !== null) resolve({ child, url: match[1]!, exited, stderr: () => err });
    });
    child.once('exit', (code) => reject(new Error(`pitchain serve exited with ${code}: ${out}${err}`)));
  });
}

/** A GET over node:http from a chosen local address (any 127.x.y.z is this machine's loopback). */
export function getFrom(
  url: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { localAddress, headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
      );
    });
    request.on('error', reject);
  });
}

/**
 * Sends raw bytes on a TCP socket and returns everything the server answers before closing. The socket
 * stays open for writing, as a client's does, until the server closes it (send `Connection: close`):
 * a client that half-closes at once may see Node drop a request whose answer is not ready.
 */
export function rawRequest(url: string, bytes: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    socket.on('end', () => {
      socket.end();
      resolve(answer);
    });
    socket.on('error', reject);
  });
}

/** A process's resident set size in bytes, from /proc (Linux). */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib) * 1024;
}

/** A process's scheduler state letter from /proc (`T` once SIGSTOP has stopped it). */
export function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}
