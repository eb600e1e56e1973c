/**
 * What the serve and soak benchmarks share: `pitchain serve` started from the built CLI in its own
 * process, its resident memory read from /proc, and a light kept-alive HTTP client, so that the server
 * is what is measured.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

export type Server = { child: ChildProcess; url: string };

/** Starts `pitchain serve <args>` (the built CLI) and resolves once it prints the address it listens on. */
export async function startServer(
  repoRoot: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Server> {
  const child = spawn(process.execPath, [join(repoRoot, 'dist/cli/bin.js'), 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env,
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match !== null) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`pitchain serve exited with ${code}: ${out}`)));
  });
  return { child, url };
}

/** A process's resident set size in MB (Linux). */
export function residentMb(pid: number): number {
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) / 1024;
}

/**
 * A process's RSS sampled once a second while a load runs. Heavy answers and collections make single
 * samples swing, so the steady state is read as medians: the last third of the samples against the first.
 */
export class RssTrace {
  private readonly samples: number[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    this.timer = setInterval(() => this.samples.push(residentMb(pid)), 1_000);
  }

  /** Stops sampling; the medians of the first and last thirds, the peak and the number of samples. */
  stop(): { firstMb: number; lastMb: number; peakMb: number; count: number } {
    clearInterval(this.timer);
    if (this.samples.length === 0) this.samples.push(residentMb(this.pid));
    const third = Math.max(1, Math.floor(this.samples.length / 3));
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    return {
      firstMb: median(this.samples.slice(0, third)),
      lastMb: median(this.samples.slice(-third)),
      peakMb: Math.max(...this.samples),
      count: this.samples.length,
    };
  }
}

/**
 * A process's CPU seconds so far (Linux): its main thread (where JavaScript runs: HTTP, the service,
 * records, printing) and all its threads (DuckDB's and libuv's too).
 */
export function cpuSeconds(pid: number): { main: number; all: number } {
  const ticks = (task: string) => {
    // Fields after the command name, which may hold spaces: utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  let all = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) all += ticks(task);
  return { main: ticks(String(pid)), all };
}

/**
 * One kept-alive connection that sends a GET, reads its answer (by Content-Length, or to the end of a
 * chunked body) and resolves with the status (0 when the connection fails).
 */
export class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private waiting: ((status: number) => void) | undefined;
  private readonly socket: net.Socket;

  constructor(
    port: number,
    private readonly token: string,
  ) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.take();
    });
    const fail = () => {
      this.waiting?.(0);
      this.waiting = undefined;
    };
    this.socket.on('error', fail);
    this.socket.on('close', fail);
  }

  get(target: string): Promise<number> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.socket.write(
        `GET ${target} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${this.token}\r\n\r\n`,
      );
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private take(): void {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0 || this.waiting === undefined) return;
    const head = this.buffer.subarray(0, end).toString('latin1');
    const length = /^content-length: *(\d+)$/im.exec(head)?.[1];
    let total: number;
    if (length !== undefined) total = end + 4 + Number(length);
    else if (/^transfer-encoding: *chunked$/im.test(head)) {
      const last = this.buffer.indexOf('\r\n0\r\n\r\n', end);
      const empty = this.buffer.subarray(end + 4, end + 9).toString() === '0\r\n\r\n';
      if (last < 0 && !empty) return;
      total = empty ? end + 9 : last + 7;
    } else total = end + 4;
    if (this.buffer.length < total) return;
    this.buffer = this.buffer.subarray(total);
    const resolve = this.waiting;
    this.waiting = undefined;
    resolve(Number(head.slice(9, 12)));
  }
}
