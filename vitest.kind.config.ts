import { defineConfig } from 'vitest/config';

// `npm run test:kind`: the catalog and the kube observers on one shared cluster (see
// suites/kube/cluster/global-setup.ts), kind unless ZERODROP_CLUSTER_PROVIDER says otherwise.
// vitest.netns.config.ts runs the same files on a netns cluster. Files run one at a time: they share
// the cluster's NodePorts.
process.env['ZERODROP_CLUSTER_PROVIDER'] ||= 'kind';
// The scenario results of the run also go into one zerodrop report (HTML, JUnit, conformance YAML),
// through the suites' own collector: reports/<provider>/ unless the caller chose a directory.
process.env['ZERODROP_VITEST_REPORT_DIR'] ??= `reports/${process.env['ZERODROP_CLUSTER_PROVIDER'] === 'netns' ? 'netns' : 'kind'}`;

export default defineConfig({
  test: {
    include: ['suites/kube/cluster/**/*.cluster.ts'],
    globalSetup: ['suites/global-setup.ts', 'suites/kube/cluster/global-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 30 * 60_000,
    // A cold build of the netns cluster's control plane takes 10-20 minutes on two cores.
    hookTimeout: 45 * 60_000,
    reporters: ['default', './suites/plain-summary-reporter.ts'],
  },
});
