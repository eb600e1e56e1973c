/** The backtest runner: `backtest()`, `defineStrategy()` and their types. */
export { type Execution, executionOf, fillPrice } from './fills.js';
export { backtest, defineStrategy, drawdown } from './runner.js';
export type {
  BacktestOptions,
  BacktestReport,
  EquityPoint,
  ExecutionOptions,
  FillModel,
  Order,
  Position,
  RejectedOrder,
  Strategy,
  StrategyContext,
  Trade,
} from './types.js';
