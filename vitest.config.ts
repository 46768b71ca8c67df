import { defineConfig } from 'vitest/config';

// Suites start real processes and sockets and judge timing. Files run one at a time so that two
// scenarios never compete for the machine's 2 cores and push the harness into `inconclusive`.
export default defineConfig({
  test: {
    include: ['suites/**/*.test.ts', 'src/**/*.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 60_000,
    reporters: ['default', './suites/plain-summary-reporter.ts'],
    // Every scenario result the suites produce also goes into one zerodrop report: reports/vitest/.
    globalSetup: ['./suites/global-setup.ts'],
  },
});
