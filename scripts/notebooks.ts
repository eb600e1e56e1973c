/**
 * Executes the notebooks in `notebooks/` headless with the Deno Jupyter kernel, through nbconvert from
 * Debian's Jupyter packages. `npm run notebooks` writes the fresh outputs over the committed ones;
 * `npm run notebooks:check` fails when a cell errors or when a committed notebook's outputs differ from a
 * fresh execution (execution counts, cell ids and metadata aside). Name notebooks to run only those:
 * `npm run notebooks -- 01-quickstart`. Every `notebooks/*.ipynb` is run; a new one needs no listing.
 */
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ensureBuilt, runCommand } from '../test/helpers/build.js';
import { REPO_ROOT } from '../test/helpers/paths.js';

const NOTEBOOKS = join(REPO_ROOT, 'notebooks');
const PYTHON = process.env['PYTHON'] ?? '/usr/bin/python3';
const DENO = join(REPO_ROOT, 'node_modules', '.bin', 'deno');
const CONFIG = join(REPO_ROOT, 'scripts', 'nbconvert-config.py');
// Colour codes in a value's text would make the outputs depend on the terminal the kernel inherits.
const ENV = { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };

type Output = Record<string, unknown>;
type Cell = { cell_type: string; source: string | string[]; outputs?: Output[] };
type Notebook = { cells: Cell[] };

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const names = args.filter((arg) => !arg.startsWith('--')).map((arg) => basename(arg, '.ipynb'));
  const all = (await readdir(NOTEBOOKS)).filter((file) => file.endsWith('.ipynb')).sort();
  const unknown = names.filter((name) => !all.includes(`${name}.ipynb`));
  if (unknown.length > 0) throw new Error(`no notebook ${unknown.join(', ')} in notebooks/`);
  const files = names.length === 0 ? all : all.filter((file) => names.includes(basename(file, '.ipynb')));

  await checkKernel();
  await ensureBuilt();
  const out = await mkdtemp(join(tmpdir(), 'pitchain-notebooks-'));
  const failed: string[] = [];
  const stale: string[] = [];
  const started = performance.now();
  try {
    for (const file of files) {
      const begun = performance.now();
      const problem = await execute(file, out);
      const seconds = ((performance.now() - begun) / 1000).toFixed(1);
      if (problem !== undefined) {
        failed.push(file);
        console.log(`${file}  ${seconds} s  FAILED\n${problem}`);
        continue;
      }
      const fresh = await readFile(join(out, file), 'utf8');
      const leak = machinePath(fresh);
      if (leak !== undefined) {
        failed.push(file);
        console.log(`${file}  ${seconds} s  FAILED: an output shows a path of this machine (${leak})`);
        continue;
      }
      const committed = await readFile(join(NOTEBOOKS, file), 'utf8');
      const difference = compare(JSON.parse(committed) as Notebook, JSON.parse(fresh) as Notebook);
      if (check) {
        if (difference !== undefined) stale.push(file);
        console.log(
          `${file}  ${seconds} s  ${difference === undefined ? 'current' : `STALE\n${difference}`}`,
        );
      } else {
        if (fresh !== committed) await copyFile(join(out, file), join(NOTEBOOKS, file));
        console.log(`${file}  ${seconds} s  ${difference === undefined ? 'unchanged' : 'outputs written'}`);
      }
    }
  } finally {
    await rm(out, { recursive: true, force: true });
  }
  // Worded so that no CI log reader takes it for a test runner's closing line ("5 notebooks in 15 s" reads
  // like pytest's "5 passed in 15 s" with no test passed): `.ci/run`'s own count is the closing line.
  console.log(
    `notebooks checked: ${files.length}, taking ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  if (stale.length > 0)
    console.log('Run `npm run notebooks` to execute them again, and commit their outputs.');
  if (failed.length > 0 || stale.length > 0) process.exitCode = 1;
}

/** Fails early, saying what to install, unless nbconvert and the Deno kernel of this checkout are there. */
async function checkKernel(): Promise<void> {
  const listed = await runCommand(PYTHON, ['-m', 'jupyter_client.kernelspecapp', 'list', '--json'], {
    env: ENV,
  }).catch((error: Error) => ({ code: 1, stdout: '', stderr: error.message }));
  const nbconvert = await runCommand(PYTHON, ['-c', 'import nbconvert, nbclient'], { env: ENV }).catch(
    () => ({ code: 1 }),
  );
  if (listed.code !== 0 || nbconvert.code !== 0) {
    throw new Error(
      `${PYTHON} cannot run nbconvert: install python3-nbconvert, python3-nbclient and jupyter-client ` +
        '(Debian, Ubuntu) or pip install nbconvert, then set PYTHON to that python if it is another one.',
    );
  }
  const specs = (JSON.parse(listed.stdout) as { kernelspecs: Record<string, { spec: { argv: string[] } }> })
    .kernelspecs;
  const kernel = specs['deno']?.spec.argv[0];
  if (kernel === undefined) throw new Error('No Deno Jupyter kernel: run `npx deno jupyter --install`.');
  // Outputs may change between Deno versions (how values print), so the kernel must be this checkout's.
  const [ours, theirs] = await Promise.all([DENO, kernel].map((deno) => denoVersion(deno)));
  if (theirs !== ours) {
    throw new Error(
      `The Deno kernel runs ${kernel} (${theirs ?? 'not found'}), not this checkout's ${ours}: ` +
        'run `npx deno jupyter --install` here.',
    );
  }
}

