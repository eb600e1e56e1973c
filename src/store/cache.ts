/**
 * The one cache of an opened store: derived answers (a scope's rows at an as-of, read-ahead blocks of a
 * session loop), sessions' rows and values computed from them (snapshots' computed Greeks), all keyed by
 * the data version they were computed from (the service's response cache is its own,
 * `service/response-cache.ts`). When the store moves to a newer version every entry is dropped, so
 * `refresh()` can never serve a stale answer.
 */

/** How many derived values the cache keeps (least recently used first out). */
const DERIVED_CAPACITY = 4;
/** How many scopes' loop states (with their read-ahead blocks) the cache keeps. */
const STATE_CAPACITY = 4;
/**
 * How many bytes of values computed from the data the cache keeps (the IV and Greeks of the snapshots a
 * run has priced, which a sweep's next run or a notebook's rerun prices again): a 2-year backtest of a
 * SPY strategy prices a few megabytes of them.
 */
const COMPUTED_BYTES = 16 * 2 ** 20;
/**
 * How many bytes the session cache keeps by default (sessions' rows and the contracts they refer to): a
 * reader's DuckDB is limited to 256 MB, and a process of both stays within about 512 MB. Requests that go
 * round a store's underlyings need their contract tables held together: a dense listing's is 10-25 MB
 * (the 213 M-row bench store's 13 underlyings, 1.56 M contracts, take 157 MB), and at 128 MB requests
 * going round them read each table again whenever its turn came (p50 25-33 ms of CPU against 5-6).
 */
export const DEFAULT_SESSION_CACHE_BYTES = 192 * 2 ** 20;

/**
 * A least-recently-used map of a few entries; `onEvict` hears of each key it lets go for room.
 *
 * Its entries are two arrays in recency order, not a `Map`. A `Map` whose entries are deleted and added
 * again (an LRU's every move) is now and then copied to a new table, and V8 leaves the old table pointing
 * at the values it held; once that table is in the old generation, those values outlive every young
 * collection until the next full one. A scope answer kept here for four requests and let go kept its rows
 * and records alive that way: a serve-like loop of dated chains spent a third of its main thread
 * collecting. Here a value let go is overwritten in place.
 */
class Lru<V> {
  /**
   * Keys and values, least recently used first, in arrays made once at their full length: they are
   * never copied to larger ones (which would leave the old copy pointing at the values it held).
   */
  private readonly keys: (string | undefined)[];
  private readonly values: (V | undefined)[];
  private size = 0;

  constructor(
    private readonly capacity: number,
    private readonly onEvict?: (key: string) => void,
  ) {
    this.keys = new Array<string | undefined>(capacity + 1).fill(undefined);
    this.values = new Array<V | undefined>(capacity + 1).fill(undefined);
  }

  get(key: string): V | undefined {
    const at = this.indexOf(key);
    if (at === -1) return undefined;
    const value = this.values[at] as V;
    this.moveLast(at);
    return value;
  }

  set(key: string, value: V): void {
    const at = this.indexOf(key);
    if (at !== -1) {
      this.values[at] = value;
      this.moveLast(at);
      return;
    }
    this.keys[this.size] = key;
    this.values[this.size] = value;
    this.size++;
    if (this.size > this.capacity) {
      const oldest = this.keys[0]!;
      this.remove(0);
      this.onEvict?.(oldest);
    }
  }

  has(key: string): boolean {
    return this.indexOf(key) !== -1;
  }

  /** The value of `key`, without making it the most recently used. */
  peek(key: string): V | undefined {
    const at = this.indexOf(key);
    return at === -1 ? undefined : (this.values[at] as V);
  }

  delete(key: string): void {
    const at = this.indexOf(key);
    if (at !== -1) this.remove(at);
  }

  clear(): void {
    this.keys.fill(undefined);
    this.values.fill(undefined);
    this.size = 0;
  }

  private indexOf(key: string): number {
    for (let i = 0; i < this.size; i++) if (this.keys[i] === key) return i;
    return -1;
  }

  /** Makes entry `at` the most recently used. */
  private moveLast(at: number): void {
    const last = this.size - 1;
    if (at === last) return;
    const key = this.keys[at];
    const value = this.values[at];
    this.keys.copyWithin(at, at + 1, this.size);
    this.values.copyWithin(at, at + 1, this.size);
    this.keys[last] = key;
    this.values[last] = value;
  }

