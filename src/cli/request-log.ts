/**
 * Where `pitchain serve` keeps the request log and how `pitchain log` finds it: a JSON-lines file, by
 * default `<store>/logs/requests.jsonl`. The embedded sample and stores that cannot be written keep it in
 * memory only (a warning says so), since a server must be able to serve a read-only store.
 */
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { SAMPLE_STORE } from './sample.js';

/** The request log's place inside a store directory. */
export function defaultLogFile(store: string): string {
  return path.join(store, 'logs', 'requests.jsonl');
}

/** The file the server appends to (none: memory only) and, when it had to fall back, why. */
export type LogChoice = { readonly file?: string; readonly warning?: string };

/**
 * Chooses the request log of a server: `--log <file>` (which must be writable), `--no-log` (memory
 * only), or the default inside the store when the store can be written and is not the embedded sample.
 */
export async function chooseLogFile(store: string, flag: string | boolean | undefined): Promise<LogChoice> {
  if (flag === false) return {};
  if (typeof flag === 'string') {
    const problem = await unwritable(flag);
    if (problem !== undefined) throw new UsageError(`--log ${flag} cannot be written: ${problem}`);
    return { file: flag };
  }
  if (await sameDirectory(store, SAMPLE_STORE)) {
    return {
      warning:
        'the embedded sample store is never written: the request log is kept in memory only (give --log <file> to keep it).',
    };
  }
  // Not a store (opening it will say so): nothing is made inside it.
  if (!(await exists(path.join(store, 'manifest.json')))) return {};
  const file = defaultLogFile(store);
  const problem = await unwritable(file);
  if (problem === undefined) return { file };
  return {
    warning: `cannot write ${file} (${problem}): the request log is kept in memory only (give --log <file> to keep it).`,
  };
}

/** Why a log file cannot be appended to (its directory is made if missing), or undefined if it can. */
async function unwritable(file: string): Promise<string | undefined> {
  try {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const handle = await fs.open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
    await handle.close();
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

async function sameDirectory(a: string, b: string): Promise<boolean> {
  const [ra, rb] = await Promise.all([fs.realpath(a).catch(() => a), fs.realpath(b).catch(() => b)]);
  return ra === rb;
}