async function denoVersion(deno: string): Promise<string | undefined> {
  const result = await runCommand(deno, ['--version'], { env: ENV }).catch(() => undefined);
  return result?.code === 0 ? result.stdout.split('\n')[0] : undefined;
}

/** Executes one notebook into `out`; returns nbconvert's report when a cell fails. */
async function execute(file: string, out: string): Promise<string | undefined> {
  const result = await runCommand(
    PYTHON,
    ['-m', 'nbconvert', '--config', CONFIG, '--to', 'notebook', '--execute', '--output-dir', out, file],
    { cwd: NOTEBOOKS, env: ENV, timeoutMs: 900_000 },
  );
  if (result.code === 0) return undefined;
  const report = result.stderr.split('\n');
  const error = report.findIndex((line) => line.includes('CellExecutionError'));
  return (error < 0 ? report.slice(-30) : report.slice(error)).join('\n').trimEnd();
}

/** A path of this machine that an output should never show (they differ from machine to machine). */
function machinePath(text: string): string | undefined {
  return [REPO_ROOT, `${tmpdir()}/`, `${homedir()}/`].find((path) => text.includes(path));
}

type NormalCell = { type: string; source: string; outputs: Output[] };

/** The cells as they must match: type, source and outputs, without counts, ids or metadata. */
function normalise(notebook: Notebook): NormalCell[] {
  return notebook.cells.map((cell) => ({
    type: cell.cell_type,
    source: joined(cell.source),
    outputs: (cell.outputs ?? []).reduce<Output[]>((outputs, output) => {
      const shown = normaliseOutput(output);
      const last = outputs.at(-1);
      // A stream split over several messages is the same output.
      if (shown['type'] === 'stream' && last?.['type'] === 'stream' && last['name'] === shown['name']) {
        last['text'] = `${last['text']}${shown['text']}`;
      } else outputs.push(shown);
      return outputs;
    }, []),
  }));
}

function normaliseOutput(output: Output): Output {
  switch (output['output_type']) {
    case 'stream':
      return { type: 'stream', name: output['name'], text: joined(output['text']) };
    case 'error':
      return { type: 'error', ename: output['ename'], evalue: output['evalue'] };
    default: {
      const data = Object.entries((output['data'] ?? {}) as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([mime, value]) => [
          mime,
          typeof value === 'object' && !Array.isArray(value) ? value : joined(value),
        ]);
      return { type: 'data', data: Object.fromEntries(data) };
    }
  }
}

function joined(text: unknown): string {
  return Array.isArray(text) ? text.join('') : String(text ?? '');
}

/** Where the committed notebook and a fresh execution part, or undefined when they agree. */
function compare(committed: Notebook, fresh: Notebook): string | undefined {
  const before = normalise(committed);
  const after = normalise(fresh);
  for (let index = 0; index < Math.max(before.length, after.length); index++) {
    if (JSON.stringify(before[index]) === JSON.stringify(after[index])) continue;
    const source = joined(fresh.cells[index]?.source ?? committed.cells[index]?.source).split('\n')[0];
    return `  cell ${index + 1} (${source}):\n${firstDifference(lines(before[index]), lines(after[index]))}`;
  }
  return undefined;
}

/** A normalised cell as lines of text, each output under a heading, so that a difference shows as a line. */
function lines(cell: NormalCell | undefined): string[] {
  if (cell === undefined) return ['(no cell)'];
  const text = [`${cell.type}:`, ...cell.source.split('\n')];
  for (const output of cell.outputs) {
    if (output['type'] === 'data') {
      for (const [mime, value] of Object.entries(output['data'] as Record<string, unknown>)) {
        text.push(`[${mime}]`, ...(typeof value === 'string' ? value : JSON.stringify(value)).split('\n'));
      }
    } else text.push(`[${output['type']}]`, ...String(output['text'] ?? output['evalue']).split('\n'));
  }
  return text;
}

/** The first differing line of two texts, with a line of context on each side. */
function firstDifference(old: string[], now: string[]): string {
  let line = 0;
  while (line < old.length && line < now.length && old[line] === now[line]) line++;
  const clip = (text: string) => (text.length > 160 ? `${text.slice(0, 160)}…` : text);
  const show = (lines: string[], mark: string) =>
    lines.slice(Math.max(0, line - 1), line + 2).map((text) => `    ${mark} ${clip(text)}`);
  return [...show(old, 'committed'), ...show(now, 'fresh    ')].join('\n');
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exitCode = 1;
});
