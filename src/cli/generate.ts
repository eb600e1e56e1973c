import { createHash } from 'node:crypto';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { GENERATOR_STEPS, generateMarket } from '../ingest/generator/generate.js';
import type { GeneratorOptions, SnapshotName, UnderlyingSpec } from '../ingest/generator/options.js';
import { GENERATOR_PRESETS } from '../ingest/generator/presets.js';
import { hashFile } from '../ingest/ingest.js';
import { WriteTransaction } from '../store/writer.js';
import { examplesHelp, renderTable } from './format.js';
import { guardInterrupts } from './interrupt.js';
import { startProgress } from './progress.js';

type GenerateFlags = {
  store: string;
  preset?: string;
  seed?: string;
  from?: string;
  to?: string;
  underlyings?: string;
  snapshots?: string;
  greeks?: string;
  minuteBars: boolean;
};

/** The synthetic-market description written into provenance: every quote it makes is synthetic. */
export const SYNTHETIC_SOURCE = 'synthetic market (pitchain generator; option quotes are not real)';

const SNAPSHOT_NAMES: readonly SnapshotName[] = ['eod', '15:45', '1m', '5m'];

/** Builds generator options: a preset (the sample by default), with any flags applied over it. */
export function generatorOptionsFrom(flags: Omit<GenerateFlags, 'store'>): GeneratorOptions {
  const preset = flags.preset ?? 'sample';
  if (!Object.hasOwn(GENERATOR_PRESETS, preset)) {
    throw new UsageError(
      `--preset takes ${Object.keys(GENERATOR_PRESETS).join(' or ')}, not '${preset}' (e.g. --preset intraday)`,
    );
  }
  const options: GeneratorOptions = { ...GENERATOR_PRESETS[preset as keyof typeof GENERATOR_PRESETS]() };
  if (flags.seed !== undefined) {
    if (!/^\d+$/.test(flags.seed)) throw new UsageError(`--seed must be a whole number, not '${flags.seed}'`);
    options.seed = Number(flags.seed);
  }
  if (flags.from !== undefined) options.from = flags.from;
  if (flags.to !== undefined) options.to = flags.to;
  if (flags.underlyings !== undefined) {
    const wanted = flags.underlyings
      .split(',')
      .map((s) => s.trim().toUpperCase())
      .filter((s) => s !== '');
    const known = new Map(options.underlyings.map((u) => [u.symbol, u]));
    const chosen: UnderlyingSpec[] = wanted.map(
      (symbol) =>
        known.get(symbol) ?? { symbol, style: 'stock', series: { kind: 'simulated', startPrice: 100 } },
    );
    for (const u of chosen) {
      if (u.series.kind === 'derived' && !wanted.includes(u.series.from)) {
        throw new UsageError(`${u.symbol} is derived from ${u.series.from}: list ${u.series.from} too`);
      }
    }
    options.underlyings = chosen;
  }
  if (flags.snapshots !== undefined) {
    options.snapshots = flags.snapshots.split(',').map((s) => {
      const name = s.trim() as SnapshotName;
      if (!SNAPSHOT_NAMES.includes(name))
        throw new UsageError(
          `--snapshots takes eod, 15:45, 1m or 5m, not '${name}' (e.g. --snapshots 5m,eod)`,
        );
      return name;
    });
    if (options.snapshots.includes('1m') && options.snapshots.includes('5m'))
      throw new UsageError('--snapshots takes one grid, 1m or 5m, not both (e.g. --snapshots 1m,eod)');
  }
  if (flags.greeks !== undefined) {
    if (flags.greeks !== 'all' && flags.greeks !== 'iv' && flags.greeks !== 'none') {
      throw new UsageError(`--greeks takes all, iv or none, not '${flags.greeks}'`);
    }
    options.greeks = flags.greeks;
  }
  // The intraday preset has no stock bars to skip (an index); --no-minute-bars matters to the sample.
  options.minuteBars = flags.minuteBars && options.minuteBars === true;
  return options;
}

/**
 * A digest of what the generator was asked for. Series files enter by content, not by path, so the
 * same sample built in another checkout has the same provenance and data version.
 */
async function optionsDigest(options: GeneratorOptions): Promise<string> {
  const underlyings = await Promise.all(
    options.underlyings.map(async (u) =>
      u.series.kind === 'lean'
        ? { ...u, series: { kind: 'lean', sha256: (await hashFile(u.series.path)).sha256 } }
        : u,
    ),
  );
  return createHash('sha256')
    .update(JSON.stringify({ ...options, underlyings }))
    .digest('hex');
}

