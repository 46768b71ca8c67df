// A rollout restart of the backends (maxSurge 1, maxUnavailable 0) under a stream load of any kind
// (stream-delete.ts): every old pod meets streams at its drain, and a stream it closed may reconnect
// to the next old pod and be closed again, so reconnects are served through the whole rollout.

import type { Scenario } from '../model/scenario.ts';
import type { Profile } from '../profiles/profile.ts';
import { backendOptions, backendTopology, BACKEND } from './backend-topology.ts';
import { pick, type OptionsOf } from './definition.ts';
import { streamExpectations, streamLoad, type StreamScenarioOptions } from './stream-delete.ts';

/** When the rollout starts and how long it may take. */
export const rolloutOptions = pick(backendOptions, ['restartAtMs', 'rolloutMaxMs']);

export function buildStreamRollout(id: string, profile: Profile, o: StreamScenarioOptions & OptionsOf<typeof rolloutOptions>): Scenario {
  return {
    id,
    profile: profile.name,
    topology: backendTopology(profile, { ...o, maxSurge: 1, maxUnavailable: 0, protocol: o.kind }),
    loads: [streamLoad(o)],
    steps: [{ id: 'restart', when: { atMs: o.restartAtMs }, action: { kind: 'rollout-restart', workload: BACKEND } }],
    end: { rolloutComplete: BACKEND, settleMs: o.settleMs },
    maxDurationMs: o.restartAtMs + o.rolloutMaxMs + o.graceSeconds * 1000 + o.settleMs + 10_000,
    expectations: [...streamExpectations(o.kind, { workload: BACKEND }), { assert: 'rolloutCompletesWithin', workload: BACKEND, maxMs: o.rolloutMaxMs }],
  };
}
