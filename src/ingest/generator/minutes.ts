/**
 * The intraday half of a session: the underlying's price at every minute boundary and its one-minute
 * bars, computed in JS (a few hundred thousand points are nothing here, while prefix sums in SQL need
 * sorting window functions). Prices are integers in 1/10000 dollars, the store's precision, so the
 * minutes reproduce the daily bar exactly.
 */
import type { Random } from './random.js';

/** A session's daily bar (prices in 1/10000 dollars), its length and where its high and low fall. */
export type SessionPins = {
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  /** Minutes in the session (390, or 210 on an early close). */
  minutes: number;
  /** Minute boundaries of the high and of the low (distinct, inside (0, minutes)). */
  highAt: number;
  lowAt: number;
};

/** A session's minute bars beyond the path (1/10000 dollars; shares): bar i opens at path point i and closes at i + 1. */
export type MinuteBars = { high: Float64Array; low: Float64Array; volume: Float64Array };

/** Scratch arrays reused from session to session (the walk, the volume weights). */
const scratch = [new Float64Array(0), new Float64Array(0)];

function scratchOf(slot: 0 | 1, length: number): Float64Array {
  if (scratch[slot]!.length < length) scratch[slot] = new Float64Array(length);
  return scratch[slot]!;
}

/** A price rounded to cents, in 1/10000 dollars. */
const toCents = (units: number) => Math.floor(units / 100 + 0.5) * 100;

/**
 * The price at each of the `minutes + 1` minute boundaries: Brownian bridges pinned at the open, the
 * day's high and low (in the order they happen) and the close, rounded to cents and clipped to the day's
 * range between the pins.
 */
export function intradayPath(
  day: SessionPins,
  random: Random,
  path: Float64Array = new Float64Array(day.minutes + 1),
): Float64Array {
  const n = day.minutes;
  const walk = scratchOf(0, n + 1);
  walk[0] = 0;
  // Box–Muller pairs: both normals of each pair of uniforms.
  for (let k = 1; k <= n; k += 2) {
    const radius = Math.sqrt(-2 * Math.log(1 - random.next()));
    const angle = 2 * Math.PI * random.next();
    walk[k] = walk[k - 1]! + radius * Math.cos(angle);
    if (k < n) walk[k + 1] = walk[k]! + radius * Math.sin(angle);
  }
  const [t1, v1, t2, v2] =
    day.highAt < day.lowAt
      ? [day.highAt, day.high, day.lowAt, day.low]
      : [day.lowAt, day.low, day.highAt, day.high];
  const scale = (0.8 * (day.high - day.low)) / Math.sqrt(n);
  bridge(path, walk, scale, day, 0, t1, day.open, v1);
  bridge(path, walk, scale, day, t1, t2, v1, v2);
  bridge(path, walk, scale, day, t2, n, v2, day.close);
  path[0] = day.open;
  path[t1] = v1;
  path[t2] = v2;
  path[n] = day.close;
  return path;
}

function bridge(
  path: Float64Array,
  walk: Float64Array,
  scale: number,
  day: SessionPins,
  from: number,
  to: number,
  start: number,
  end: number,
): void {
  const span = to - from;
  const rise = walk[to]! - walk[from]!;
  for (let k = from + 1; k < to; k++) {
    const f = (k - from) / span;
    const price = toCents(start + (end - start) * f + scale * (walk[k]! - walk[from]! - f * rise));
    path[k] = Math.min(day.high, Math.max(day.low, price));
  }
}

const profiles = new Map<number, Float64Array>();

/** The U-shaped intraday volume profile of an n-minute session (heavy at the open, then the close). */
function volumeProfile(n: number): Float64Array {
  let profile = profiles.get(n);
  if (profile === undefined) {
    profile = new Float64Array(n);
    for (let i = 0; i < n; i++)
      profile[i] = 1000 * (1 + 2 * Math.exp(-i / 20) + 1.5 * Math.exp(-(n - 1 - i) / 15));
    profiles.set(n, profile);
  }
  return profile;
}

/**
 * A session's minute bars (open and close are consecutive path points): highs and lows add a small
 * excursion inside the day's range, and the day's volume is split by a U-shaped intraday profile with
 * exact integer arithmetic, so the minutes sum to the daily volume.
 */
export function minuteBars(
  day: SessionPins,
  path: Float64Array,
  random: Random,
  out: MinuteBars = {
    high: new Float64Array(day.minutes),
    low: new Float64Array(day.minutes),
    volume: new Float64Array(day.minutes),
  },
): MinuteBars {
  const n = day.minutes;
  const profile = volumeProfile(n);
  const { high, low, volume } = out;
  const weight = scratchOf(1, n);
  const reach = (0.24 * (day.high - day.low)) / Math.sqrt(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const o = path[i]!;
    const c = path[i + 1]!;
    high[i] = Math.min(day.high, Math.max(o, c) + toCents(reach * random.next()));
    low[i] = Math.max(day.low, Math.min(o, c) - toCents(reach * random.next()));
    weight[i] = 1 + Math.floor(profile[i]! * (0.5 + random.next()));
    total += weight[i]!;
  }
  // floor(volume × w / total) without passing 2^53: volume = q × total + r.
  const q = Math.floor(day.volume / total);
  const r = day.volume - q * total;
  let cumulative = 0;
  let before = 0;
  for (let i = 0; i < n; i++) {
    cumulative += weight[i]!;
    const share = q * cumulative + Math.floor((r * cumulative) / total);
    volume[i] = share - before;
    before = share;
  }
  return out;
}
