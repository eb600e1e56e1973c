/**
 * `backtest()`: a clock steps through the sessions at the decision time; at each, the strategy sees only
 * `store.at(now)` under the strict policy and its marked positions, and returns orders; the runner fills
 * them by the stated model on fresh valid quotes within the account's buying power, marks the account,
 * settles what expires and adjusts for splits (see run.ts). The report names the data version, the
 * credits the same requests would have cost, the look-ahead reads and the marks that were not quotes.
 */
import { InvalidInputError } from '../errors.js';
import { type Store, storeInternals } from '../library/store.js';
import { isIsoDate, sessionsBetween } from '../market-time/index.js';
import { heldSessions } from '../store/summary.js';
import { BacktestRun } from './run.js';
import type { BacktestOptions, BacktestReport, Strategy } from './types.js';

export { drawdown } from './run.js';

/** Types a strategy (an identity function: the types are the help). */
export function defineStrategy(strategy: Strategy): Strategy {
  return strategy;
}

/** Runs a strategy over the sessions `from`…`to` and reports what it did. */
export async function backtest(options: BacktestOptions): Promise<BacktestReport> {
  const sessions = await periodSessions(options.store, options.from, options.to);
  return new BacktestRun(options, sessions).run();
}

/**
 * The sessions of a period, refusing dates that cannot be read, a period with none, and one reaching
 * outside the sessions the store holds (a run there would trade on older quotes and settle on nothing).
 */
export async function periodSessions(store: Store, from: string, to: string): Promise<string[]> {
  for (const [name, date] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (typeof date !== 'string' || !isIsoDate(date)) {
      throw new InvalidInputError(`${name} must be a date such as 2020-01-02, not ${JSON.stringify(date)}`);
    }
  }
  if (from > to) throw new InvalidInputError(`from (${from}) is after to (${to})`);
  const sessions = sessionsBetween(from, to);
  if (sessions.length === 0) throw new InvalidInputError(`no session between ${from} and ${to}`);
  const held = await heldSessions(storeInternals(store).reader);
  if (held.first === null || held.last === null) throw new InvalidInputError('the store holds no sessions');
  if (sessions[0]! < held.first || sessions.at(-1)! > held.last) {
    throw new InvalidInputError(
      `the period ${from} .. ${to} reaches outside the sessions the store holds, ${held.first} .. ${held.last}`,
    );
  }
  return sessions;
}
