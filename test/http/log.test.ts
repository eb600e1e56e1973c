/**
 * Where `pitchain serve` keeps its request log and how `pitchain log` reads it: inside a store that can
 * be written, in memory (with a warning) for the embedded sample or a store whose log cannot be
 * written, and a usage error for a `--log` file that cannot be written.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutTokens } from '../../src/service/service.js';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { copySampleStore, REPO_ROOT } from '../helpers/paths.js';
import { startServer } from './helpers/server.js';

const NOW = '2020-03-16T15:45:00-04:00';
const pitchain = (...args: string[]) =>
  runCli(args, {
    env: { ...process.env, TZ: 'Asia/Kolkata' },
    timeoutMs: 30_000,
  });

let dir: string;
let store: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-http-log-'));
  store = path.join(dir, 'store');
  await copySampleStore(store);
}, 120_000);
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** Serves `args`, asks one chain, stops; returns what the server printed. */
async function serveOnce(args: string[]): Promise<{ stdout: string; stderr: string; ray: string }> {
  const server = await startServer(['--now', NOW, ...args]);
  try {
    const response = await fetch(
      `${server.url}/v1/options/chain/SPY/?dte=2&side=put&strikeLimit=1&token=t0p-s3cret-t0ken`,
    );
    expect(response.status).toBe(200);
    return { stdout: '', stderr: server.stderr(), ray: response.headers.get('cf-ray')! };
  } finally {
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  }
}

describe('the request log of pitchain serve', () => {
  it('goes to <store>/logs/requests.jsonl by default, and pitchain log --store reads it', async () => {
    const { stderr, ray } = await serveOnce(['--store', store]);
    expect(stderr).toBe('');
    const table = await pitchain('log', '--store', store);
    expect([table.code, table.stderr]).toEqual([0, '']);
    expect(table.stdout).toContain(`${ray}  local`);
    expect(table.stdout).toMatch(/ 200 +2 +\/v1\/options\/chain\/SPY\/\n$/);
    const file = await fs.readFile(path.join(store, 'logs/requests.jsonl'), 'utf8');
    expect(file).not.toContain('s3cret');
    // A line torn by a crash is left out and counted; --last keeps the tail.
    await fs.appendFile(path.join(store, 'logs/requests.jsonl'), '{"ray":"tor');
    const json = await pitchain('log', '--store', store, '--json', '--last', '1');
    expect(json.code).toBe(0);
    expect(json.stderr).toContain('1 line(s)');
    expect(JSON.parse(json.stdout)).toMatchObject({ ray, account: 'local', status: 200, credits: 2 });
  });

  it('is kept in memory, with a warning, for the embedded sample and for a store whose log cannot be written', async () => {
    const sample = await serveOnce([]);
    expect(sample.stderr).toContain('the embedded sample store is never written');
    await expect(fs.access(path.join(REPO_ROOT, 'data/sample/logs'))).rejects.toThrow();

    const blocked = path.join(dir, 'blocked');
    await copySampleStore(blocked);
    await fs.writeFile(path.join(blocked, 'logs'), 'not a directory');
    const fallback = await serveOnce(['--store', blocked]);
    expect(fallback.stderr).toContain(`cannot write ${path.join(blocked, 'logs/requests.jsonl')}`);
    expect(fallback.stderr).toContain('kept in memory only');
  });

  it('refuses a --log file that cannot be written, and pitchain log says when there is no log', async () => {
    await fs.writeFile(path.join(dir, 'file'), '');
    const underFile = await pitchain(
      'serve',
      '--store',
      store,
      '--port',
      '0',
      '--log',
      path.join(dir, 'file/x.jsonl'),
    );
    expect([underFile.code, underFile.stderr]).toEqual([2, expect.stringContaining('cannot be written')]);
    const none = await pitchain('log', '--store', path.join(dir, 'nowhere'));
    expect([none.code, none.stderr]).toEqual([2, expect.stringContaining('no request log at')]);
    const neither = await pitchain('log');
    expect([neither.code, neither.stderr]).toEqual([2, 'pitchain: give --store <dir> or --log <file>.\n']);
  });
});

describe('withoutTokens', () => {
  it("keeps a path's words and drops token= values and the request's own token", () => {
    expect(
      [
        ['/v1/stocks/quotes/SPY&token=abc123/', undefined],
        ['/v1/options/chain/SPY/', 'abcdefgh12345678'],
        ['/v1/stocks/quotes/abcdefgh12345678/', 'abcdefgh12345678'],
        ['/v1/stocks/quotes/a%2Bb%2F12345678/', 'a+b/12345678'],
        ['/v1/stocks/quotes/SPY/', 'SPY'],
        ['/v1/x;TOKEN=zz/', undefined],
      ].map(([path, token]) => withoutTokens(path!, token)),
    ).toEqual([
      '/v1/stocks/quotes/SPY&token=[redacted]/',
      '/v1/options/chain/SPY/',
      '/v1/stocks/quotes/[redacted]/',
      '/v1/stocks/quotes/[redacted]/',
      '/v1/stocks/quotes/SPY/',
      '/v1/x;TOKEN=[redacted]/',
    ]);
  });
});
