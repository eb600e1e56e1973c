/**
 * The one way a test reads shared data (real market files, documented example bodies): a test or suite
 * that needs a file that is not on this machine is skipped, with a name that says which file and how to
 * get it (`test/helpers/skip-summary.ts` counts them at the end of the run). With `CI` set, a missing
 * file is an error instead: CI runs every test.
 *
 *   const spxw = withData(['data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv']);
 *   spxw.describe('…', () => { spxw.beforeAll(…); it(…) });
 *   const file = sharedPath('data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv');
 *
 * The functions `withData` returns are vitest's own when every file is here; otherwise `describe`/`it`
 * register skipped suites and tests (their bodies are collected, never run) and the hooks do nothing.
 */
import { readFileSync } from 'node:fs';
import * as vitest from 'vitest';
import { findShared, HOW_TO_GET, sharedPath } from './shared-files.js';

export { sharedPath };

/** The marker a skipped test's name carries; the skip summary reads it back. */
export const MISSING_MARK = '[skipped: missing ';

/** True when missing data must fail the run rather than skip (CI). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI;
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

/** A shared JSON file (e.g. a documented example body), parsed. */
export function sharedJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(sharedPath(file), 'utf8')) as Record<string, unknown>;
}

type Gated = {
  readonly describe: typeof vitest.describe;
  readonly it: typeof vitest.it;
  readonly beforeAll: typeof vitest.beforeAll;
  readonly afterAll: typeof vitest.afterAll;
  readonly beforeEach: typeof vitest.beforeEach;
  readonly afterEach: typeof vitest.afterEach;
  /** The files of the list not on this machine (empty when everything is). */
  readonly missing: readonly string[];
};

/** Suites, tests and hooks that run only when every listed shared file is on this machine. */
export function withData(files: readonly string[]): Gated {
  const missing = files.filter((file) => findShared(file) === undefined);
  if (missing.length === 0) {
    const { describe, it, beforeAll, afterAll, beforeEach, afterEach } = vitest;
    return { describe, it, beforeAll, afterAll, beforeEach, afterEach, missing };
  }
  if (inCi()) {
    throw new Error(`missing shared data: ${missing.join(', ')}. CI runs every test: ${HOW_TO_GET}.`);
  }
  const mark = (name: unknown) => `${String(name)} ${MISSING_MARK}${missing.join(', ')}]`;
  const noop = () => {};
  return {
    describe: skipping(vitest.describe.skip, mark) as unknown as typeof vitest.describe,
    it: skipping(vitest.it.skip, mark) as unknown as typeof vitest.it,
    beforeAll: noop,
    afterAll: noop,
    beforeEach: noop,
    afterEach: noop,
    missing,
  };
}

/** A skipped `describe`/`it`, with the modifiers tests use (`.each`, `.skip`, `.skipIf`, …) skipping too. */
function skipping(
  skip: typeof vitest.it.skip | typeof vitest.describe.skip,
  mark: (name: unknown) => string,
): unknown {
  const register = (name: unknown, ...rest: unknown[]) =>
    (skip as (...args: unknown[]) => void)(mark(name), ...rest);
  const each =
    (table: unknown) =>
    (name: unknown, ...rest: unknown[]) =>
      (skip.each as (t: unknown) => (...args: unknown[]) => void)(table)(mark(name), ...rest);
  const self = (): unknown => fn;
  const fn = Object.assign(register, {
    each,
    skip: register,
    only: register,
    fails: register,
    concurrent: register,
    sequential: register,
    todo: register,
    skipIf: self,
    runIf: self,
  });
  return fn;
}
