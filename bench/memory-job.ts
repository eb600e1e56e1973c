/**
 * Memory figures measured in a process of their own (`memory-child.mjs`): plain Node on the built package,
 * as users run it, with only the store and its questions in it.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The RSS once the store (or the raw DuckDB) is open, and the peak while asking, in MB. */
export type MemoryFigures = { peakMb: number; openMb: number };

/**
 * What the child asks: requests through `store.request` at their clock instants, `store.at(T)` chains of
 * one symbol with the same parameters at each instant (a backtest's loop), or raw DuckDB statements.
 */
export type MemoryJob =
  | { kind: 'store'; dir: string; requests: [now: string, path: string, allowNoData: boolean][] }
  | { kind: 'at-loop'; dir: string; instants: number[]; symbol: string; params: Record<string, unknown> }
  | { kind: 'raw'; statements: string[] };

/** Runs a job in `memory-child.mjs` (plain Node, the built package: build it first) and waits for its figures. */
export function forkMemoryJob(job: MemoryJob): Promise<MemoryFigures> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./memory-child.mjs', import.meta.url)), [], {
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: MemoryFigures | undefined;
    child.on('message', (message: MemoryFigures | { error: string }) => {
      if ('error' in message) reject(new Error(message.error));
      else result = message;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      result === undefined ? reject(new Error(`memory series exited with ${code}`)) : resolve(result),
    );
    child.send(job);
  });
}
