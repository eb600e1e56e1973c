import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/library/store.js';
import { CLI_BIN, ensureBuilt, runCommand } from './helpers/build.js';
import { REPO_ROOT } from './helpers/paths.js';

const DENO = join(REPO_ROOT, 'node_modules', '.bin', 'deno');
// Offline by construction: the package.json's node_modules is used as installed (`manual`), remote
// modules may come only from the cache (none are imported), and no deno.lock is written into the repo.
const FLAGS = ['--node-modules-dir=manual', '--cached-only', '--no-lock'];
const ENV = { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };

describe('the built package under Deno', () => {
  beforeAll(ensureBuilt);

  it('imports pitchain by name and runs DuckDB through the Node-API addon', async () => {
    const result = await runCommand(DENO, ['run', '--allow-all', ...FLAGS, 'test/deno/import-check.ts'], {
      env: ENV,
    });
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 0,
      stdout: 'ok\n',
      stderr: '',
    });
  });

  it('serves a store with Deno.serve(createApp(store).fetch), answering as store.request does', async () => {
    const result = await runCommand(DENO, ['run', '--allow-all', ...FLAGS, 'test/deno/serve-check.ts'], {
      env: ENV,
    });
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 0,
      stdout: 'ok\n',
      stderr: '',
    });
  });

  it('runs pitchain serve on a random port: the answers of store.request, and SIGTERM stops it with 0', async () => {
    const now = '2020-03-16T15:45:00-04:00';
    const child = spawn(
      DENO,
      [
        'run',
        '--allow-all',
        ...FLAGS,
        CLI_BIN,
        'serve',
        '--store',
        'data/sample',
        '--port',
        '0',
        '--now',
        now,
      ],
      { cwd: REPO_ROOT, env: { ...ENV, TZ: 'Asia/Kolkata' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const store = await openStore(join(REPO_ROOT, 'data/sample'), { now, threads: 1 });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /listening on (http:\/\/\S+)/.exec(out);
          if (match !== null) resolve(match[1]!);
        });
        child.once('close', (code) => reject(new Error(`deno exited with ${code}: ${out}`)));
      });
      const target = '/v1/options/chain/SPY/?dte=2&side=put&strikeLimit=1&columns=optionSymbol,bid,updated';
      const response = await fetch(`${url}${target}`);
      const expected = await store.request(target);
      expect([response.status, await response.text()]).toEqual([expected.status, expected.body]);
      expect(response.headers.get('x-api-ratelimit-consumed')).toBe('2');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      store.close();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 120_000);

  it('honours the package exports map, as Node does', async () => {
    const ok = await runCommand(
      DENO,
      ['eval', ...FLAGS, "import 'pitchain'; import 'pitchain/client'; import 'pitchain/http'"],
      {
        env: ENV,
      },
    );
    const refused = await runCommand(DENO, ['eval', ...FLAGS, "import 'pitchain/dist/errors.js'"], {
      env: ENV,
    });
    expect([ok.code, refused.code]).toEqual([0, 1]);
    expect(refused.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });
});
