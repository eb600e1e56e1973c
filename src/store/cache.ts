/**
 * The one cache of an opened store: derived answers (a scope's rows at an as-of, read-ahead blocks of a
 * session loop) and the service's response cache, all keyed by the data version they were computed
 * from. When the store moves to a newer version every entry is dropped, so `refresh()` can never serve a
 * stale answer.
 */

/** How many derived values the cache keeps (least recently used first out). */
const DERIVED_CAPACITY = 4;
/** How many scopes' loop states (with their read-ahead blocks) the cache keeps. */
const STATE_CAPACITY = 4;
/** How many responses the response cache keeps. */
const RESPONSE_CAPACITY = 2_000;

/** A least-recently-used map of bounded size. */
class Lru<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly capacity: number) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The cache of one opened store, valid for one data version at a time. */
export class StoreCache {
  private version: string;
  private readonly derived = new Lru<Promise<unknown>>(DERIVED_CAPACITY);
  private readonly responses = new Lru<unknown>(RESPONSE_CAPACITY);
  private readonly states = new Lru<unknown>(STATE_CAPACITY);

  /** `dataVersion` is asked on every access, so the cache follows the store as it refreshes. */
  constructor(private readonly dataVersion: () => string) {
    this.version = dataVersion();
  }

  /** The data version the entries belong to. */
  get currentVersion(): string {
    this.sync();
    return this.version;
  }

  /**
   * A value derived from the store's data, computed once per key and version and kept (a few at a time,
   * least recently used first out). A failed computation is not kept.
   */
  memoize<T>(key: string, compute: () => Promise<T>): Promise<T> {
    this.sync();
    const found = this.derived.get(key);
    if (found !== undefined) return found as Promise<T>;
    const pending = compute();
    this.derived.set(key, pending);
    pending.catch(() => {
      if (this.derived.get(key) === pending) this.derived.delete(key);
    });
    return pending;
  }

  /**
   * A mutable state kept per key for the current data version (a session loop's read-ahead block),
   * made by `init` on first use or after the version changed.
   */
  state<T>(key: string, init: () => T): T {
    this.sync();
    let value = this.states.get(key) as T | undefined;
    if (value === undefined) {
      value = init();
      this.states.set(key, value);
    }
    return value;
  }

  /** A kept response of the service (see `service/response-cache.ts` for what is kept). */
  response<T>(key: string): T | undefined {
    this.sync();
    return this.responses.get(key) as T | undefined;
  }

  /** Keeps a response of the service for the current data version. */
  keepResponse(key: string, value: unknown): void {
    this.sync();
    this.responses.set(key, value);
  }

  private sync(): void {
    const version = this.dataVersion();
    if (version === this.version) return;
    this.version = version;
    this.derived.clear();
    this.responses.clear();
    this.states.clear();
  }
}
