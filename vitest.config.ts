import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import SlowestFirstSequencer from './test/helpers/slowest-first.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
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
  },
});