/** `pitchain generate`: writes a deterministic synthetic market into a store as one commit. */
export function registerGenerate(program: Command): void {
  program
    .command('generate')
    .description(
      'Generate a deterministic synthetic option market (Black-Scholes on real or simulated underlyings) into a store.',
    )
    .requiredOption('--store <dir>', 'store directory (created if missing)')
    .option(
      '--preset <name>',
      "what to build before the flags below: 'sample' (default) or 'intraday' (SPX/SPXW 0DTE, 1-minute snapshots, 2023-01-03..2023-03-31)",
    )
    .option('--seed <n>', 'random seed; the same seed and options give the same data version')
    .option('--from <date>', 'first session, YYYY-MM-DD (default 2019-01-02)')
    .option('--to <date>', 'last session, YYYY-MM-DD (default 2020-12-31)')
    .option(
      '--underlyings <list>',
      'comma list: SPY, SPX (SPX+SPXW, from SPY x 10), AAPL, or any ticker (simulated)',
    )
    .option(
      '--snapshots <list>',
      "snapshots per session: 'eod', '15:45' and one grid, '1m' or '5m' (09:31/09:35..15:59 ET) (sample: eod,15:45; intraday: 1m,eod)",
    )
    .option(
      '--greeks <which>',
      'vendor columns to fill: all, iv or none (default iv; the rest is computed on query)',
    )
    .option('--no-minute-bars', 'skip the one-minute stock bars')
    .addHelpText(
      'after',
      '\nWithout options it builds the embedded sample: SPY, SPX/SPXW and AAPL over 2019-2020 on the real\nLean daily bars in data/sources. Every option quote it writes is synthetic.\n' +
        examplesHelp([
          'pitchain generate --store my-sample',
          'pitchain generate --store spy-2020 --underlyings SPY --from 2020-01-02 --to 2020-03-31 --seed 7',
          'pitchain generate --store small --underlyings SPY --snapshots eod --greeks none --no-minute-bars',
          'pitchain generate --store spx-0dte --preset intraday --to 2023-01-31',
          'pitchain generate --store spx-5m --preset intraday --snapshots 5m,eod',
        ]),
    )
    .action(async (flags: GenerateFlags) => {
      const options = generatorOptionsFrom(flags);
      const started = Date.now();
      const tx = await WriteTransaction.begin(flags.store, { create: true });
      let committed = false;
      const interrupts = guardInterrupts(tx);
      process.stderr.write(
        `generating ${options.underlyings.map((u) => u.symbol).join(', ')} ${options.from}..${options.to} (seed ${options.seed})\n`,
      );
      // The generator's steps, then the commit, under the line above.
      const progress = startProgress('generate', GENERATOR_STEPS + 1, 'steps');
      try {
        const summary = await generateMarket(tx.sql, options, (done) => progress.update(done));
        const generatedSeconds = (Date.now() - started) / 1000;
        const result = await tx.commit([
          {
            source: SYNTHETIC_SOURCE,
            sha256: await optionsDigest(options),
            format: 'generator',
            rows: {
              option_quotes: summary.optionRows,
              open_interest: summary.openInterestRows,
              stock_bars: summary.dailyBars + summary.minuteBars,
              splits: summary.splits,
            },
            rejected: 0,
          },
        ]);
        committed = true;
        progress.update(GENERATOR_STEPS + 1);
        progress.stop();
        const seconds = (Date.now() - started) / 1000;
        process.stdout.write(
          [
            renderTable(
              ['what', 'count'],
              [
                ['sessions', summary.sessions],
                ['expirations', summary.expirations],
                ['contracts', summary.contracts],
                ['option rows', summary.optionRows],
                ['open interest rows', summary.openInterestRows],
                ['daily bars', summary.dailyBars],
                ['minute bars', summary.minuteBars],
                ['splits', summary.splits],
              ],
            ),
            '',
            `generated in ${generatedSeconds.toFixed(1)} s (${Math.round(summary.optionRows / generatedSeconds).toLocaleString('en-US')} option rows/s), committed in ${(seconds - generatedSeconds).toFixed(1)} s`,
            `data version: ${result.dataVersion}${result.changed ? '' : ' (unchanged)'}`,
            'note: every option quote in this store is synthetic.',
          ].join('\n') + '\n',
        );
      } catch (error) {
        await interrupts.settle(error);
      } finally {
        interrupts.done();
        progress.stop();
        if (!committed) await tx.abort();
      }
    });
}
