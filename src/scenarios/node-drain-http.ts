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

import type { Topology } from '../model/workload.ts';
import { backendOptions, backendTopology, BACKEND, inFlightLoad } from './backend-topology.ts';
import { defineScenario, pick } from './definition.ts';

/** The backends become ready `seconds` after they start. */
function slowStart(topology: Topology, seconds: number): Topology {
  return {
    ...topology,
    workloads: topology.workloads.map((w) => (w.readinessProbe ? { ...w, readinessProbe: { ...w.readinessProbe, initialDelaySeconds: seconds } } : w)),
  };
}

export default defineScenario({
  id: 'node-drain-http',
  description:
    'Backends behind a Service under keep-alive HTTP load, guarded by a PodDisruptionBudget (minAvailable); the node hosting the oldest backend is cordoned and drained through the Eviction API, evictions the budget refuses retried as kubectl drain does. No request may fail and no evicted pod may be killed.',
  features: ['http', 'http-keepalive', 'backend', 'node-drain'],
  seeds: ['004'],
  role: 'backend',
  tolerates: {
    'mutant-refuse-after-sigterm':
      'a preStop sleep outlasts deprogramming, so no new connection reaches the pod after SIGTERM (backend-sigterm-keeps-accepting catches it)',
  },
  options: {
    replicas: { ...backendOptions.replicas, default: 2, nightly: 3 },
    minAvailable: { default: 1, nightly: 2, doc: 'PodDisruptionBudget minAvailable of the backends; 0 renders no budget at all' },
    startupSeconds: { default: 6, nightly: 90, doc: 'readiness probe initialDelaySeconds of the backends: how long a replacement takes to become ready' },
    preStopSeconds: backendOptions.preStopSeconds,
    graceSeconds: { ...backendOptions.graceSeconds, default: 4 },
    ...pick(backendOptions, ['programmingDelayMs', 'connections', 'requestMs']),
    drainAtMs: { default: 1000, nightly: 10_000, doc: 'when the node is drained, after load starts' },
    retryMs: { default: 1000, nightly: 5000, doc: 'pause before an eviction the budget refused is tried again (kubectl drain: 5 s)' },
    drainTimeoutMs: { default: 120_000, nightly: 600_000, doc: 'how long the drain may wait for the budget before it gives up' },
    settleMs: { ...backendOptions.settleMs, default: 1000 },
  },
  build: (profile, o) => ({
    id: 'node-drain-http',
    profile: profile.name,
    topology: slowStart(
      { ...backendTopology(profile, o), disruptionBudgets: o.minAvailable > 0 ? [{ workload: BACKEND, minAvailable: o.minAvailable }] : [] },
      o.startupSeconds,
    ),
    loads: [{ id: 'http', startMs: 0, spec: inFlightLoad(o) }],
    steps: [{ id: 'drain', when: { atMs: o.drainAtMs }, action: { kind: 'drain-node', workload: BACKEND, retryMs: o.retryMs, timeoutMs: o.drainTimeoutMs } }],
    end: { nodeDrained: 'drain', settleMs: o.settleMs },
    maxDurationMs: o.drainAtMs + o.drainTimeoutMs + o.replicas * o.graceSeconds * 1000 + o.settleMs + 10_000,
    expectations: [
      { assert: 'noFailedRequests' },
      { assert: 'notKilled', pod: { workload: BACKEND } },
    ],
  }),
});
