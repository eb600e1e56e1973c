/** A CSV line longer than DuckDB reads is a refused row with its file and line, not a crash. */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../../src/store/manifest.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { pitchain } from '../store/fixtures/children.js';

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-long-line-'));
  const [header, row] = (
    await fs.readFile(path.join(REPO_ROOT, 'test/fixtures/ingest/hod_l2_rejects.csv'), 'utf8')
  ).split(/\r?\n/);
  // Without vendor IV and Greeks, whose units a file this small could not establish.
  const fields = row!.split(',').map((value, i) => (i >= 14 && i <= 18 ? '' : value));
  // Line 3: the same contract with a 2 MiB alias field, the right number of fields.
  const long = [...fields.slice(0, -1), 'x'.repeat(2 * 2 ** 20 + 10)].join(',');
  file = path.join(dir, 'long-line.csv');
  await fs.writeFile(file, `${header}\n${fields.join(',')}\n${long}\n`);
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('a CSV line over 2 MiB', () => {
  it('stops the ingest naming the file and line, and creates nothing', async () => {
    const store = path.join(dir, 'refused');
    const result = await pitchain('ingest', '--store', store, '--format', 'hod', file);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^pitchain: .*long-line\.csv:3: line of \d+ bytes, over the \d+ bytes a CSV line may have\n$/,
    );
    await expect(fs.access(store)).rejects.toThrow();
  });

  it('is refused alone with --skip-invalid, the line before it committed', async () => {
    const store = path.join(dir, 'skipped');
    const rejects = path.join(dir, 'rejects.csv');
    const args = ['--format', 'hod', '--skip-invalid', '--rejects', rejects, file];
    const result = await pitchain('ingest', '--store', store, ...args);
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toMatch(/^option_quotes +1$/m);
    expect(result.stdout).toMatch(/^rejected: 1 /m);
    expect(await fs.readFile(rejects, 'utf8')).toMatch(
      /long-line\.csv,3,"line of \d+ bytes, over the \d+ bytes a CSV line may have"/,
    );
    expect((await readManifest(store))!.tables.option_quotes).toHaveLength(1);
  });
});
