/** Writes generated markets into a store as one commit each: the small stores the read-ahead tests read. */
import {
  type GeneratorOptions,
  generateMarket,
  type UnderlyingSpec,
} from '../../../src/ingest/generator/index.js';
import { WriteTransaction } from '../../../src/store/writer.js';

/** Generates `options`' market into the store in `dir` (created if need be) and commits it as `source`. */
export async function commitGenerated(dir: string, options: GeneratorOptions, source: string): Promise<void> {
  const tx = await WriteTransaction.begin(dir, { create: true });
  const summary = await generateMarket(tx.sql, options);
  await tx.commit([
    {
      source,
      sha256: source,
      format: 'generator',
      rows: { option_quotes: summary.optionRows, open_interest: summary.openInterestRows },
      rejected: 0,
    },
  ]);
}

/**
 * One simulated stock, XYZ from $100, with end-of-day snapshots and vendor IV only (no Greeks), its
 * options listed as `listing` says: the small market most read-ahead tests commit.
 */
export function simulatedStock(
  period: { from: string; to: string; seed: number },
  listing: NonNullable<UnderlyingSpec['listing']>,
): GeneratorOptions {
  return {
    ...period,
    underlyings: [{ symbol: 'XYZ', style: 'stock', series: { kind: 'simulated', startPrice: 100 }, listing }],
    snapshots: ['eod'],
    minuteBars: false,
    greeks: 'iv',
  };
}
