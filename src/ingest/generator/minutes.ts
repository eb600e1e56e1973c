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

/** A session's minute bars as comma-separated integers (1/10000 dollars; shares). */
export type MinuteBarsText = {
  /** The `minutes + 1` path points: bar i opens at point i and closes at point i + 1. */
  path: string;
  high: string;
  low: string;
  volume: string;
};

/** A price rounded to cents, in 1/10000 dollars. */
const toCents = (units: number) => Math.floor(units / 100 + 0.5) * 100;

/**
 * The price at each of the `minutes + 1` minute boundaries: Brownian bridges pinned at the open, the
 * day's high and low (in the order they happen) and the close, rounded to cents and clipped to the day's
 * range between the pins.
 */
export function intradayPath(day: SessionPins, random: Random): Float64Array {
  const n = day.minutes;
  const walk = new Float64Array(n + 1);
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
  const path = new Float64Array(n + 1);
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

/** Whole numbers below 2^31 join to text fastest from an Int32Array. */
const integers = (length: number, max: number): Int32Array | Float64Array =>
  max < 2 ** 31 ? new Int32Array(length) : new Float64Array(length);

/**
 * A session's minute bars as text (open and close are consecutive path points): highs and lows add a
 * small excursion inside the day's range, and the day's volume is split by a U-shaped intraday profile
 * with exact integer arithmetic, so the minutes sum to the daily volume.
 */
export function minuteBarsText(day: SessionPins, path: Float64Array, random: Random): MinuteBarsText {
  const n = day.minutes;
  const profile = volumeProfile(n);
  const points = integers(n + 1, day.high);
  const high = integers(n, day.high);
  const low = integers(n, day.high);
  const weight = new Float64Array(n);
  const reach = (0.24 * (day.high - day.low)) / Math.sqrt(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const o = path[i]!;
    const c = path[i + 1]!;
    points[i] = o;
    high[i] = Math.min(day.high, Math.max(o, c) + toCents(reach * random.next()));
    low[i] = Math.max(day.low, Math.min(o, c) - toCents(reach * random.next()));
    weight[i] = 1 + Math.floor(profile[i]! * (0.5 + random.next()));
    total += weight[i]!;
  }
  points[n] = path[n]!;
  // floor(volume × w / total) without passing 2^53: volume = q × total + r.
  const q = Math.floor(day.volume / total);
  const r = day.volume - q * total;
  const volume = integers(n, day.volume);
  let cumulative = 0;
  let before = 0;
  for (let i = 0; i < n; i++) {
    cumulative += weight[i]!;
    const share = q * cumulative + Math.floor((r * cumulative) / total);
    volume[i] = share - before;
    before = share;
  }
  return { path: points.join(), high: high.join(), low: low.join(), volume: volume.join() };
}