  /** Drops entry `at`; the slot it leaves is cleared, so that nothing here points at its value. */
  private remove(at: number): void {
    this.keys.copyWithin(at, at + 1, this.size);
    this.values.copyWithin(at, at + 1, this.size);
    this.size--;
    this.keys[this.size] = undefined;
    this.values[this.size] = undefined;
  }
}

/**
 * A least-recently-used map bounded in bytes: each value's size is known once it is computed (a promise
 * is kept at 0 bytes until then); the oldest values go until the rest fit (a value larger than the whole
 * budget is handed out but not kept). Bytes held elsewhere against the same budget (`reserve`) leave
 * less room for the values kept here. Keyed by text, or by any value (a file's reader, kept by identity).
 */
export class SizedLru<K = string> {
  private readonly entries = new Map<K, { value: unknown; bytes: number }>();
  private total = 0;
  private reserved = 0;

  constructor(readonly capacity: number) {}

  get bytes(): number {
    return this.total;
  }

  get(key: K): unknown {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps a pending value (counted as 0 bytes until it is known). */
  set(key: K, value: unknown): void {
    this.delete(key);
    this.entries.set(key, { value, bytes: 0 });
  }

  /** Records the size of a kept value, then lets the oldest go until the total fits. */
  sized(key: K, value: unknown, bytes: number): void {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.value !== value) return;
    this.total += bytes - entry.bytes;
    entry.bytes = bytes;
    this.fit(key);
  }

  /** Counts `bytes` held outside the map against its budget, letting the oldest values go to make room. */
  reserve(bytes: number): void {
    this.reserved = bytes;
    this.fit(undefined);
  }

  /** Lets the oldest values go until the kept and reserved bytes fit (`sizing`: the value just sized). */
  private fit(sizing: K | undefined): void {
    for (const [oldest, { bytes: size }] of this.entries) {
      if (this.total + this.reserved <= this.capacity) break;
      // Pending values cost nothing yet and are being waited for: they stay.
      if (size === 0 && oldest !== sizing) continue;
      this.entries.delete(oldest);
      this.total -= size;
    }
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.total -= entry.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
    this.reserved = 0;
  }
}

/** Options of a store's cache. */
export type StoreCacheOptions = {
  /** The bytes the session cache may hold (default {@link DEFAULT_SESSION_CACHE_BYTES}). */
  readonly sessionCacheBytes?: number;
  /**
   * The rows a session of a chain holds from which a session loop that asks one date at a time reads
   * blocks of its dates (default: the option core's `WINDOW_SESSION_ROWS`; tests of small stores set 0).
   */
  readonly loopWindowRows?: number;
  /**
   * The rows a session of a chain holds past which a current request of one date outside an announced
   * loop is answered from that date's block of its session, never a loop's (default: the option core's
   * `ONE_DATE_SESSION_ROWS`; tests of small stores set 0).
   */
  readonly oneDateSessionRows?: number;
  /**
   * The rows a current request's block of two sessions may scan through DuckDB for the latest snapshots of
   * its contracts not quoted in them (default: the option core's `SESSION_PAIR_CARRY_ROWS`; tests of small
   * stores set 0). A look back that reads session column files has no such bound.
   */
  readonly sessionPairCarryRows?: number;
  /**
   * The rows from which a current chain is made from its block's columns, not records (default: the chain
   * endpoint's `CURRENT_COLUMNS_ROWS`; tests of small stores set 0).
   */
  readonly currentColumnsRows?: number;
};

/** The cache of one opened store, valid for one data version at a time. */
export class StoreCache {
  private version: string;
  private readonly derived = new Lru<Promise<unknown>>(DERIVED_CAPACITY);
  private readonly states = new Lru<unknown>(STATE_CAPACITY, (key) => this.hold(key, 0));
  private readonly sessions: SizedLru;
  /** Bytes the states hold against the session cache's budget, by state key (see `hold`). */
  private readonly held = new Map<string, number>();
  private readonly computedValues = new SizedLru(COMPUTED_BYTES);
  /** See {@link StoreCacheOptions.loopWindowRows}. */
  readonly loopWindowRows: number | undefined;
  /** See {@link StoreCacheOptions.oneDateSessionRows}. */
  readonly oneDateSessionRows: number | undefined;
  /** See {@link StoreCacheOptions.sessionPairCarryRows}. */
  readonly sessionPairCarryRows: number | undefined;
  /** See {@link StoreCacheOptions.currentColumnsRows}. */
  readonly currentColumnsRows: number | undefined;

