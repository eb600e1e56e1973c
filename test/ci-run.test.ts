/**
 * `.ci/run`'s closing count: its node script run on made-up reports, as CI runs it after the steps.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from './helpers/build.js';
import { REPO_ROOT } from './helpers/paths.js';

let dir: string;
let script: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitchain-ci-run-'));
  const text = await readFile(join(REPO_ROOT, '.ci/run'), 'utf8');
  const body = /node - "\$reports" <<'EOF' \|\| status=1\n([\s\S]*?)\nEOF\n/.exec(text)?.[1];
  if (body === undefined)
    throw new Error('.ci/run has no closing count script (node - "$reports" <<\'EOF\')');
  script = join(dir, 'count.cjs');
  await writeFile(script, body);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The count printed for notebooks `names` and the notebook log `log`, after two suite runs of 3 passed tests each. */
async function count(names: readonly string[], log: string): Promise<{ code: number | null; line: string }> {
  const root = await mkdtemp(join(dir, 'case-'));
  await mkdir(join(root, 'notebooks'));
  for (const name of names) await writeFile(join(root, 'notebooks', name), '{}');
  const reports = join(root, 'reports');
  await mkdir(reports);
  const suite = {
    numPassedTests: 3,
    numFailedTests: 0,
    numPendingTests: 0,
    numTodoTests: 0,
    testResults: [],
  };
  await writeFile(join(reports, 'suite.json'), JSON.stringify(suite));
  await writeFile(join(reports, 'suite-kolkata.json'), JSON.stringify(suite));
  await writeFile(join(reports, 'notebooks.txt'), log);
  const result = await runCommand(process.execPath, [script, reports], { cwd: root });
  return { code: result.code, line: result.stdout.trim() };
}

describe('.ci/run closing count', () => {
  it('counts a notebook whose log line says current as passed', async () => {
    const log = 'a.ipynb  1.2 s  current\nb.ipynb  0.8 s  current\n';
    expect(await count(['a.ipynb', 'b.ipynb'], log)).toEqual({
      code: 0,
      line: 'tests: 8 passed, 0 failed, 0 skipped',
    });
  });

  it("counts a stale or missing notebook as failed, and never takes another name's line for it", async () => {
    const log = 'v1-2-ipynb  1.0 s  current\nv1.2Xipynb  1.0 s  current\nstale.ipynb  2.0 s  STALE\n';
    expect(await count(['v1.2.ipynb', 'stale.ipynb'], log)).toEqual({
      code: 1,
      line: 'tests: 6 passed, 2 failed, 0 skipped',
    });
  });
});
