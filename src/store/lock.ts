/**
 * The single-writer lock: a file holding the writer's pid, created whole (a hard link fails if the lock
 * exists). A lock left by a process that no longer exists (killed with -9) is taken over, so a crash
 * never leaves a store unwritable.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StoreError } from '../errors.js';

export const LOCK_FILE = 'write.lock';

/** A held writer lock; `release()` removes it. */
export type WriterLock = { release(): Promise<void> };

/** Takes the store's writer lock or throws a StoreError naming the process that holds it. */
export async function acquireWriterLock(dir: string): Promise<WriterLock> {
  const file = path.join(dir, LOCK_FILE);
  await removeStaleTemps(dir);
  // The lock never exists empty, even for an instant: it is written under a name of this process, then
  // linked to the lock's name, which fails if the lock exists. An empty lock (a writer killed between
  // creating and filling it, or a full disk) would refuse every writer as held by an unknown process.
  const temp = `${file}.${process.pid}.tmp`;
  try {
    await fs.writeFile(temp, JSON.stringify({ pid: process.pid, host: os.hostname() }));
  } catch (cause) {
    await fs.rm(temp, { force: true }).catch(() => {});
    throw new StoreError(`cannot write the writer lock of ${dir}: ${(cause as Error).message}`, { cause });
  }
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await fs.link(temp, file);
        return {
          release: async () => {
            await fs.rm(file, { force: true });
          },
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new StoreError(`cannot create the writer lock of ${dir}`, { cause: error });
        }
        const holder = await readHolder(file);
        const stale =
          holder === undefined
            ? await olderThan(file, 5_000) // an empty lock of an earlier version's writer
            : holder.host === os.hostname() && !isAlive(holder.pid);
        if (stale) {
          await fs.rm(file, { force: true });
          continue;
        }
        throw new StoreError(
          `another process (pid ${holder?.pid ?? 'unknown'}) is writing to ${dir}; one writer at a time`,
        );
      }
    }
    throw new StoreError(`cannot take the writer lock of ${dir}`);
  } finally {
    await fs.rm(temp, { force: true }).catch(() => {});
  }
}

/** Removes the lock files that writers killed before linking them left under their own names. */
async function removeStaleTemps(dir: string): Promise<void> {
  for (const name of await fs.readdir(dir).catch(() => [])) {
    const pid = /^write\.lock\.(\d+)\.tmp$/.exec(name)?.[1];
    const file = path.join(dir, name);
    // Old as well as ownerless: the pid may be of another host sharing the store, about to link it.
    if (
      pid !== undefined &&
      Number(pid) !== process.pid &&
      !isAlive(Number(pid)) &&
      (await olderThan(file, 5_000))
    ) {
      await fs.rm(file, { force: true }).catch(() => {});
    }
  }
}

async function readHolder(file: string): Promise<{ pid: number; host: string } | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as { pid: number; host: string };
  } catch {
    return undefined;
  }
}

async function olderThan(file: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await fs.stat(file)).mtimeMs > ms;
  } catch {
    return true;
  }
}

/** Whether process `pid` exists on this host (EPERM: alive, another user's). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
