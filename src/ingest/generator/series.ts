/**
 * Daily underlying series: the Lean daily-bar loader (real, unadjusted prices) and a seeded simulator for
 * arbitrary symbols. Prices are in dollars, dates are session dates.
 */
import { readFile } from 'node:fs/promises';
import { IngestError, UsageError } from '../../errors.js';
import { sessionsBetween } from '../../market-time/index.js';
import { createRandom } from './random.js';

/** One session's bar of an underlying, in dollars and shares, not split-adjusted. */
export type DailyBar = {
  date: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
};

const LEAN_LINE = /^(\d{4})(\d{2})(\d{2}) 00:00,(\d+),(\d+),(\d+),(\d+),(\d+)$/;
const LEAN_PRICE_SCALE = 10_000;

/**
 * Parses Lean daily bars (`yyyyMMdd 00:00,open,high,low,close,volume`, prices in 1/10000 USD, no header);
 * `file` names the source in errors.
 */
export function parseLeanDailyBars(text: string, file = 'lean daily bars'): DailyBar[] {
  const bars: DailyBar[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line === '') continue;
    const m = LEAN_LINE.exec(line);
    if (m === null) throw new IngestError(file, i + 1, `not a Lean daily bar: "${line.slice(0, 60)}"`);
    const [open, high, low, close] = [m[4], m[5], m[6], m[7]].map((v) => Number(v) / LEAN_PRICE_SCALE) as [
      number,
      number,
      number,
      number,
    ];
    if (!(high >= Math.max(open, close, low) && low <= Math.min(open, close) && low > 0)) {
      throw new IngestError(
        file,
        i + 1,
        `inconsistent bar (open ${open}, high ${high}, low ${low}, close ${close})`,
      );
    }
    const date = `${m[1]}-${m[2]}-${m[3]}`;
    const previous = bars[bars.length - 1];
    if (previous !== undefined && previous.date >= date) {
      throw new IngestError(file, i + 1, `date ${date} is not after ${previous.date}`);
    }
    bars.push({ date, open, high, low, close, volume: Number(m[8]) });
  }
  return bars;
}

/** Reads and parses a Lean daily-bar file. */
export async function loadLeanDailyBars(path: string): Promise<DailyBar[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new UsageError(`cannot read Lean daily bars at ${path}`, { cause });
  }
  return parseLeanDailyBars(text, path);
}

/** Parameters of a simulated daily series. */
export type SimulatedSeriesOptions = {
  /** First and last session dates (inclusive). */
  from: string;
  to: string;
  seed: number;
  /** Names the random stream, so two symbols with the same seed follow different paths. */
  symbol: string;
  startPrice: number;
  /** Long-run annualised volatility (default 0.25). */
  volatility?: number;
  /** Annualised drift (default 0.06). */
  drift?: number;
  /** Typical daily volume in shares (default 5,000,000). */
  volume?: number;
};

const TRADING_DAYS = 252;

/**
 * A seeded daily series over the NYSE sessions: log-normal returns whose variance follows a GARCH(1,1)
 * around the long-run volatility (so calm spells and volatility bursts alternate), overnight gaps, and
 * intraday ranges and volumes that grow with the day's move. Prices are rounded to cents.
 */
export function simulateDailyBars(options: SimulatedSeriesOptions): DailyBar[] {
  const volatility = options.volatility ?? 0.25;
  const drift = options.drift ?? 0.06;
  const baseVolume = options.volume ?? 5_000_000;
  if (!(options.startPrice > 0) || !(volatility > 0) || !(baseVolume > 0)) {
    throw new UsageError('simulated series: startPrice, volatility and volume must be positive');
  }
  const random = createRandom(options.seed, 'daily', options.symbol);
  const longRunVariance = (volatility * volatility) / TRADING_DAYS;
  const alpha = 0.08;
  const beta = 0.9;
  let variance = longRunVariance;
  let previousReturn = 0;
  let previousClose = options.startPrice;
  const bars: DailyBar[] = [];
  for (const date of sessionsBetween(options.from, options.to)) {
    variance = (1 - alpha - beta) * longRunVariance + alpha * previousReturn ** 2 + beta * variance;
    const sd = Math.sqrt(variance);
    const total = drift / TRADING_DAYS - variance / 2 + sd * random.normal();
    const gap = 0.25 * sd * random.normal();
    const open = cents(previousClose * Math.exp(gap));
    const close = cents(previousClose * Math.exp(total));
    const high = Math.max(
      open,
      close,
      cents(Math.max(open, close) * Math.exp(0.5 * sd * Math.abs(random.normal()))),
    );
    const low = Math.min(
      open,
      close,
      cents(Math.min(open, close) * Math.exp(-0.5 * sd * Math.abs(random.normal()))),
    );
    const shock = Math.abs(total) / Math.sqrt(longRunVariance);
    const volume = Math.round(baseVolume * Math.exp(0.25 * random.normal()) * (0.8 + 0.3 * shock));
    bars.push({ date, open, high, low: Math.max(low, 0.01), close, volume });
    previousReturn = Math.log(close / previousClose);
    previousClose = close;
  }
  return bars;
}

function cents(value: number): number {
  return Math.max(0.01, Math.round(value * 100) / 100);
}
