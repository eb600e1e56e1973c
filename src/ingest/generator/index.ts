/**
 * The deterministic synthetic market generator: option snapshots, open interest and stock bars written
 * into the store's staging tables, on the real NYSE calendar, from real Lean daily bars or a simulation.
 */
export { generateMarket } from './generate.js';
export {
  DEFAULT_LISTING,
  DEFAULT_PRICING,
  type ListingPlan,
  type ListingStyle,
  type PricingParams,
} from './model.js';
export type {
  GeneratorOptions,
  GeneratorSummary,
  SeriesSource,
  SnapshotName,
  SplitEvent,
  UnderlyingSpec,
} from './options.js';
export { GENERATOR_PRESETS, intradayOptions, SAMPLE_SOURCES, sampleOptions } from './presets.js';
export {
  type DailyBar,
  loadLeanDailyBars,
  parseLeanDailyBars,
  type SimulatedSeriesOptions,
  simulateDailyBars,
} from './series.js';
export type { GreeksMode } from './statements.js';
