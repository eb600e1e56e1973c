import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCommand } from './helpers/build.js';
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
