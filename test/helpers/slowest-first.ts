/**
 * The order test files start in: the slowest first, so that the run does not end on one long file while
 * the other workers sit idle. Vitest orders files by the durations it measured in an earlier run, and
 * without one (a fresh clone, CI) by file size, which puts short files of slow tests (child processes,
 * servers, the README's commands) near the end. The files named here start first, in this order (their
 * durations on an idle 2-core machine, slowest first); every other file follows in Vitest's own order.
 * Name a new file here when it takes more than about five seconds alone (`npx vitest run <file>`).
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const SLOWEST_FIRST: readonly string[] = [
  'test/store/store.test.ts',
  'test/readme.test.ts',
  'test/query/options/read-ahead.test.ts',
  'test/package/install.test.ts',
  'test/query/daily-history.test.ts',
  'test/cli.test.ts',
  'test/client/mirror.test.ts',
  'test/backtest/examples.test.ts',
  'test/service/fuzz.test.ts',
  'test/store/cleanup.test.ts',
  'test/http/log.test.ts',
  'test/store/interrupt.test.ts',
  'test/backtest/sweep.test.ts',
  'test/backtest/load-strategy.test.ts',
  'test/ingest/hod.test.ts',
  'test/query/options/read-ahead-carry.test.ts',
  'test/query/options/read-ahead-window.test.ts',
  'test/api-face.test.ts',
  'test/http/limits.test.ts',
  'test/http/fuzz.test.ts',
  'test/cli-bin.test.ts',
  'test/sample.test.ts',
];

/** `files` with those of `first` ahead, in its order; the others keep their order behind them. */
export function slowestFirst<T>(
  files: readonly T[],
  name: (file: T) => string,
  first: readonly string[],
): T[] {
  const rank = (file: T) => {
    const at = first.indexOf(name(file));
    return at < 0 ? first.length : at;
  };
  // Array.prototype.sort is stable: files of equal rank (all the unnamed ones) keep their order.
  return [...files].sort((a, b) => rank(a) - rank(b));
}

export default class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    return slowestFirst(
      await super.sort(files),
      (file) => relative(root, file.moduleId).split('\\').join('/'),
      SLOWEST_FIRST,
    );
  }
}
