import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './paths.js';

/**
 * The build stamp and lock of this checkout, under the system's temporary directory: nothing the tests
 * write goes into the checkout (where it would change what its commands print), and two checkouts on
 * one machine do not share a stamp.
 */
const STATE = join(
  tmpdir(),
  `pitchain-build-${createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 12)}`,
);
const STAMP = join(STATE, 'build-stamp');
const LOCK = join(STATE, 'build.lock');

/** The built CLI, as `npx pitchain` runs it (`test/cli-bin.test.ts` checks package.json names it). */
export const CLI_BIN = join(REPO_ROOT, 'dist/cli/bin.js');
const OUTPUTS = [join(REPO_ROOT, 'dist/index.js'), CLI_BIN];
const INPUT_FILES = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src'];

/**
 * Runs `npm run build` unless `dist/` is current, i.e. a successful build started after the last change
 * to `src/` or the build configuration. Test files run in parallel processes, so one builds under a lock
 * directory and the others wait for it and then find the build current.
 */
export async function ensureBuilt(): Promise<void> {
  if (await isCurrent()) return;
  await mkdir(STATE, { recursive: true });
  const deadline = Date.now() + 180_000;
  while (!(await tryLock())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for the build lock ${LOCK}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  try {
    if (await isCurrent()) return;
    // A failed build still emits files, so only a stamp written after success says dist/ is usable.
    const started = new Date();
    await rm(STAMP, { force: true });
    const { code, stdout, stderr } = await runCommand('npm', ['run', 'build']);
    if (code !== 0) throw new Error(`npm run build failed (exit ${code}):\n${stdout}${stderr}`);
    await writeFile(STAMP, '');
    await utimes(STAMP, started, started);
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

async function isCurrent(): Promise<boolean> {
  const stampMs = await mtimeMs(STAMP);
  if (stampMs === undefined) return false;
  for (const output of OUTPUTS) {
    if ((await mtimeMs(output)) === undefined) return false;
  }
  return (await newestInputMs()) <= stampMs;
}

async function newestInputMs(): Promise<number> {
  let newest = 0;
  for (const file of INPUT_FILES) newest = Math.max(newest, (await mtimeMs(join(REPO_ROOT, file))) ?? 0);
  const entries = await readdir(join(REPO_ROOT, 'src'), { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (entry.isFile()) newest = Math.max(newest, (await mtimeMs(join(entry.parentPath, entry.name))) ?? 0);
  }
  // A deleted source file only shows as a newer directory mtime.
  for (const entry of entries) {
    if (entry.isDirectory())
      newest = Math.max(newest, (await mtimeMs(join(entry.parentPath, entry.name))) ?? 0);
  }
  return newest;
}

async function mtimeMs(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).mtimeMs;
  } catch {
    return undefined;
  }
}

async function tryLock(): Promise<boolean> {
  try {
    await mkdir(LOCK);
  } catch {
    const owner = Number(await readFile(join(LOCK, 'pid'), 'utf8').catch(() => ''));
    if (owner > 0 && !isAlive(owner)) await rm(LOCK, { recursive: true, force: true });
    return false;
  }
  await writeFile(join(LOCK, 'pid'), String(process.pid));
  return true;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs the built CLI (`node dist/cli/bin.js …`); build first with `ensureBuilt`. */
export function runCli(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CommandResult> {
  return runCommand(process.execPath, [CLI_BIN, ...args], options);
}

/** What a finished child process left: its exit code (null when killed), output, and whether it timed out. */
export type CommandResult = {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
};

/** Runs a command without a shell (in the repo root unless told otherwise) and collects its output. */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? REPO_ROOT,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    // Detached into its own process group so that a timeout ends the command's children too (npm → node).
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, options.timeoutMs ?? 120_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}
