// What the backend scenarios of long-lived streams share (TCP, WebSocket, SSE, gRPC): streams
// spread over the backends, backends stopped while they run (a delete here; a rollout in
// stream-rollout.ts, a node drain in node-drain.ts), and the same judgement whatever the protocol:
// every stream runs to its end or is closed by its backend the protocol's proper way, nothing lost,
// every reconnect served (streamsIntact; for gRPC, grpcStreamsComplete with every unary call served
// and GOAWAY said), and the pod exits on its own (notKilled).

import type { StreamLoadSpec } from '../model/load.ts';
import type { Expectation, LoadPhase, PodRef, Scenario } from '../model/scenario.ts';
import type { Profile } from '../profiles/profile.ts';
import { backendOptions, backendTopology, BACKEND } from './backend-topology.ts';
import { pick, type OptionsOf, type OptionSpecs } from './definition.ts';

/** The load options of the TCP, WebSocket and SSE stream scenarios. */
export const streamLoadOptions = {
  streams: { default: 4, cluster: 12, nightly: 50, doc: 'concurrent long-lived streams (spread round robin over the backends; at random on a cluster)' },
  ratePerStream: { default: 50, doc: 'messages per second on each stream' },
  stallMs: { default: 1000, doc: 'an outstanding message with no echo for this long is a stall' },
} satisfies OptionSpecs;

/** The same, in the words of an event stream. */
export const sseLoadOptions = {
  ...streamLoadOptions,
  ratePerStream: { ...streamLoadOptions.ratePerStream, doc: 'events per second on each stream' },
  stallMs: { ...streamLoadOptions.stallMs, doc: 'no event for this long is a stall' },
} satisfies OptionSpecs;

/** The load options of the gRPC scenarios: unary calls and server streams on the same channels. */
export const grpcLoadOptions = {
  // A channel is one connection, so on a cluster kube-proxy's random choice is per channel: 12 of
  // them, at a third of the rate each (about the same calls per second in all).
  channels: { default: 4, cluster: 12, nightly: 20, doc: 'gRPC channels, each with a connection of its own' },
  ratePerChannel: { default: 20, cluster: 7, doc: 'unary calls per second on each channel, one at a time' },
  requestMs: { default: 10, doc: 'server time of each unary call' },
  streams: { default: 4, cluster: 12, nightly: 50, doc: 'concurrent server-streaming calls (round robin over the channels; each ended one is followed by a new one)' },
  messagesPerStream: {
    default: 100,
    nightly: 1000,
    doc: 'messages each stream asks for: by default a stream lasts 2 s, the preStop, so the one open on a pod at its delete ends between the delete and the SIGTERM, and the next, on the same connection, is in flight when the drain ends streams early (500 ms after SIGTERM)',
  },
  messageIntervalMs: { default: 20, doc: 'time between two messages of a stream' },
  deadlineMarginMs: { default: 2000, doc: "each call's deadline beyond its expected length" },
} satisfies OptionSpecs;

/** The backends of every backend stream scenario (the rollout's too). */
export const streamBackendOptions = {
  replicas: { ...backendOptions.replicas, default: 2 },
  ...pick(backendOptions, ['preStopSeconds', 'graceSeconds', 'programmingDelayMs']),
} satisfies OptionSpecs;

export const streamOptions = { ...streamBackendOptions, ...streamLoadOptions, settleMs: backendOptions.settleMs } satisfies OptionSpecs;

export const streamDeleteOptions = { ...streamOptions, deleteAtMs: backendOptions.deleteAtMs } satisfies OptionSpecs;

/** The backends and the load of the gRPC scenarios (their settle time and chaos are each's own). */
export const grpcOptions = { ...streamBackendOptions, ...grpcLoadOptions } satisfies OptionSpecs;

/** The option values a stream builder takes besides its chaos's: the backends, the settle time, the load. */
export type StreamScenarioOptions = OptionsOf<typeof streamBackendOptions> & { settleMs: number } & StreamTraffic;

/** A stream load's kind with its option values: the gRPC load takes options of its own. */
export type StreamTraffic = ({ kind: StreamLoadSpec['kind'] } & OptionsOf<typeof streamLoadOptions>) | ({ kind: 'grpc' } & OptionsOf<typeof grpcLoadOptions>);


/** The load: streams that reconnect when their backend closes them, so every old pod's drain meets some. */
export function streamLoad(t: StreamTraffic): LoadPhase {
  if (t.kind === 'grpc') {
    return {
      id: 'grpc',
      startMs: 0,
      spec: {
        kind: 'grpc',
        service: BACKEND,
        channels: t.channels,
        unaryRatePerChannel: t.ratePerChannel,
        unaryMs: t.requestMs,
        streams: t.streams,
        messagesPerStream: t.messagesPerStream,
        messageIntervalMs: t.messageIntervalMs,
        timeoutMs: t.deadlineMarginMs,
      },
    };
  }
  return { id: 'streams', startMs: 0, spec: { kind: t.kind, service: BACKEND, streams: t.streams, ratePerStream: t.ratePerStream, stallMs: t.stallMs, reopen: true } };
}

/** The judgement of the streams on the pods `pod` names, and of the pods' exit. */
export function streamExpectations(kind: StreamTraffic['kind'], pod: PodRef): Expectation[] {
  const streams: Expectation[] =
    kind === 'grpc'
      ? [
          { assert: 'noFailedRequests', load: 'grpc' },
          { assert: 'grpcStreamsComplete', load: 'grpc', pod },
          { assert: 'http2Goaway', load: 'grpc', pod },
        ]
      : [{ assert: 'streamsIntact', load: 'streams', pod }];
  return [...streams, { assert: 'notKilled', pod }];
}

export function buildStreamDelete(id: string, profile: Profile, o: StreamScenarioOptions & { deleteAtMs: number }): Scenario {
  return {
    id,
    profile: profile.name,
    topology: backendTopology(profile, { ...o, protocol: o.kind }),
    loads: [streamLoad(o)],
    steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: BACKEND, pick: 'oldest' } }],
    end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
    maxDurationMs: o.deleteAtMs + o.graceSeconds * 1000 + o.settleMs + 15_000,
    expectations: streamExpectations(o.kind, { step: 'delete' }),
  };
}
