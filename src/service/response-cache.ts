/**
 * The response cache (semantics §5): live and delayed answers keyed by endpoint, path and parameters,
 * with the snapshot instant they hold. `mode=cached` reads it; a repeated live request at the same
 * cutoff is served from it (203).
 */
import type { Answer } from '../query/types.js';

export type CacheEntry = {
  readonly answer: Answer;
  readonly snapshotSeconds: number;
  readonly cutoffSeconds: number;
};

const MAX_ENTRIES = 2_000;

export class ResponseCache {
  private readonly entries = new Map<string, CacheEntry>();

  /** The cache key of a request: service, path parameters and endpoint parameters, order-independent. */
  static key(
    service: string,
    path: Readonly<Record<string, string>>,
    query: Readonly<Record<string, string>>,
  ): string {
    const sorted = (o: Readonly<Record<string, string>>) =>
      Object.keys(o)
        .sort()
        .map((k) => [k, o[k]]);
    return JSON.stringify([service, sorted(path), sorted(query)]);
  }

  get(key: string): CacheEntry | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: CacheEntry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }
}
