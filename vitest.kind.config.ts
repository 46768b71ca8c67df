import { defineConfig } from 'vitest/config';

// The scenario results of the run also go into one zerodrop report (HTML, JUnit, conformance YAML),
// through the suites' own collector: reports/kind/ unless the caller chose a directory.
process.env['ZERODROP_VITEST_REPORT_DIR'] ??= 'reports/kind';

// `npm run test:kind`: the catalog and the kube observers on one shared kind cluster (see
// suites/kube/cluster/global-setup.ts). Files run one at a time: they share the cluster's NodePorts.
export default defineConfig({
  test: {
    include: ['suites/kube/cluster/**/*.kind.ts'],
    globalSetup: ['suites/global-setup.ts', 'suites/kube/cluster/global-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 30 * 60_000,
    hookTimeout: 15 * 60_000,
    reporters: ['default', './suites/plain-summary-reporter.ts'],
  },
});
