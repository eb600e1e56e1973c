/**
 * The response cache (semantics §5): live and delayed answers keyed by endpoint, path and parameters,
 * with the snapshot instant they hold. `mode=cached` reads it; a repeated live request at the same
 * cutoff is served from it (203). The entries live in the store's cache, so they belong to one data
 * version and vanish when the store refreshes.
 */

import type { Answer } from '../query/types.js';
import type { StoreCache } from '../store/cache.js';

export type CacheEntry = {
  readonly answer: Answer;
  readonly snapshotSeconds: number;
  readonly cutoffSeconds: number;
};

/** A view of the store's cache holding the service's responses. */
export class ResponseCache {
  constructor(private readonly cache: StoreCache) {}

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
    return this.cache.response<CacheEntry>(key);
  }

  set(key: string, entry: CacheEntry): void {
    this.cache.keepResponse(key, entry);
  }
}
