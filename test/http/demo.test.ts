/**
 * The newcomer's tour (`npm start` = `pitchain demo`): every sentence it prints about an answer is true of
 * that answer on the sample, it exits 0 when its output is not a terminal, and with `--serve` its `curl`
 * lines work against the server it starts, until Ctrl-C.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/library/store.js';
import { CLI_BIN, ensureBuilt, runCli } from '../helpers/build.js';
import { REPO_ROOT } from '../helpers/paths.js';

const NOW = '2020-03-16T15:45:00-04:00';
const ENV = { ...process.env, TZ: 'Asia/Kolkata', NO_COLOR: '1' };

let store: Store;
beforeAll(async () => {
  await ensureBuilt();
  store = await openStore(path.join(REPO_ROOT, 'data/sample'), { now: NOW, threads: 1 });
}, 120_000);
afterAll(() => store.close());

/** The ET wall time `YYYY-MM-DD HH:MM` of every distinct `updated` of an answer, and its dte and OI. */
async function served(target: string) {
  const body = JSON.parse((await store.request(target)).body) as Record<string, unknown[]>;
  const et = (t: number) =>
    new Date(t * 1000).toLocaleString('sv-SE', { timeZone: 'America/New_York' }).slice(0, 16);
  return {
    updated: [...new Set((body['updated'] as number[]).map(et))],
    dte: [...new Set(body['dte'])],
    iv: [...new Set(body['iv'])],
  };
}

describe('pitchain demo', () => {
  it('says of each answer what was served, and exits 0 when not in a terminal', async () => {
    const result = await runCli(['demo'], { env: ENV, timeoutMs: 120_000 });
    expect([result.code, result.stderr]).toEqual([0, '']);
    const lines = result.stdout.split('\n');
    const said = (start: string) => lines.filter((line) => line.trimStart().startsWith(start));
    // What the answers are, asked independently of the demo.
    expect(await served('/v1/options/chain/SPY/?dte=2&side=put&strikeLimit=3')).toEqual({
      updated: ['2020-03-16 15:45'],
      dte: [2],
      iv: expect.not.arrayContaining([null]),
    });
    expect(await served('/v1/options/chain/SPY/?dte=30&side=put&strikeLimit=3')).toMatchObject({
      updated: ['2020-03-13 16:00'],
      dte: [35],
    });
    expect(await served('/v1/options/chain/SPY/?dte=30&side=put&strikeLimit=3&date=2020-03-13')).toEqual({
      updated: ['2020-03-13 16:00'],
      dte: [35],
      iv: [null],
    });
    // What the demo says of them.
    expect(said('Served:')).toEqual([
      '   Served: the 15:45 snapshot of 2020-03-16.',
      '   Served: the 16:00 snapshot of 2020-03-13, the latest quotes of these contracts known at 15:45.',
      '   Served: the 16:00 snapshot of 2020-03-13.',
    ]);
    expect(said('dte ')).toEqual([
      '   dte 2 to the 2020-03-18 expiry, counted from that session.',
      '   dte 35 to the 2020-04-17 expiry, counted from that session (2020-03-13), not from 2020-03-16.',
      '   dte 35 to the 2020-04-17 expiry, counted from that session.',
    ]);
    expect(said('Open interest')).toEqual([
      '   Open interest as published 2020-03-16 09:30 ET.',
      '   Open interest as published 2020-03-16 09:30 ET.',
      '   Open interest as published 2020-03-13 09:30 ET.',
    ]);
    expect(said('Greeks')).toEqual(['   Greeks null, as on every dated request.']);
    expect(said('SPY closed')).toEqual([
      '   SPY closed at 269.32 on Friday; today it will close at 239.85 (-10.9%),',
    ]);
    expect(said('credits billed')).toEqual([
      'credits billed to the demo account, as the service would: 6 + 6 + 1 = 13',
    ]);
    expect(result.stdout).toContain('npx pitchain demo --serve');
    expect(result.stdout).not.toContain('Serving it');
  }, 150_000);

  it('with --serve, serves the sample with the demo account: its curl lines work, Ctrl-C stops it', async () => {
    const child = spawn(process.execPath, [CLI_BIN, 'demo', '--serve', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: ENV,
    });
    // 'close': the process has exited and everything it printed has been read.
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    try {
      let out = '';
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('Requests, as the request log records them:')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`demo exited with ${code}: ${out}`)));
      });
      const url = /Serving it as the service at (http:\/\/127\.0\.0\.1:\d+),/.exec(out)![1]!;
      expect(out).toContain(`MARKETDATA_BASE_URL=${url} MARKETDATA_TOKEN=demo-token`);
      const curls = out
        .split('\n')
        .filter((line) => line.startsWith('  curl '))
        .map((line) => ({
          header: /-H '([^:]+): ([^']+)'/.exec(line),
          target: /'(http:[^']+)'/.exec(line)![1]!,
        }));
      expect(curls.length).toBeGreaterThanOrEqual(3);
      for (const { header, target } of curls) {
        const response = await fetch(target, {
          headers: header === null ? {} : { [header[1]!]: header[2]! },
        });
        expect([target, response.status]).toEqual([target, expect.toBeOneOf([200, 203])]);
      }
      // Without the demo token: a 401, as the tour says.
      expect((await fetch(`${url}/v1/markets/status/`)).status).toBe(401);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      // Each request printed as the request log records it, without its query (and so without a token).
      const logged = out.split('Requests, as the request log records them:')[1]!;
      expect(logged).toMatch(
        /^ {2}200 +1 credit\(s\) {2}\/v1\/options\/quotes\/SPY200417P00250000\/ {2}ray [0-9a-f]{16}-LCL$/m,
      );
      expect(logged).toMatch(/^ {2}401 +0 credit\(s\) {2}\/v1\/markets\/status\/$/m);
      expect(logged).not.toContain('demo-token');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 150_000);
});
