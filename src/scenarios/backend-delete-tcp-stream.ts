import { backendOptionDocs, backendTopology, BACKEND, pick } from './backend-topology.ts';
import { defineScenario } from './definition.ts';

export default defineScenario({
  id: 'backend-delete-tcp-stream',
  description:
    'Long-lived TCP echo streams (sequence-numbered messages at a fixed rate) run through the Service while one of the backends is deleted (preStop sleep, grace period). Each stream on that backend must stay intact until the backend closes it gracefully: the backend announces its drain, echoes every message sent before its close, and closes; no reset, no stall, no unannounced close. Streams it closed reconnect to the other backend. The backend must exit on its own, not at SIGKILL.',
  features: ['tcp-stream', 'backend'],
  seeds: ['000', '003'],
  role: 'backend',
  tolerates: {
    'mutant-refuse-after-sigterm':
      'a preStop sleep outlasts deprogramming, so no new connection reaches the pod after SIGTERM (backend-sigterm-keeps-accepting catches it)',
  },
  defaults: {
    replicas: 2,
    preStopSeconds: 1,
    graceSeconds: 5,
    programmingDelayMs: 200,
    streams: 4,
    ratePerStream: 50,
    stallMs: 1000,
    deleteAtMs: 1000,
    settleMs: 500,
  },
  nightly: { preStopSeconds: 15, graceSeconds: 60, programmingDelayMs: 5000, streams: 50, deleteAtMs: 10_000, settleMs: 5000 },
  optionDocs: {
    ...pick(backendOptionDocs, ['replicas', 'preStopSeconds', 'graceSeconds', 'programmingDelayMs', 'settleMs']),
    streams: 'concurrent long-lived streams (spread round robin over the backends)',
    ratePerStream: 'messages per second on each stream',
    stallMs: 'an outstanding message with no echo for this long is a stall',
    deleteAtMs: 'when the pod is deleted, after load starts',
  },
  build: (profile, o) => ({
    id: 'backend-delete-tcp-stream',
    profile: profile.name,
    topology: backendTopology(profile, {
      replicas: o.replicas,
      preStopSeconds: o.preStopSeconds,
      graceSeconds: o.graceSeconds,
      programmingDelayMs: o.programmingDelayMs,
      protocol: 'tcp-stream',
    }),
    loads: [
      {
        id: 'streams',
        startMs: 0,
        spec: { kind: 'tcp-stream', service: BACKEND, streams: o.streams, ratePerStream: o.ratePerStream, stallMs: o.stallMs, reopen: true },
      },
    ],
    steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: BACKEND, pick: 'oldest' } }],
    end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
    maxDurationMs: o.deleteAtMs + o.graceSeconds * 1000 + o.settleMs + 15_000,
    expectations: [
      { assert: 'streamsIntact', load: 'streams', pod: { step: 'delete' } },
      { assert: 'notKilled', pod: { step: 'delete' } },
    ],
  }),
});
