// What the gateway scenarios of long-lived streams share (WebSocket, SSE): bounded streams through
// two gateway pods to reference stream backends, new ones starting all through the run, and one
// gateway pod deleted. The backends are never disturbed, so a stream that breaks was broken by the
// gateway's drain. The judgement is the backend stream scenarios' (streamsIntact, placed on the
// gateway pod the stream went through) plus the gateway drain bounds of the HTTP gateway scenarios.
//
// Why bounded: a stream longer than the drain timeout must be cut by a gateway that keeps its
// promise to leave, so an unbounded stream cannot tell a correct drain from a cut. Each stream here
// lasts half the time from the last node's deprogramming to the drain timeout, so every stream
// that was sent to the pod before it was deprogrammed can end on its own within the drain, and
// those opened shortly before the delete are still in flight at the stop signal.

import type { StreamLoadSpec } from '../model/load.ts';
import type { Scenario } from '../model/scenario.ts';
import type { Profile } from '../profiles/profile.ts';
import { pick, type OptionsOf, type OptionSpecs } from './definition.ts';
import { drainExpectations, GATEWAY, gatewayOptions, gatewayTopology, type GatewaySetup } from './gateway-http-topology.ts';

/** The options of every gateway stream scenario. */
export const gatewayStreamDeleteOptions = {
  ...pick(gatewayOptions, ['gateways', 'backends', 'programmingDelayMs', 'graceSeconds']),
  streams: { default: 8, nightly: 50, doc: 'concurrent bounded streams; each one that ends is replaced by a new one' },
  ratePerStream: { default: 20, doc: 'messages (WebSocket) or events (SSE) per second on each stream' },
  streamMs: { default: 0, doc: "how long each stream lasts; 0: half the time from the last node's deprogramming to the gateway's drain timeout" },
  stallMs: { default: 1000, doc: 'an outstanding message or the next event missing for this long is a stall' },
  deleteAtMs: {
    ...gatewayOptions.deleteAtMs,
    doc: 'when the gateway pod is deleted, after the first streams have all started (one stream length after load starts)',
  },
  ...pick(gatewayOptions, ['settleMs', 'idleExitMs']),
} satisfies OptionSpecs;
export type GatewayStreamDeleteOptions = OptionsOf<typeof gatewayStreamDeleteOptions>;

/** The length of each stream: given, or derived from the drain bounds the profile promises. */
export function streamLengthMs(setup: GatewaySetup, o: Pick<GatewayStreamDeleteOptions, 'streamMs'>): number {
  if (o.streamMs > 0) return o.streamMs;
  return Math.max(100, Math.round((setup.drainTimeoutMs - setup.programmingDelayMs - setup.programmingSpreadMs) / 2));
}

export function buildGatewayStreamDelete(id: string, kind: Extract<StreamLoadSpec['kind'], 'websocket' | 'sse'>, profile: Profile, o: GatewayStreamDeleteOptions): Scenario {
  const setup = gatewayTopology(profile, { ...o, sessions: o.streams, backendProtocol: kind });
  const streamMs = streamLengthMs(setup, o);
  const messagesPerStream = Math.max(1, Math.round((streamMs * o.ratePerStream) / 1000));
  const deleteAtMs = streamMs + o.deleteAtMs;
  return {
    id,
    profile: profile.name,
    topology: setup.topology,
    loads: [
      {
        id: 'streams',
        startMs: 0,
        spec: { kind, service: GATEWAY, streams: o.streams, ratePerStream: o.ratePerStream, stallMs: o.stallMs, reopen: false, messagesPerStream },
      },
    ],
    steps: [{ id: 'delete', when: { atMs: deleteAtMs }, action: { kind: 'delete-pod', workload: GATEWAY, pick: 'oldest' } }],
    end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
    maxDurationMs: deleteAtMs + setup.graceSeconds * 1000 + o.settleMs + 15_000,
    expectations: [{ assert: 'streamsIntact', load: 'streams', pod: { step: 'delete' }, toEnd: true }, ...drainExpectations({ step: 'delete' }, setup, o.idleExitMs)],
  };
}