  /** `dataVersion` is asked on every access, so the cache follows the store as it refreshes. */
  constructor(
    private readonly dataVersion: () => string,
    options: StoreCacheOptions = {},
  ) {
    this.version = dataVersion();
    this.sessions = new SizedLru(options.sessionCacheBytes ?? DEFAULT_SESSION_CACHE_BYTES);
    this.loopWindowRows = options.loopWindowRows;
    this.oneDateSessionRows = options.oneDateSessionRows;
    this.sessionPairCarryRows = options.sessionPairCarryRows;
    this.currentColumnsRows = options.currentColumnsRows;
  }

  /** The bytes the session cache holds now (values kept, not what states hold: see `hold`). */
  get sessionCacheBytes(): number {
    return this.sessions.bytes;
  }

  /** The bytes the states hold now against the session cache's budget (see `hold`). */
  get heldBytes(): number {
    let bytes = 0;
    for (const size of this.held.values()) bytes += size;
    return bytes;
  }

  /**
   * Counts `bytes` that the state under `key` holds (a session loop's current block) against the session
   * cache's budget, in place of what it held before (0: nothing): the cache keeps less while loops hold
   * blocks, so that a loop and random requests together stay within one budget. A state that the cache
   * lets go, or of an older data version, holds nothing.
   */
  hold(key: string, bytes: number): void {
    this.sync();
    if (bytes > 0 && this.states.has(key)) this.held.set(key, bytes);
    else this.held.delete(key);
    this.sessions.reserve(this.heldBytes);
  }

  /** The bytes the session cache may hold. */
  get sessionCacheCapacity(): number {
    return this.sessions.capacity;
  }

  /**
   * The session cache: a value read from the store (a session's rows, a scope's contracts), computed once
   * per key and version and kept while the values used since fit in the cache's bytes; `bytesOf` tells
   * what a value holds. Loops and random requests share it. A failed computation is not kept.
   */
  sized<T>(key: string, compute: () => Promise<T>, bytesOf: (value: T) => number): Promise<T> {
    this.sync();
    const found = this.sessions.get(key);
    if (found !== undefined) return found as Promise<T>;
    const pending = compute();
    this.sessions.set(key, pending);
    pending.then(
      (value) => this.sessions.sized(key, pending, bytesOf(value)),
      () => {
        if (this.sessions.get(key) === pending) this.sessions.delete(key);
      },
    );
    return pending;
  }

  /** The session cache's value of `key` if it holds one (being computed or done), without computing it. */
  heldSized<T>(key: string): Promise<T> | undefined {
    this.sync();
    return this.sessions.get(key) as Promise<T> | undefined;
  }

  /**
   * A value computed from the data (no statement: the IV and Greeks of a snapshot priced), kept under
   * `key` by `keepComputed`, or undefined.
   */
  computed(key: string): unknown {
    this.sync();
    return this.computedValues.get(key);
  }

  /** Keeps a computed value of about `bytes` for `computed` (the least recently used go past the budget). */
  keepComputed(key: string, value: unknown, bytes: number): void {
    this.sync();
    this.computedValues.set(key, value);
    this.computedValues.sized(key, value, bytes);
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

  /**
   * The state kept under `key` for the current data version, if any, without making one or counting it as
   * used (what tests and diagnostics read leaves the states the cache keeps as they were).
   */
  heldState<T>(key: string): T | undefined {
    this.sync();
    return this.states.peek(key) as T | undefined;
  }

  private sync(): void {
    const version = this.dataVersion();
    if (version === this.version) return;
    this.version = version;
    this.clear();
  }

  /** Drops every value, state and session kept (a data version moving on, a store closing). */
  clear(): void {
    this.derived.clear();
    this.states.clear();
    this.held.clear();
    this.sessions.clear();
    this.computedValues.clear();
  }
}
