/** Writes generated markets into a store as one commit each: the small stores the read-ahead tests read. */
import { type GeneratorOptions, generateMarket } from '../../../src/ingest/generator/index.js';
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
