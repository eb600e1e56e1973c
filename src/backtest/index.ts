/** The backtest runner: `backtest()`, `defineStrategy()`, `loadStrategyModule()` and their types. */
export { type Execution, executionOf, fillPrice } from './fills.js';
export { loadStrategyModule } from './load-strategy.js';
export { type MarginHolding, type MarginResult, marginRequirement } from './margin.js';
export {
  formatStatisticsTable,
  REPORT_FILES,
  withStatistics,
  writeReportFiles,
} from './report-files.js';
export { type RoundTrip, type RoundTripLeg, roundTripsOf } from './round-trips.js';
export { backtest, defineStrategy, drawdown } from './runner.js';
export {
  type BacktestStatistics,
  computeStatistics,
  type Drawdown,
  drawdownSeries,
  SESSIONS_PER_YEAR,
} from './statistics.js';
export {
  combinations,
  defaultWorkerCount,
  formatSweepTable,
  type Grid,
  parseGrid,
  type SweepOptions,
  type SweepResult,
  type SweepSortKey,
  sweep,
  sweepCsv,
} from './sweep.js';
export type {
  BacktestOptions,
  BacktestReport,
  ComboOrder,
  EquityPoint,
  ExecutionOptions,
  FillModel,
  Greeks,
  MarkNote,
  MarkSource,
  OptionPosition,
  Order,
  OrderLeg,
  Position,
  RejectedOrder,
  SingleOrder,
  StockPosition,
  Strategy,
  StrategyContext,
  StrategyParameters,
  Trade,
} from './types.js';
