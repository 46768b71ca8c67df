// `npm run test:netns`: the cluster suites of `npm run test:kind` (the same files, expectations and
// skips) on a netns cluster, a real Kubernetes cluster of network namespaces on this machine
// (docs/netns-cluster.md). Set before the shared config reads it.
process.env['ZERODROP_CLUSTER_PROVIDER'] = 'netns';

export default (await import('./vitest.kind.config.ts')).default;
