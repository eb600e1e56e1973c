/**
 * Following a store's commits: between requests, a cheap check whether the manifest changed (its file's
 * identity, size and time); when it did, new requests wait while the ones in flight finish on the version
 * they started with, then the reader moves to the new version (and its lease with it) and they go on.
 * A file of the pinned version found missing or damaged is looked for again the same way: one put back
 * is read again.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { ReaderLease } from '../store/lease.js';
import { MANIFEST_FILE } from '../store/manifest.js';
import type { StoreReader } from '../store/store.js';

export class Follower {
  private inFlight = 0;
  /** The move under way: requests that arrive meanwhile wait for it. */
  private moving: Promise<void> | undefined;
  private drained: (() => void) | undefined;
  /** The manifest file's identity when last checked (undefined: not yet). */
  private stamp: string | undefined;
  /** The check under way: requests that arrive while it runs share it rather than each stat the file. */
  private checking: Promise<void> | undefined;

  constructor(
    private readonly reader: StoreReader,
    private readonly lease: ReaderLease | undefined,
    private readonly follow: boolean,
  ) {}

  /** Runs one request on one version: after any move due, never beside one. */
  async during<T>(work: () => Promise<T>): Promise<T> {
    if (this.follow) await this.check();
    while (this.moving !== undefined) await this.moving;
    this.inFlight++;
    try {
      return await work();
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) this.drained?.();
    }
  }

  /** Moves to the newest committed version now (once the requests in flight finish); whether it changed. */
  async refresh(): Promise<boolean> {
    let changed = false;
    await this.move(async () => {
      changed = await this.reader.refresh();
    });
    return changed;
  }

  close(): void {
    this.lease?.release();
  }

  /**
   * Starts a move when the manifest changed or a missing file of this version is back. Concurrent
   * requests share one check: under load, one stat serves them all instead of one each.
   */
  private check(): Promise<void> {
    if (this.checking === undefined) {
      this.checking = this.checkOnce().finally(() => {
        this.checking = undefined;
      });
    }
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    if (this.moving !== undefined) return;
    const stamp = await fileStamp(path.join(this.reader.dir, MANIFEST_FILE));
    // The first check counts as a change: a commit may have landed between opening and now.
    const changed = stamp !== this.stamp;
    this.stamp = stamp;
    if (!changed && !(await this.damagedBack())) return;
    if (this.moving !== undefined) return;
    void this.refresh();
  }

  /** Whether a file the reader found missing is there again. */
  private async damagedBack(): Promise<boolean> {
    for (const damaged of this.reader.damaged) {
      const there = await fs.stat(path.join(this.reader.dir, damaged.path)).then(
        () => true,
        () => false,
      );
      if (there) return true;
    }
    return false;
  }

  private move(step: () => Promise<void>): Promise<void> {
    const previous = this.moving ?? Promise.resolve();
    const moving = previous.then(async () => {
      if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = undefined;
      try {
        await step();
        this.lease?.update(this.reader.manifest);
      } catch {
        // The next check tries again; the requests go on with the version they have.
      }
    });
    const done = moving.finally(() => {
      if (this.moving === done) this.moving = undefined;
    });
    this.moving = done;
    return done;
  }
}

/** What identifies a version of a file without reading it. */
async function fileStamp(file: string): Promise<string> {
  const stat = await fs.stat(file).catch(() => undefined);
  return stat === undefined ? '' : `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
}
