import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The skip summary last: what was skipped for want of shared data, and how to get it.
    reporters: ['default', './test/helpers/skip-summary.ts'],
  },
});
