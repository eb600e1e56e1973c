/**
 * Seeded pseudo-random numbers for the small, JS-side parts of the generator (price paths, listing
 * choices). Pure integer arithmetic (mulberry32 over an FNV-1a key), so a seed gives the same stream on
 * every platform.
 */

/** A deterministic stream of numbers derived from a seed and a list of labels. */
export type Random = {
  /** Uniform in [0, 1). */
  next(): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
  /** Integer in [0, n). */
  int(n: number): number;
};

/** A 32-bit key from a seed and labels, so streams for different symbols or purposes do not overlap. */
export function streamKey(seed: number, ...labels: readonly (string | number)[]): number {
  let h = 0x811c9dc5;
  const mix = (text: string) => {
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    h ^= 0x1f;
    h = Math.imul(h, 0x01000193);
  };
  mix(String(seed));
  for (const label of labels) mix(String(label));
  return h >>> 0;
}

/** A random stream keyed by the seed and labels. */
export function createRandom(seed: number, ...labels: readonly (string | number)[]): Random {
  let state = streamKey(seed, ...labels);
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    normal() {
      const u = 1 - next();
      const v = next();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    },
    int(n) {
      return Math.floor(next() * n);
    },
  };
}
