/**
 * The embedded sample store is reproducible: regenerating it from the sources in `data/sources` gives
 * the same files, byte for byte, and so the same data version as the committed `data/sample`.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { readManifest } from '../src/store/manifest.js';
import { ensureBuilt, runCli } from './helpers/build.js';
import { REPO_ROOT } from './helpers/paths.js';

let dir: string | undefined;
afterAll(async () => {
  if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
});

it('regenerates data/sample with the same data version and identical files', async () => {
  await ensureBuilt();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-sample-'));
  const result = await runCli(['generate', '--store', dir], {
    env: { ...process.env, SOURCE_DATE_EPOCH: '1609459200' },
    timeoutMs: 300_000,
  });
  expect(result.code, result.stderr).toBe(0);
  const committed = (await readManifest(path.join(REPO_ROOT, 'data/sample')))!;
  const regenerated = (await readManifest(dir))!;
  expect(regenerated.dataVersion).toBe(committed.dataVersion);
  expect(regenerated).toEqual(committed);
  expect(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')).toBe(
    await fs.readFile(path.join(REPO_ROOT, 'data/sample/manifest.json'), 'utf8'),
  );
  expect(committed.provenance.map((p) => p.source)).toEqual([
    'synthetic market (pitchain generator; option quotes are not real)',
  ]);
}, 300_000);
