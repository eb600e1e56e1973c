/**
 * The CLI as users run it (`node dist/cli/bin.js …` after `npm ci`): ingest refusing bad rows without
 * touching the store, --skip-invalid with its rejects file, info and --help on every command (export and
 * its ingest back: test/store/round-trip.test.ts).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../src/store/manifest.js';
import { ensureBuilt, runCli } from './helpers/build.js';
import { REPO_ROOT } from './helpers/paths.js';
import { sharedPath } from './helpers/shared-data.js';

const BAD = path.join(REPO_ROOT, 'test/fixtures/ingest/hod_l2_rejects.csv');
const cli = (...args: string[]) => runCli(args, { timeoutMs: 120_000 });

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-cli-'));
}, 120_000);
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('pitchain ingest', () => {
  it('refuses a file with a bad row, naming file, line and reason, and leaves the store as it was', async () => {
    const store = path.join(dir, 'refuse');
    const good = await cli(
      'ingest',
      '--store',
      store,
      '--format',
      'hod',
      sharedPath('data/options/hod_L3_A_2016-01-05.csv'),
    );
    expect(good.code, good.stderr).toBe(0);
    const before = await fs.readFile(path.join(store, 'manifest.json'), 'utf8');
    const bad = await cli('ingest', '--store', store, '--format', 'hod', BAD);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^pitchain: .*hod_l2_rejects\.csv:3: .+/m);
    expect(await fs.readFile(path.join(store, 'manifest.json'), 'utf8')).toBe(before);
    await expect(fs.access(path.join(store, 'write.lock'))).rejects.toThrow();
  });

  it('skips a file already ingested under its name; a renamed copy commits and changes nothing', async () => {
    const store = path.join(dir, 'again');
    const file = sharedPath('data/options/hod_L3_A_2016-01-05.csv');
    const first = await cli('ingest', '--store', store, '--format', 'hod', file);
    expect(first.code, first.stderr).toBe(0);
    const version = (await readManifest(store))!.dataVersion;
    const again = await cli('ingest', '--store', store, '--format', 'hod', file);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('already ingested, skipped');
    expect(again.stdout).toContain(`nothing to ingest; data version: ${version}`);
    const copy = path.join(dir, 'renamed-copy.csv');
    await fs.copyFile(file, copy);
    const renamed = await cli('ingest', '--store', store, '--format', 'hod', copy);
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stdout).toContain(`data version: ${version} (unchanged)`);
    const manifest = (await readManifest(store))!;
    expect(manifest.provenance.map((p) => p.source)).toEqual(['hod_L3_A_2016-01-05.csv']);
  });

  it('with --skip-invalid commits the good rows and writes the refused ones with reasons', async () => {
    const store = path.join(dir, 'skip');
    const rejects = path.join(dir, 'rejects.csv');
    const result = await cli(
      'ingest',
      '--store',
      store,
      '--format',
      'hod',
      '--skip-invalid',
      '--rejects',
      rejects,
      BAD,
    );
    expect(result.code, result.stderr).toBe(0);
    const text = await fs.readFile(rejects, 'utf8');
    const lines = text.trim().split('\n');
    expect(lines[0]).toBe('file,line,reason');
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.slice(1).map((l) => Number(l.split(',')[1]))).toContain(3);
    const manifest = (await readManifest(store))!;
    expect(manifest.provenance).toHaveLength(1);
    expect(manifest.provenance[0]!.rejected).toBe(lines.length - 1);
    expect(result.stdout).toMatch(new RegExp(`rejected: ${lines.length - 1} \\(written to `));
  });

  it('names an unknown format and a missing file with a usage error', async () => {
    const format = await cli('ingest', '--store', path.join(dir, 'x'), '--format', 'nope', BAD);
    expect([format.code, format.stderr]).toEqual([
      2,
      expect.stringMatching(/unknown format "nope" \(one of: hod, /),
    ]);
    const missing = await cli(
      'ingest',
      '--store',
      path.join(dir, 'x'),
      '--format',
      'hod',
      path.join(dir, 'none.csv'),
    );
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringMatching(/cannot read .*none\.csv/)]);
  });

  it('takes --memory-limit as a size, leaves the working directory alone, and refuses anything else', async () => {
    const store = path.join(dir, 'limited');
    const cwd = await fs.mkdtemp(path.join(dir, 'cwd-'));
    const file = sharedPath('data/options/hod_L3_A_2016-01-05.csv');
    const args = ['ingest', '--store', store, '--format', 'hod'];
    const run = (...more: string[]) => runCli([...args, ...more], { cwd, timeoutMs: 120_000 });
    const bad = await run('--memory-limit', 'lots', file);
    expect([bad.code, bad.stderr]).toEqual([
      2,
      expect.stringMatching(/--memory-limit must be a size such as 4GB/),
    ]);
    await expect(fs.access(store)).rejects.toThrow();
    const good = await run('--memory-limit', '512MB', file);
    expect(good.code, good.stderr).toBe(0);
    expect(await fs.readdir(cwd)).toEqual([]);
    expect((await fs.readdir(store)).sort()).toEqual(['manifest.json', 'tables']);
  });
});

describe('pitchain info, serve and --help', () => {
  it('prints the data version first, then tables, underlyings, sessions and provenance', async () => {
    const result = await cli('info', '--store', path.join(REPO_ROOT, 'data/sample'));
    expect(result.code).toBe(0);
    const version = (await readManifest(path.join(REPO_ROOT, 'data/sample')))!.dataVersion;
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe(`data version: ${version}`);
    expect(result.stdout).toMatch(/^option_quotes +\d+ +\d+ +[\d.]+ MiB$/m);
    expect(result.stdout).toContain('underlyings (options): AAPL, SPX, SPY');
    expect(result.stdout).toContain('sessions: 505 (2019-01-02 .. 2020-12-31)');
    expect(result.stdout).toContain('option quotes are not real');
    const none = await cli('info', '--store', dir);
    expect([none.code, none.stderr]).toEqual([1, expect.stringMatching(/is not a pitchain store/)]);
  });

  it('prints --help through the bin, and serve refuses a bad port or clock as a usage error', async () => {
    const badPort = await cli('serve', '--store', 'data/sample', '--port', '70000');
    expect([badPort.code, badPort.stderr]).toEqual([
      2,
      expect.stringContaining('--port must be a port number'),
    ]);
    const badNow = await cli('serve', '--store', 'data/sample', '--now', '2020-03-16');
    expect([badNow.code, badNow.stderr]).toEqual([2, expect.stringContaining('--now must be an instant')]);
    // Every command's help is checked in process (cli-help.test.ts); here, that the bin prints one and exits 0.
    const help = await cli('serve', '--help');
    const lines = help.stdout.trimEnd().split('\n');
    const examples = lines.lastIndexOf('Examples:');
    expect([
      help.code,
      help.stdout.startsWith('Usage: pitchain serve'),
      examples > 0 && lines.slice(examples + 1).every((line) => /^ {2}\S|^ {6}\S/.test(line)),
    ]).toEqual([0, true, true]);
  });
});

describe('pitchain request', () => {
  const sample = path.join(REPO_ROOT, 'data/sample');

  it('refuses a --now that is not an instant as a usage error with an example, not a stack trace', async () => {
    const result = await cli('request', '--store', sample, '--now', '2020-03-16', '/v1/markets/status/');
    expect([result.code, result.stdout, result.stderr]).toEqual([
      2,
      '',
      "pitchain: --now must be an instant, not '2020-03-16': give a date and time such as 2020-03-16T15:45:00-04:00, or epoch seconds such as 1584387900.\n",
    ]);
  });

  it('answers at a --now given as a date and time or as epoch seconds', async () => {
    for (const now of ['2020-03-16T10:00:00-04:00', '1584367200']) {
      const result = await cli('request', '--store', sample, '--now', now, '/v1/markets/status/');
      expect([result.code, result.stdout]).toEqual([0, '{"s":"ok","date":[1584331200],"status":["open"]}\n']);
    }
  });
});
