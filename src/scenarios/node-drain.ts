// What the node-drain scenarios share, whatever their load (node-drain-http.ts says why each part is
// there): slow-starting backends guarded by a PodDisruptionBudget, the node of the oldest drained
// through the Eviction API with refused evictions tried again as kubectl drain does, and the run
// ending once the node is drained.

import type { Expectation, LoadPhase, Scenario } from '../model/scenario.ts';
import type { Topology } from '../model/workload.ts';
import type { BackendProtocol, Profile } from '../profiles/profile.ts';
import { backendOptions, backendTopology, BACKEND } from './backend-topology.ts';
import { pick, type OptionsOf, type OptionSpecs } from './definition.ts';
import { streamExpectations, streamLoad, type StreamTraffic } from './stream-delete.ts';

/** The backends of a node drain: their budget and their slow start. */
export const nodeDrainBackendOptions = {
  replicas: { ...backendOptions.replicas, default: 2, nightly: 3 },
  minAvailable: { default: 1, nightly: 2, doc: 'PodDisruptionBudget minAvailable of the backends; 0 renders no budget at all' },
  startupSeconds: { default: 6, nightly: 90, doc: 'readiness probe initialDelaySeconds of the backends: how long a replacement takes to become ready' },
  preStopSeconds: backendOptions.preStopSeconds,
  graceSeconds: { ...backendOptions.graceSeconds, default: 5 },
  ...pick(backendOptions, ['programmingDelayMs']),
} satisfies OptionSpecs;

/** The drain: when, how it retries, how long it may wait, and the load kept running after it. */
export const nodeDrainOptions = {
  drainAtMs: { default: 1000, nightly: 10_000, doc: 'when the node is drained, after load starts' },
  retryMs: { default: 1000, nightly: 5000, doc: 'pause before an eviction the budget refused is tried again (kubectl drain: 5 s)' },
  drainTimeoutMs: { default: 120_000, nightly: 600_000, doc: 'how long the drain may wait for the budget before it gives up' },
  settleMs: { ...backendOptions.settleMs, default: 1000 },
} satisfies OptionSpecs;

export type NodeDrainValues = OptionsOf<typeof nodeDrainBackendOptions> & OptionsOf<typeof nodeDrainOptions>;

/** The backends become ready `seconds` after they start. */
function slowStart(topology: Topology, seconds: number): Topology {
  return {
    ...topology,
    workloads: topology.workloads.map((w) => (w.readinessProbe ? { ...w, readinessProbe: { ...w.readinessProbe, initialDelaySeconds: seconds } } : w)),
  };
}

/** What a node drain runs and judges: the load, what the backends serve it with, the expectations. */
export interface DrainTraffic {
  protocol?: BackendProtocol;
  loads: LoadPhase[];
  expectations: Expectation[];
}

export function buildNodeDrain(id: string, profile: Profile, o: NodeDrainValues, traffic: DrainTraffic): Scenario {
  const backends = backendTopology(profile, { ...o, ...(traffic.protocol ? { protocol: traffic.protocol } : {}) });
  return {
    id,
    profile: profile.name,
    topology: slowStart({ ...backends, disruptionBudgets: o.minAvailable > 0 ? [{ workload: BACKEND, minAvailable: o.minAvailable }] : [] }, o.startupSeconds),
    loads: traffic.loads,
    steps: [{ id: 'drain', when: { atMs: o.drainAtMs }, action: { kind: 'drain-node', workload: BACKEND, retryMs: o.retryMs, timeoutMs: o.drainTimeoutMs } }],
    end: { nodeDrained: 'drain', settleMs: o.settleMs },
    maxDurationMs: o.drainAtMs + o.drainTimeoutMs + o.replicas * o.graceSeconds * 1000 + o.settleMs + 10_000,
    expectations: traffic.expectations,
  };
}

/** A node drain under streams: every evicted pod is judged as a deleted one is (stream-delete.ts). */
export function buildStreamNodeDrain(id: string, profile: Profile, o: NodeDrainValues & StreamTraffic): Scenario {
  return buildNodeDrain(id, profile, o, { protocol: o.kind, loads: [streamLoad(o)], expectations: streamExpectations(o.kind, { workload: BACKEND }) });
}
