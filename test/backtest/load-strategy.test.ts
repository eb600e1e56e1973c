/**
 * Strategy files as users write them, in the projects they make: `npm init -y` (CommonJS) and an ESM
 * project, each with pitchain in node_modules (linked to this checkout, as an install would place it).
 * Before, a .ts strategy in a CommonJS project crashed with ERR_REQUIRE_CYCLE_MODULE and a stack.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStrategyModule } from '../../src/backtest/load-strategy.js';
import { UsageError } from '../../src/errors.js';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { REPO_ROOT } from '../helpers/paths.js';

const STORE = path.join(REPO_ROOT, 'data/sample');

const TS = `import { defineStrategy } from 'pitchain';
export const options = { fill: 'bid-ask' } as const;
export default defineStrategy({ name: 'ts strategy', parameters: { dte: 30 }, onSession: () => [] });
`;
const CJS = `const { defineStrategy } = require('pitchain');
module.exports = defineStrategy({ name: 'cjs strategy', onSession: () => [] });
`;
const ESM = `import { defineStrategy } from 'pitchain';
export default defineStrategy({ name: 'esm strategy', onSession: () => [] });
`;

let root: string;
/** A project directory with package.json `pkg` and the files given. */
async function project(name: string, pkg: object, files: Record<string, string>): Promise<string> {
  const dir = path.join(root, name);
  await fs.mkdir(path.join(dir, 'node_modules'), { recursive: true });
  await fs.symlink(REPO_ROOT, path.join(dir, 'node_modules', 'pitchain'), 'dir');
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  for (const [file, text] of Object.entries(files)) await fs.writeFile(path.join(dir, file), text);
  return dir;
}

let cjs: string;
let esm: string;
beforeAll(async () => {
  await ensureBuilt();
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-strategies-'));
  // What `npm init -y` writes: no "type", so .js and .ts are CommonJS.
  cjs = await project(
    'cjs',
    { name: 'cjs', version: '1.0.0', main: 'index.js', license: 'ISC' },
    { 'strategy.ts': TS, 'strategy.js': CJS, 'not-a-strategy.ts': 'export const x = 1;\n' },
  );
  esm = await project(
    'esm',
    { name: 'esm', version: '1.0.0', type: 'module' },
    { 'strategy.ts': TS, 'strategy.mts': TS, 'strategy.js': ESM },
  );
}, 300_000);
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('loadStrategyModule', () => {
  it('loads .ts and .js from a CommonJS project, with the options it exports', async () => {
    const ts = await loadStrategyModule(path.join(cjs, 'strategy.ts'));
    expect(ts.strategy.name).toBe('ts strategy');
    expect(ts.strategy.parameters).toEqual({ dte: 30 });
    expect(ts.options).toEqual({ fill: 'bid-ask' });
    const js = await loadStrategyModule(path.join(cjs, 'strategy.js'));
    expect(js.strategy.name).toBe('cjs strategy');
    expect(js.options).toEqual({});
  });

  it('loads .ts, .mts and .js from an ESM project', async () => {
    for (const file of ['strategy.ts', 'strategy.mts']) {
      const loaded = await loadStrategyModule(path.join(esm, file));
      expect(loaded).toMatchObject({ strategy: { name: 'ts strategy' }, options: { fill: 'bid-ask' } });
    }
    expect((await loadStrategyModule(path.join(esm, 'strategy.js'))).strategy.name).toBe('esm strategy');
  });

  it('says what is wrong with a module that is not a strategy', async () => {
    await expect(loadStrategyModule(path.join(cjs, 'not-a-strategy.ts'))).rejects.toThrow(UsageError);
    await expect(loadStrategyModule(path.join(cjs, 'not-a-strategy.ts'))).rejects.toThrow(
      /the default export is not a strategy/,
    );
    await expect(loadStrategyModule(path.join(cjs, 'package.json'))).rejects.toThrow(/\.ts, \.mts/);
    await expect(loadStrategyModule(path.join(cjs, 'nope.ts'))).rejects.toThrow('no strategy file');
  });
});

describe('pitchain backtest, from a user project', () => {
  const backtest = (cwd: string, ...args: string[]) =>
    runCli(['backtest', ...args], { cwd, timeoutMs: 120_000 });

  it('runs a .ts strategy of a CommonJS project', async () => {
    const { code, stdout, stderr } = await backtest(
      cjs,
      'strategy.ts',
      '--store',
      STORE,
      '--from',
      '2020-01-02',
      '--to',
      '2020-01-03',
    );
    expect(stderr).not.toMatch(/ERR_|\n\s+at /);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ts strategy\n/);
  }, 120_000);

  it('exits 2 with an example on a mistyped date or a period outside the store, never a stack', async () => {
    const typo = await backtest(
      cjs,
      'strategy.ts',
      '--store',
      STORE,
      '--from',
      '2020-1-02',
      '--to',
      '2020-01-31',
    );
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      "pitchain: --from takes a date such as 2019-01-02, not '2020-1-02'\n  e.g. pitchain backtest examples/spy-short-put.ts --store data/sample --from 2019-01-02 --to 2019-06-28\n",
    );
    const outside = await backtest(
      cjs,
      'strategy.ts',
      '--store',
      STORE,
      '--from',
      '2021-01-04',
      '--to',
      '2021-01-29',
    );
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(
      /^pitchain: the period 2021-01-04 \.\. 2021-01-29 reaches outside the sessions the store holds, 2019-01-02 \.\. 2020-12-31\n {2}e\.g\. pitchain backtest /,
    );
    const param = await backtest(
      cjs,
      'strategy.ts',
      '--store',
      STORE,
      '--from',
      '2020-01-02',
      '--to',
      '2020-01-03',
      '--param',
      'dte',
    );
    expect(param.code).toBe(2);
    expect(param.stderr).toMatch(/--param takes name=value/);
  }, 120_000);
});
