import { backendOptions, backendTopology, BACKEND } from './backend-topology.ts';
import { defineScenario, pick } from './definition.ts';
import { streamDeleteTolerates, streamOptions } from './stream-delete.ts';

export default defineScenario({
  id: 'backend-rollout-websocket',
  description:
    'Rollout restart of the backends (maxSurge 1, maxUnavailable 0) under long-lived WebSocket echo streams. Every old pod must close its WebSockets with 1001 (going away), every message echoed, and a stream it closed may be closed again by the next old pod it reconnects to: every reconnect must succeed and every stream end properly. No old pod may be SIGKILLed, and the rollout must finish within its bound.',
  features: ['websocket', 'backend', 'rollout'],
  seeds: ['005'],
  role: 'backend',
  tolerates: streamDeleteTolerates,
  options: { ...streamOptions, ...pick(backendOptions, ['restartAtMs', 'rolloutMaxMs']) },
  build: (profile, o) => ({
    id: 'backend-rollout-websocket',
    profile: profile.name,
    topology: backendTopology(profile, { ...o, maxSurge: 1, maxUnavailable: 0, protocol: 'websocket' }),
    loads: [
      {
        id: 'streams',
        startMs: 0,
        spec: { kind: 'websocket', service: BACKEND, streams: o.streams, ratePerStream: o.ratePerStream, stallMs: o.stallMs, reopen: true },
      },
    ],
    steps: [{ id: 'restart', when: { atMs: o.restartAtMs }, action: { kind: 'rollout-restart', workload: BACKEND } }],
    end: { rolloutComplete: BACKEND, settleMs: o.settleMs },
    maxDurationMs: o.restartAtMs + o.rolloutMaxMs + o.graceSeconds * 1000 + o.settleMs + 10_000,
    expectations: [
      { assert: 'streamsIntact', load: 'streams', pod: { workload: BACKEND } },
      { assert: 'notKilled', pod: { workload: BACKEND } },
      { assert: 'rolloutCompletesWithin', workload: BACKEND, maxMs: o.rolloutMaxMs },
    ],
  }),
});
