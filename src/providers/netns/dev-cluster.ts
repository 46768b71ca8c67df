// A netns cluster for working on the cluster itself: `up` starts one and keeps it until Ctrl-C (or
// SIGTERM), printing how to reach it; `down` removes every netns cluster whose run is gone.
//   node src/providers/netns/dev-cluster.ts up [--nodes N]
//   node src/providers/netns/dev-cluster.ts down

import { startNetnsCluster } from './cluster.ts';
import { cleanNetnsClusters } from './leftovers.ts';

const [command, ...rest] = process.argv.slice(2);
if (command === 'down') {
  const { removed, running } = await cleanNetnsClusters();
  console.log(`removed ${removed.length} cluster(s)${removed.length ? `: ${removed.join(', ')}` : ''}; running: ${running.join(', ') || 'none'}`);
} else if (command === 'up') {
  const nodesAt = rest.indexOf('--nodes');
  const nodes = nodesAt >= 0 ? Number(rest[nodesAt + 1]) : 2;
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  const cluster = await startNetnsCluster({ nodes, log: (l) => console.log(l), signal: stop.signal });
  console.log(`KUBECONFIG=${cluster.kubeconfigPath}`);
  console.log(`kubectl: ${cluster.kubectl.join(' ')}`);
  console.log('Ctrl-C removes the cluster');
  if (!stop.signal.aborted) await new Promise((resolve) => stop.signal.addEventListener('abort', resolve));
  await cluster[Symbol.asyncDispose]();
  console.log('removed');
} else {
  console.error('usage: dev-cluster.ts up [--nodes N] | down');
  process.exit(2);
}
