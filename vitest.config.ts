import { defineConfig } from 'vitest/config';

// Suites start real processes and sockets: keep files in separate forks, but few at a time on a
// 2-core machine so that the harness's own event loop never lags into an `inconclusive` verdict.
export default defineConfig({
  test: {
    include: ['suites/**/*.test.ts', 'src/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 60_000,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
