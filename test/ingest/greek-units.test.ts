import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerIngest } from '../../src/cli/ingest.js';
import { UsageError } from '../../src/errors.js';
import { detectGreekUnits, type EvidenceRow, parseGreeksUnits } from '../../src/ingest/greek-units.js';
import { StoreReader } from '../../src/store/store.js';
import { sharedPath } from '../helpers/shared-data.js';

describe('--greeks-units', () => {
  it('reads auto, none, presets and greek=divisor pairs, later items winning', () => {
    expect(parseGreeksUnits(undefined)).toEqual({ kind: 'detect', stated: {} });
    expect(parseGreeksUnits('auto')).toEqual({ kind: 'detect', stated: {} });
    expect(parseGreeksUnits('none')).toEqual({ kind: 'none' });
    expect(parseGreeksUnits('theta=365, vega=100')).toEqual({
      kind: 'detect',
      stated: { theta: 365, vega: 100 },
    });
    expect(parseGreeksUnits('per-year,gamma=100')).toEqual({
      kind: 'detect',
      stated: { iv: 1, delta: 1, gamma: 100, theta: 365, vega: 100 },
    });
    expect(parseGreeksUnits('store')).toEqual({
      kind: 'detect',
      stated: { iv: 1, delta: 1, gamma: 1, theta: 1, vega: 1 },
    });
    for (const bad of ['rho=1', 'theta=0', 'theta', 'yearly']) {
      expect(() => parseGreeksUnits(bad)).toThrow(UsageError);
    }
  });
});

describe('Greek unit detection', () => {
  // Near-money rows of a 30-day chain on a $100 stock at 20% volatility, in the store's units (Black–Scholes
  // at a zero rate, rounded as vendors print them).
  const rows: EvidenceRow[] = [95, 97.5, 100, 102.5, 105].flatMap((strike) =>
    (['call', 'put'] as const).map((side) => {
      const [spot, days, vol] = [100, 30, 0.2];
      const t = days / 365;
      const d1 = (Math.log(spot / strike) + (vol * vol * t) / 2) / (vol * Math.sqrt(t));
      const pdf = Math.exp((-d1 * d1) / 2) / Math.sqrt(2 * Math.PI);
      const cdf = (x: number) => 0.5 * (1 + Math.tanh(0.7978845608 * (x + 0.044715 * x ** 3)));
      const d2 = d1 - vol * Math.sqrt(t);
      const call = spot * cdf(d1) - strike * cdf(d2);
      return {
        side,
        spot,
        strike,
        days,
        price: side === 'call' ? call : call - spot + strike,
        iv: vol,
        delta: side === 'call' ? cdf(d1) : cdf(d1) - 1,
        gamma: pdf / (spot * vol * Math.sqrt(t)),
        theta: -(spot * pdf * vol) / (2 * Math.sqrt(t)) / 365,
        vega: (spot * pdf * Math.sqrt(t)) / 100,
      };
    }),
  );
  const printed = (divisors: Record<string, number>) =>
    rows.map((r) => ({
      ...r,
      iv: r.iv! * (divisors['iv'] ?? 1),
      delta: r.delta! * (divisors['delta'] ?? 1),
      gamma: r.gamma! * (divisors['gamma'] ?? 1),
      theta: r.theta! * (divisors['theta'] ?? 1),
      vega: r.vega! * (divisors['vega'] ?? 1),
    }));
  const divisors = (found: ReturnType<typeof detectGreekUnits>) =>
    Object.fromEntries(Object.entries(found).map(([greek, d]) => [greek, d.divisor]));

  it('finds each known convention', () => {
    for (const convention of [
      {},
      { theta: 365, vega: 100 },
      { gamma: 100, theta: 100 },
      { iv: 100, delta: 100, gamma: 100, theta: 100, vega: 100 },
    ]) {
      expect(divisors(detectGreekUnits(printed(convention)))).toEqual({
        iv: 1,
        delta: 1,
        gamma: 1,
        theta: 1,
        vega: 1,
        ...convention,
      });
    }
  });

  it('establishes nothing it cannot: a unit between two known ones, or no near-money rows', () => {
    expect(detectGreekUnits(printed({ theta: 30 })).theta.divisor).toBeUndefined();
    expect(detectGreekUnits(printed({ theta: 190 })).theta.divisor).toBeUndefined();
    expect(divisors(detectGreekUnits(rows.map((r) => ({ ...r, days: 400 }))))).toEqual({
      iv: undefined,
      delta: undefined,
      gamma: undefined,
      theta: undefined,
      vega: undefined,
    });
  });

  it('does not take a placeholder IV (Lean prints 0.0000001) as evidence', () => {
    const placeholders = rows.map((r) => ({ ...r, iv: 0.0000001 }));
    expect(detectGreekUnits(placeholders).iv).toEqual({ divisor: undefined, rows: 0, ratio: undefined });
  });

  it('takes a stated divisor as it is, and compares the Greeks at a stated IV', () => {
    const found = detectGreekUnits(printed({ iv: 100, theta: 365 }), { iv: 100, vega: 7 });
    expect(divisors(found)).toEqual({ iv: 100, delta: 1, gamma: 1, theta: 365, vega: 7 });
  });
});

describe('pitchain ingest --greeks-units', () => {
  const L3 = sharedPath('data/options/hod_L3_A_2016-01-05.csv');
  const ingest = async (...args: string[]) => {
    const program = new Command().exitOverride();
    registerIngest(program);
    const write = process.stdout.write;
    process.stdout.write = () => true; // the summary table
    try {
      await program.parseAsync(['ingest', ...args], { from: 'user' });
    } finally {
      process.stdout.write = write;
    }
  };

  it('passes the statement to the format, and refuses a bad one before any work', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-greeks-units-'));
    try {
      const store = path.join(dir, 'store');
      await expect(
        ingest('--store', store, '--format', 'hod', '--greeks-units', 'yearly', L3),
      ).rejects.toThrow(UsageError);
      await expect(fs.access(store)).rejects.toThrow();
      await ingest('--store', store, '--format', 'hod', '--greeks-units', 'none', L3);
      const reader = await StoreReader.open(store);
      try {
        expect(await reader.sql.value('SELECT count(*) FROM option_quotes')).toBe(208);
        expect(
          await reader.sql.value(
            'SELECT count(*) FROM option_quotes WHERE coalesce(iv, delta, gamma, theta, vega) IS NOT NULL',
          ),
        ).toBe(0);
      } finally {
        reader.close();
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
