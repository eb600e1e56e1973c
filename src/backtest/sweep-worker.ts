/**
 * A sweep's worker thread: loads the strategy module and opens the store once, answers `ready`, then
 * runs each combination it is sent as a backtest of its own and answers with its report, whose statistics
 * use the sweep's risk-free rate (see `sweep.ts`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../library/store.js';
import { loadStrategyModule } from './load-strategy.js';
import { backtest } from './runner.js';
import type { SweepAnswer, SweepJob, SweepWorkerData } from './sweep.js';
import type { BacktestOptions } from './types.js';

const port = parentPort!;
const data = workerData as SweepWorkerData;
const send = (answer: SweepAnswer) => port.postMessage(answer);
const failure = (index: number | null, error: unknown): SweepAnswer => ({
  type: 'error',
  index,
  name: error instanceof Error ? error.name : 'Error',
  message: error instanceof Error ? error.message : String(error),
});

try {
  const [{ strategy, options }, store] = await Promise.all([
    loadStrategyModule(data.strategy),
    openStore(data.store, { threads: data.threads }),
  ]);
  port.on('message', async (job: SweepJob) => {
    if (job.type === 'close') {
      store.close();
      process.exit(0); // ends this thread only
    }
    try {
      // `parameters` reaches the strategy as `context.parameters`, over its own defaults and any that
      // the module's options or the sweep's give every combination.
      const parameters = {
        ...((options as { parameters?: object }).parameters ?? {}),
        ...((data.run.parameters as object | undefined) ?? {}),
        ...job.parameters,
      };
      const run = { ...options, ...data.run, parameters };
      const report = await backtest({
        ...(run as Omit<BacktestOptions, 'store' | 'strategy'>),
        store,
        strategy,
      });
      send({ type: 'done', index: job.index, report });
    } catch (error) {
      send(failure(job.index, error));
    }
  });
  send({ type: 'ready' });
} catch (error) {
  send(failure(null, error));
}
