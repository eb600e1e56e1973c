import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import SlowestFirstSequencer from './test/helpers/slowest-first.js';

/**
 * Test files that share their worker process with the files run before them (`isolate: false`): the
 * project's modules (DuckDB's binding among them) are loaded once per worker instead of once per file,
 * which was a third of these files' time. Only folders whose files leave no process state behind (a time
 * zone is set through `pinTimeZone`, an environment variable or fake timer is put back in the file's
 * afterAll) belong here; every other file gets a fresh process.
 */
const SHARED_WORKER = [
  'test/ingest/**/*.test.ts',
  'test/query/**/*.test.ts',
  'test/library/**/*.test.ts',
  'test/pricing/**/*.test.ts',
  'test/market-time/**/*.test.ts',
  'test/occ/**/*.test.ts',
  'test/pit/**/*.test.ts',
  'test/store/**/*.test.ts',
  'test/http/**/*.test.ts',
  'test/client/**/*.test.ts',
  'test/service/**/*.test.ts',
  'test/docs/**/*.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: on a 2-core machine, one file at a time. Test
    // files spend much of their time waiting on child processes, servers and DuckDB, so one per core.
    maxWorkers: Math.max(2, availableParallelism()),
    // The slowest files start first (named in the sequencer), so the run does not end on one of them.
    sequence: { sequencer: SlowestFirstSequencer },
    // The skip summary last: what was skipped for want of shared data, and how to get it.
    reporters: ['default', './test/helpers/skip-summary.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SHARED_WORKER],
        },
      },
      { extends: true, test: { name: 'shared', include: SHARED_WORKER, isolate: false } },
    ],
  },
});
