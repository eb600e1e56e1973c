/**
 * Reader leases: a reader records which version it reads (`leases/<pid>-<id>.json` under the store: pid,
 * host, version, the files that version lists, and when it last said so), and the writer's garbage
 * collection never deletes a file a live lease lists, however long ago it left the manifest. A lease of a
 * process that no longer exists on this host is ignored (and removed); one of another host counts until it
 * has not been refreshed for {@link FOREIGN_LEASE_MS}.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isAlive } from './lock.js';
import type { Manifest } from './manifest.js';

export const LEASES_DIR = 'leases';

/** How often a reader says again that it is reading (its lease's `refreshedAt`). */
export const LEASE_REFRESH_MS = 60_000;

/** A lease of another host, not refreshed for this long, is taken as its reader's end. */
export const FOREIGN_LEASE_MS = 30 * 60_000;

/** What a lease file holds. */
export type Lease = {
  readonly pid: number;
  readonly host: string;
  readonly version: string;
  readonly refreshedAt: string;
  readonly files: readonly string[];
};

/** The lease of one reader; `update` on every version it moves to, `release` when it closes. */
export class ReaderLease {
  private timer: NodeJS.Timeout | undefined;
  private current: Manifest;

  private constructor(
    private readonly file: string,
    manifest: Manifest,
  ) {
    this.current = manifest;
  }

  /**
   * Takes a lease on `manifest` in the store `dir`; undefined when the store cannot be written (a
   * read-only or installed store has no writer, hence no garbage collection to hold off).
   */
  static take(dir: string, manifest: Manifest): ReaderLease | undefined {
    const file = path.join(dir, LEASES_DIR, `${process.pid}-${randomUUID().slice(0, 8)}.json`);
    const lease = new ReaderLease(file, manifest);
    try {
      mkdirSync(path.dirname(file), { recursive: true });
      lease.write();
    } catch {
      return undefined;
    }
    lease.timer = setInterval(() => lease.refresh(), LEASE_REFRESH_MS);
    lease.timer.unref();
    return lease;
  }

  /** Moves the lease to another version (written before the reader reads it). */
  update(manifest: Manifest): void {
    this.current = manifest;
    this.refresh();
  }

  /** Ends the lease. */
  release(): void {
    clearInterval(this.timer);
    rmSync(this.file, { force: true });
  }

  private refresh(): void {
    try {
      this.write();
    } catch {
      // The store became unwritable: so did its writer; the next refresh tries again.
    }
  }

  private write(): void {
    const lease: Lease = {
      pid: process.pid,
      host: os.hostname(),
      version: this.current.dataVersion,
      refreshedAt: new Date().toISOString(),
      files: Object.values(this.current.tables).flatMap((files) => files.map((f) => f.path)),
    };
    // Whole or not at all: written aside, then renamed over the lease.
    const temp = `${this.file}.tmp`;
    writeFileSync(temp, JSON.stringify(lease), { flag: 'w' });
    renameSync(temp, this.file);
  }
}

/** The files listed by the live leases of the store `dir`; leases of ended readers are removed. */
export async function leasedFiles(dir: string, now = Date.now()): Promise<Set<string>> {
  const root = path.join(dir, LEASES_DIR);
  const names = await fs.readdir(root).catch(() => [] as string[]);
  const files = new Set<string>();
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    let lease: Lease;
    try {
      lease = JSON.parse(await fs.readFile(path.join(root, name), 'utf8')) as Lease;
    } catch {
      continue; // being replaced this instant: its reader is alive
    }
    if (!isLive(lease, now)) {
      await fs.rm(path.join(root, name), { force: true });
      continue;
    }
    for (const file of lease.files ?? []) files.add(file);
  }
  return files;
}

function isLive(lease: Lease, now: number): boolean {
  if (lease.host !== os.hostname()) return now - Date.parse(lease.refreshedAt) < FOREIGN_LEASE_MS;
  return lease.pid === process.pid || isAlive(lease.pid);
}
