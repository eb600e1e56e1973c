/**
 * Garbage collection of a store's files: a file that left the manifest is removed once no reader can
 * still need it (the grace past its retirement, and no live reader's lease listing it); the manifest
 * records when each file left (`retired`).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { derivedFileOwner } from './derived-files.js';
import { TABLES_DIR } from './layout.js';
import { leasedFiles } from './lease.js';
import type { Manifest, RetiredEntry } from './manifest.js';

/**
 * A file that left the manifest is kept this long after it left: a reader that has not refreshed still
 * holds the manifest that listed it, however old the file itself is.
 */
export const GARBAGE_GRACE_MS = 10 * 60_000;

/** The grace in effect: `PITCHAIN_GARBAGE_GRACE_MS` shortens it (tests and benchmarks of long runs). */
function garbageGraceMs(): number {
  const set = Number(process.env['PITCHAIN_GARBAGE_GRACE_MS']);
  return Number.isFinite(set) && set >= 0 ? set : GARBAGE_GRACE_MS;
}

/**
 * Removes files left by crashed writers and files that left the manifest more than the grace ago;
 * returns the retired entries still kept. A file on disk that the manifest neither lists nor records as
 * retired (a store written before retirement was recorded, or a file a crashed writer named but never
 * listed) is measured from its modification time instead.
 */
export async function removeGarbage(dir: string, base: Manifest, now: number): Promise<RetiredEntry[]> {
  const live = new Set(Object.values(base.tables).flatMap((files) => files.map((f) => f.path)));
  // A file a live reader's version lists stays, whatever the time since it left the manifest.
  const leased = await leasedFiles(dir);
  const grace = garbageGraceMs();
  const retiredAt = new Map((base.retired ?? []).map((r) => [r.path, Date.parse(r.retiredAt)]));
  const kept: RetiredEntry[] = [];
  const root = path.join(dir, TABLES_DIR);
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const abs = path.join(entry.parentPath, entry.name);
    const rel = path.relative(dir, abs).split(path.sep).join('/');
    // A derived file lives and goes with its Parquet file, and is never listed itself.
    const owner = derivedFileOwner(rel);
    if (owner !== undefined) {
      if (live.has(owner) || leased.has(owner)) continue;
      const ownerSince = retiredAt.get(owner);
      const since = ownerSince !== undefined && Number.isFinite(ownerSince) ? ownerSince : undefined;
      if (now - (since ?? (await fs.stat(abs)).mtimeMs) > grace) await fs.rm(abs, { force: true });
      continue;
    }
    if (live.has(rel)) continue;
    const since = retiredAt.get(rel);
    if (leased.has(rel)) {
      if (since !== undefined) kept.push({ path: rel, retiredAt: new Date(since).toISOString() });
      continue;
    }
    const stale =
      entry.name.startsWith('.tmp-') ||
      now - (since !== undefined && Number.isFinite(since) ? since : (await fs.stat(abs)).mtimeMs) > grace;
    if (stale) await fs.rm(abs, { force: true });
    else if (since !== undefined) kept.push({ path: rel, retiredAt: new Date(since).toISOString() });
  }
  return kept;
}

/**
 * The retired list of the manifest that replaces `base` with `tables`: the entries still kept that did
 * not come back, and every file `base` listed that `tables` does not, retired at `at`.
 */
export function retire(
  base: Manifest,
  tables: Manifest['tables'],
  kept: readonly RetiredEntry[],
  at: string,
): RetiredEntry[] {
  const paths = (t: Manifest['tables']) => Object.values(t).flatMap((files) => files.map((f) => f.path));
  const next = new Set(paths(tables));
  const retired = kept.filter((r) => !next.has(r.path));
  const known = new Set(retired.map((r) => r.path));
  for (const file of paths(base.tables)) {
    if (!next.has(file) && !known.has(file)) retired.push({ path: file, retiredAt: at });
  }
  return retired.sort((a, b) => (a.path < b.path ? -1 : 1));
}
