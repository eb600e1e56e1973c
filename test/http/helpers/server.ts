import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../../helpers/paths.js';

/** A `pitchain serve` process, its address once it says it listens, and its exit code when it ends. */
export type ServerProcess = { child: ChildProcess; url: string; exited: Promise<number | null> };

/**
 * Starts `pitchain serve` on the sample store as users start it (the built CLI, a free loopback port),
 * with further arguments, under a non-US time zone; resolves once it prints `listening on`.
 */
export function startServer(args: readonly string[]): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [
      path.join(REPO_ROOT, 'dist/cli/bin.js'),
      'serve',
      '--store',
      path.join(REPO_ROOT, 'data/sample'),
      '--port',
      '0',
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TZ: 'Asia/Kolkata' } },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match !== null) resolve({ child, url: match[1]!, exited });
    });
    child.once('exit', (code) => reject(new Error(`pitchain serve exited with ${code}: ${out}`)));
  });
}
