/**
 * The single-writer lock: a file created with O_EXCL holding the writer's pid. A lock left by a process
 * that no longer exists (killed with -9) is taken over, so a crash never leaves a store unwritable.
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
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await fs.open(file, 'wx');
      try {
        await handle.writeFile(JSON.stringify({ pid: process.pid, host: os.hostname() }));
        await handle.close();
      } catch (cause) {
        // A lock without its holder (disk full) would refuse the next writer as held by an unknown process.
        await handle.close().catch(() => {});
        await fs.rm(file, { force: true });
        throw new StoreError(`cannot write the writer lock of ${dir}: ${(cause as Error).message}`, {
          cause,
        });
      }
      return {
        release: async () => {
          await fs.rm(file, { force: true });
        },
      };
    } catch (error) {
      if (error instanceof StoreError) throw error;
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new StoreError(`cannot create the writer lock of ${dir}`, { cause: error });
      }
      const holder = await readHolder(file);
      const stale =
        holder === undefined
          ? await olderThan(file, 5_000) // a writer killed between creating and filling the file
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
