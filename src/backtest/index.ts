/** The backtest runner: `backtest()`, `defineStrategy()`, `loadStrategyModule()` and their types. */
export { type Execution, executionOf, fillPrice } from './fills.js';
export { loadStrategyModule } from './load-strategy.js';
export { type MarginHolding, type MarginResult, marginRequirement } from './margin.js';
export { backtest, defineStrategy, drawdown } from './runner.js';
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
