/**
 * An index from 53-bit symbol hashes (as DuckDB hands them over, exact doubles) to contract numbers: open
 * addressing over typed arrays. A Map keyed by such doubles boxes and hashes each number; a session of the
 * large stores matches some 20,000 rows, and this makes their lookups a few array reads each.
 */
export class KeyIndex {
  /**
   * Per slot, the number of the key held there, or -1: the keys themselves are read from the array
   * indexed, so an index costs 4 bytes a slot, not 12 (a large store's contract tables are held side by
   * side in the session cache, and this was a fifth of their bytes).
   */
  private readonly slots: Int32Array;
  private readonly mask: number;

  private constructor(
    private readonly keys: Float64Array,
    size: number,
  ) {
    this.slots = new Int32Array(size).fill(-1);
    this.mask = size - 1;
  }

  /** The index of `keys` (key i → i), or undefined when two keys are equal. */
  static of(keys: Float64Array): KeyIndex | undefined {
    let size = 16;
    while (size < keys.length * 2) size *= 2;
    const index = new KeyIndex(keys, size);
    for (let i = 0; i < keys.length; i++) if (!index.add(keys[i]!, i)) return undefined;
    return index;
  }

  /**
   * A test of whether a key is one of `keys`, by an index of them alone: a few hundred contracts' index
   * stays in the processor's cache, where looking up each of a session's thousands of rows in the whole
   * contract table's index missed it every time (1.4 ms of a dated front month's 4.5). Undefined when two
   * keys are equal.
   */
  static membership(keys: Float64Array): ((key: number) => boolean) | undefined {
    const index = KeyIndex.of(keys);
    return index === undefined ? undefined : (key) => index.get(key) !== undefined;
  }

  /** The bytes the index holds besides the keys it indexes. */
  get bytes(): number {
    return this.slots.byteLength;
  }

  /** The value of `key`, or undefined. */
  get(key: number): number | undefined {
    const { slots, keys, mask } = this;
    for (let slot = KeyIndex.slotOf(key, mask); ; slot = (slot + 1) & mask) {
      const held = slots[slot]!;
      if (held === -1) return undefined; // an empty slot
      if (keys[held] === key) return held;
    }
  }

  /**
   * The value of `key`, tried first at `near` and the one after it: rows that come in the order of the
   * keys indexed (a session's rows by contract, as the session files hold them) find theirs without a
   * probe into the index, which misses the processor's cache for a large table at every row.
   */
  getNear(key: number, near: number): number | undefined {
    const keys = this.keys;
    if (keys[near] === key) return near;
    if (keys[near + 1] === key) return near + 1;
    return this.get(key);
  }

  /** Adds `key` → `value` (`keys[value]` is `key`); false when the key is there already. */
  private add(key: number, value: number): boolean {
    const { slots, keys, mask } = this;
    for (let slot = KeyIndex.slotOf(key, mask); ; slot = (slot + 1) & mask) {
      const held = slots[slot]!;
      if (held === -1) {
        slots[slot] = value;
        return true;
      }
      if (keys[held] === key) return false;
    }
  }

  /**
   * A key's first slot: its low 32 bits mixed with its bits 21 to 52 (the keys are hashes already), each
   * got without a floating-point remainder (`key % 2 ** 32` is a call into the C library: indexing the 26
   * M-row store's SPY table, 121,134 keys, took 6-8 ms with it, 2.6 ms so).
   */
  private static slotOf(key: number, mask: number): number {
    return (key ^ (key / 2_097_152)) & mask;
  }
}
