/**
 * What a failed or interrupted write leaves: nothing that refuses or misleads the next writer, no empty
 * store, and no new version when nothing was added.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readManifest } from '../../src/store/manifest.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { sharedPath } from '../helpers/shared-data.js';
import { pitchain, runChild, WRITE_CHILD } from './fixtures/children.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-cleanup-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true });
});

const HOD_HEADER =
  'underlying,underlying_last, exchange,optionroot,optionext,type,expiration,quotedate,strike,last,bid,ask,volume,openinterest,impliedvol,delta,gamma,theta,vega,optionalias';
const HOD_GOOD = sharedPath('data/options/hod_L3_A_2016-01-05.csv');
const HOD_BAD = path.join(REPO_ROOT, 'test/fixtures/ingest/hod_l2_rejects.csv');

describe('a failed write', () => {
  it('removes a writer lock it could not fill (disk full), so the next writer is not refused', async () => {
    const dir = path.join(await tempDir(), 'store');
    expect((await runChild(WRITE_CHILD, [dir, '0', '3', '10'])).code).toBe(0);
    const full = await runChild(WRITE_CHILD, [dir, '1', '3', '10'], { fileSizeLimit: 0 });
    expect(full.code).not.toBe(0);
    expect(full.stderr).toMatch(/cannot write the writer lock of .*EFBIG/);
    expect((await fs.readdir(dir)).filter((name) => name.startsWith('write.lock'))).toEqual([]);
    const next = await runChild(WRITE_CHILD, [dir, '1', '3', '10']);
    expect([next.code, next.stderr]).toEqual([0, '']);
  });

  it('leaves no manifest temporary file once the next writer has begun after a crash before the rename', async () => {
    const dir = path.join(await tempDir(), 'store');
    await runChild(WRITE_CHILD, [dir, '0', '3', '10']);
    const crashed = await runChild(WRITE_CHILD, [dir, '1', '3', '10'], {
      env: { PITCHAIN_CRASH_AT: 'manifest-written' },
    });
    expect(crashed.signal).toBe('SIGKILL');
    expect((await fs.readdir(dir)).filter((name) => name.endsWith('.tmp'))).toHaveLength(1);
    const tx = await WriteTransaction.begin(dir);
    await tx.abort();
    expect((await fs.readdir(dir)).sort()).toEqual(['manifest.json', 'tables']);
  });

  it('removes the store directory a failed first ingest created, and only what it created', async () => {
    const parent = await tempDir();
    const store = path.join(parent, 'new', 'store');
    const bad = await pitchain('ingest', '--store', store, '--format', 'hod', HOD_BAD);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/hod_l2_rejects\.csv:3: /);
    expect(await fs.readdir(parent)).toEqual([]);
    // A directory that was there before stays, with what else it holds.
    await fs.mkdir(path.join(parent, 'kept'));
    await fs.writeFile(path.join(parent, 'kept', 'notes.txt'), 'mine');
    const again = await pitchain('ingest', '--store', path.join(parent, 'kept'), '--format', 'hod', HOD_BAD);
    expect(again.code).toBe(1);
    expect(await fs.readdir(path.join(parent, 'kept'))).toEqual(['notes.txt']);
  });
});

describe('an ingest that adds nothing', () => {
  it('commits no version for a header-only file or one whose every row is refused, and says so', async () => {
    const dir = await tempDir();
    const header = path.join(dir, 'header-only.csv');
    await fs.writeFile(header, `${HOD_HEADER}\n`);
    const refused = path.join(dir, 'all-bad.csv');
    // A bad bid, and no vendor IV or Greeks, whose units a one-row file could not establish.
    const badLine = (await fs.readFile(HOD_BAD, 'utf8'))
      .split(/\r?\n/)[3]!
      .split(',')
      .map((value, i) => (i >= 14 && i <= 18 ? '' : value))
      .join(',');
    await fs.writeFile(refused, `${HOD_HEADER}\n${badLine}\n`);

    const fresh = path.join(dir, 'fresh');
    const none = await pitchain('ingest', '--store', fresh, '--format', 'hod', header);
    expect([none.code, none.stdout]).toEqual([
      0,
      `nothing committed: the file holds no rows; no store was created at ${fresh}\n`,
    ]);
    await expect(fs.access(fresh)).rejects.toThrow();

    const store = path.join(dir, 'store');
    expect((await pitchain('ingest', '--store', store, '--format', 'hod', HOD_GOOD)).code).toBe(0);
    const before = await fs.readFile(path.join(store, 'manifest.json'), 'utf8');
    const version = (await readManifest(store))!.dataVersion;
    const empty = await pitchain('ingest', '--store', store, '--format', 'hod', header);
    expect([empty.code, empty.stdout], empty.stderr).toEqual([
      0,
      `nothing committed: the file holds no rows; the store is as it was; data version: ${version}\n`,
    ]);
    const rejects = path.join(dir, 'rejects.csv');
    const skipped = await pitchain(
      'ingest',
      '--store',
      store,
      '--format',
      'hod',
      '--skip-invalid',
      '--rejects',
      rejects,
      refused,
    );
    expect([skipped.code, skipped.stdout], skipped.stderr).toEqual([
      0,
      `nothing committed: every row was refused (1, written to ${rejects}); the store is as it was; data version: ${version}\n`,
    ]);
    expect(await fs.readFile(rejects, 'utf8')).toMatch(/^file,line,reason\n.*all-bad\.csv,2,/);
    expect(await fs.readFile(path.join(store, 'manifest.json'), 'utf8')).toBe(before);
  });
});
