/**
 * Ctrl-C during `ingest` and `generate`: the command says that nothing was committed, leaves the store
 * as it was (no partition file, lock or spill of its own), and exits 130. Their progress bars on a
 * terminal start from what is known.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt } from '../helpers/build.js';
import { sharedPath } from '../helpers/shared-data.js';
import { pitchain, runNode } from './fixtures/children.js';

const HOD = sharedPath('data/options/hod_L3_A_2016-01-05.csv');

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-interrupt-'));
  await ensureBuilt();
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** Every file under `root` with its size, relative paths sorted. */
async function listing(root: string): Promise<string[]> {
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
  const sized = await Promise.all(
    files.map(async (f) => `${path.relative(root, f)} ${(await fs.stat(f)).size}`),
  );
  return sized.sort();
}

const interrupted = (at: string, ...args: string[]) =>
  runNode([CLI_BIN, ...args], { env: { PITCHAIN_INTERRUPT_AT: at } });

describe('Ctrl-C', () => {
  it('during an ingest leaves the store as it was, says so and exits 130', async () => {
    const store = path.join(dir, 'existing');
    const first = await pitchain(
      'generate',
      '--store',
      store,
      '--underlyings',
      'SPY',
      '--from',
      '2020-03-02',
      '--to',
      '2020-03-03',
      '--no-minute-bars',
    );
    expect(first.code, first.stderr).toBe(0);
    const before = await listing(store);
    const manifest = await fs.readFile(path.join(store, 'manifest.json'), 'utf8');
    // Before anything is written, and once the first of its three partition files is written.
    for (const at of ['staged', 'file-written']) {
      const result = await interrupted(at, 'ingest', '--store', store, '--format', 'hod', HOD);
      expect([at, result.code, result.signal]).toEqual([at, 130, null]);
      expect(result.stderr).toMatch(/\ninterrupted: nothing was committed; the store is as it was\n$/);
      expect(await listing(store)).toEqual(before);
      expect(await fs.readFile(path.join(store, 'manifest.json'), 'utf8')).toBe(manifest);
    }
  });

  it('during a generate into a new store leaves no store, says so and exits 130', async () => {
    const store = path.join(dir, 'new');
    const args = [
      '--store',
      store,
      '--underlyings',
      'SPY,AAPL',
      '--from',
      '2020-03-02',
      '--to',
      '2020-03-04',
    ];
    const result = await interrupted('file-written', 'generate', ...args, '--no-minute-bars');
    expect([result.code, result.signal]).toEqual([130, null]);
    expect(result.stderr).toMatch(/\ninterrupted: nothing was committed; no store was created\n$/);
    await expect(fs.access(store)).rejects.toThrow();
  });
});

/** Whether `script` (util-linux) can give a command a terminal here. */
function hasScript(): boolean {
  try {
    execFileSync('script', ['-qec', 'true', '/dev/null'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!hasScript())('progress on a terminal', () => {
  /** The first frame of the progress bar a command draws on a terminal (stderr and stdout merged). */
  async function firstFrame(...args: string[]): Promise<string> {
    const command = [process.execPath, CLI_BIN, ...args].map((a) => `'${a}'`).join(' ');
    const result = await runNode([
      '-e',
      `require('node:child_process').execFileSync('script', ['-qec', process.argv[1], '/dev/null'], { stdio: 'inherit' })`,
      command,
    ]);
    expect(result.code, result.stderr).toBe(0);
    // Frames start at column 1 (ESC [1G); escape sequences and the bar's glyphs are dropped.
    const frames = result.stdout.split('\u001b[1G').slice(1);
    return frames[0]!
      .replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '')
      .replace(/[\u2580-\u259f]+/g, '#')
      .trim();
  }

  it('starts an ingest bar with its count, not 100% of nothing', async () => {
    const frame = await firstFrame('ingest', '--store', path.join(dir, 'tty-ingest'), '--format', 'hod', HOD);
    expect(frame).toMatch(/^ingest \| 0 rows \| 0 rows\/s \| 0s$/);
  });

  it('shows generate advancing through its steps', async () => {
    const frame = await firstFrame(
      'generate',
      '--store',
      path.join(dir, 'tty-generate'),
      '--underlyings',
      'SPY',
      '--from',
      '2020-03-02',
      '--to',
      '2020-03-03',
      '--no-minute-bars',
    );
    expect(frame).toMatch(/^generate \[#\] 0% \| 0\/9 steps \| 0s$/);
  });
});
