// A node drain under load (seed 004: "nodes drained during cluster upgrades"): `kubectl drain` of
// the node hosting the backends evicts them through the Eviction API, which honours the
// PodDisruptionBudget: with `minAvailable` pods guaranteed, an eviction that would leave fewer
// available is refused (429) and tried again once a replacement is ready elsewhere
// (https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/). Without a budget, or
// with a single replica, every pod of the node goes at once and requests fail until a replacement
// is ready: the failing twin is `--set replicas=1 --set minAvailable=0`.
// The backends start slowly: readiness after `startupSeconds`, longer than their grace period (a
// JVM-like app). A terminating pod keeps serving while no other endpoint is ready (kube-proxy's
// fallback to serving terminating endpoints), but only until its grace period ends: evicted before a
// replacement is ready, it leaves a gap the load sees. That gap is what the budget prevents. Providers that may cordon and drain
// nodes run it: the local provider (modelled nodes, src/providers/local/nodes.ts) and a kind cluster
// zerodrop created; others skip it with the reason (src/providers/support.ts).

import { backendOptions, BACKEND, inFlightLoad, REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';
import { defineScenario, pick } from './definition.ts';
import { buildNodeDrain, nodeDrainBackendOptions, nodeDrainOptions } from './node-drain.ts';

export default defineScenario({
  id: 'node-drain-http',
  description:
    'Backends behind a Service under keep-alive HTTP load, guarded by a PodDisruptionBudget (minAvailable); the node hosting the oldest backend is cordoned and drained through the Eviction API, evictions the budget refuses retried as kubectl drain does. No request may fail and no evicted pod may be killed.',
  features: ['http', 'http-keepalive', 'backend', 'node-drain'],
  seeds: ['004'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: { ...nodeDrainBackendOptions, ...pick(backendOptions, ['connections', 'requestMs']), ...nodeDrainOptions },
  build: (profile, o) =>
    buildNodeDrain('node-drain-http', profile, o, {
      loads: [{ id: 'http', startMs: 0, spec: inFlightLoad(o) }],
      expectations: [
        { assert: 'noFailedRequests' },
        { assert: 'notKilled', pod: { workload: BACKEND } },
      ],
    }),
});
