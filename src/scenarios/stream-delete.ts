// What the backend scenarios of long-lived streams share (TCP, WebSocket, SSE): streams
// spread over the backends, one backend deleted while they run, and the same judgement whatever
// the protocol: every stream runs to its end or is closed by its backend the protocol's proper way,
// nothing lost, every reconnect served (streamsIntact), and the pod exits on its own (notKilled).

import type { StreamLoadSpec } from '../model/load.ts';
import type { Scenario } from '../model/scenario.ts';
import type { Profile } from '../profiles/profile.ts';
import { backendOptions, backendTopology, BACKEND } from './backend-topology.ts';
import { pick, type OptionsOf, type OptionSpecs } from './definition.ts';

/** The options of every backend stream scenario (the rollout's too). */
export const streamOptions = {
  replicas: { ...backendOptions.replicas, default: 2 },
  ...pick(backendOptions, ['preStopSeconds', 'graceSeconds', 'programmingDelayMs']),
  streams: { default: 4, nightly: 50, doc: 'concurrent long-lived streams (spread round robin over the backends)' },
  ratePerStream: { default: 50, doc: 'messages per second on each stream' },
  stallMs: { default: 1000, doc: 'an outstanding message with no echo for this long is a stall' },
  settleMs: backendOptions.settleMs,
} satisfies OptionSpecs;

export const streamDeleteOptions = { ...streamOptions, deleteAtMs: backendOptions.deleteAtMs } satisfies OptionSpecs;
export type StreamDeleteOptions = OptionsOf<typeof streamDeleteOptions>;

/** Why the stream scenarios pass the mutant that stops listening at SIGTERM. */
export const streamDeleteTolerates = {
  'mutant-refuse-after-sigterm':
    'a preStop sleep outlasts deprogramming, so no new connection reaches the pod after SIGTERM (backend-sigterm-keeps-accepting catches it)',
};

export function buildStreamDelete(id: string, kind: StreamLoadSpec['kind'], profile: Profile, o: StreamDeleteOptions): Scenario {
  return {
    id,
    profile: profile.name,
    topology: backendTopology(profile, {
      replicas: o.replicas,
      preStopSeconds: o.preStopSeconds,
      graceSeconds: o.graceSeconds,
      programmingDelayMs: o.programmingDelayMs,
      protocol: kind,
    }),
    loads: [
      {
        id: 'streams',
        startMs: 0,
        spec: { kind, service: BACKEND, streams: o.streams, ratePerStream: o.ratePerStream, stallMs: o.stallMs, reopen: true },
      },
    ],
    steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: BACKEND, pick: 'oldest' } }],
    end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
    maxDurationMs: o.deleteAtMs + o.graceSeconds * 1000 + o.settleMs + 15_000,
    expectations: [
      { assert: 'streamsIntact', load: 'streams', pod: { step: 'delete' } },
      { assert: 'notKilled', pod: { step: 'delete' } },
    ],
  };
}
