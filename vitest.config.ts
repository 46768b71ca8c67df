import { defineConfig } from 'vitest/config';

// Two groups, one after the other (sequence.groupOrder):
// - unit: logic, fakes and fixtures that judge no timing, two files at once;
// - timing: everything that starts real processes and sockets and judges their timing (every
//   scenario run, the load generators, the local provider's lifecycle), one file at a time, so that
//   two never compete for the machine's 2 cores. Measured: two gateway suites at once pushed most of
//   their runs into `inconclusive` (harness lag, load not held) and some past runCase's three tries.
const TIMING = [
  'suites/**/*.test.ts',
  'src/load/**/*.test.ts',
  'src/providers/local/lifecycle.test.ts',
  'src/providers/local/balancer.test.ts',
  'src/providers/local/udp-balancer.test.ts',
  'src/observe/loop-monitor.test.ts',
  'src/runner/run-matrix.test.ts',
  'src/bench/**/*.test.ts',
];

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 60_000,
    reporters: ['default', './suites/plain-summary-reporter.ts'],
    // Every scenario result the suites produce also goes into one zerodrop report: reports/vitest/.
    globalSetup: ['./suites/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'], exclude: TIMING, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'timing', include: TIMING, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
