// seed 005 (kubernetes-sigs/gateway-api#5014) asks what draining means for long-lived gRPC streams
// while a backend terminates. The answer this scenario holds any system to: a unary call never fails; a server
// stream either runs to its end or is ended by the draining pod with OK between two messages; no
// message of a stream is lost or duplicated; the pod says GOAWAY so that new calls go elsewhere.

import { backendOptions, backendTopology, BACKEND } from './backend-topology.ts';
import { defineScenario, pick } from './definition.ts';

export default defineScenario({
  id: 'backend-delete-grpc',
  description:
    'gRPC over cleartext HTTP/2 (grpc-js channels, retries off): unary calls on every channel and server-streaming calls of sequence-numbered messages run through the Service while one of the backends is deleted (preStop sleep, grace period). Every unary call must succeed; every stream must run to its last message or be ended early with OK, at a message boundary, by the draining pod, with no message lost or duplicated; the pod must send GOAWAY and later calls be served by another pod; it must exit on its own, not at SIGKILL.',
  features: ['grpc', 'http2', 'backend'],
  seeds: ['005'],
  role: 'backend',
  tolerates: {
    'mutant-refuse-after-sigterm':
      'a preStop sleep outlasts deprogramming, so no new connection reaches the pod after SIGTERM (backend-sigterm-keeps-accepting catches it)',
  },
  options: {
    replicas: { ...backendOptions.replicas, default: 2 },
    ...pick(backendOptions, ['preStopSeconds', 'graceSeconds', 'programmingDelayMs']),
    channels: { default: 4, nightly: 20, doc: 'gRPC channels, each with a connection of its own' },
    ratePerChannel: { default: 20, doc: 'unary calls per second on each channel, one at a time' },
    requestMs: { default: 10, doc: 'server time of each unary call' },
    streams: { default: 4, nightly: 50, doc: 'concurrent server-streaming calls (round robin over the channels; each ended one is followed by a new one)' },
    messagesPerStream: {
      default: 75,
      nightly: 1000,
      doc: 'messages each stream asks for: by default a stream lasts 1.5 s, so the one open on the pod at its delete ends between the delete and the SIGTERM, and the next, on the same connection, is in flight when the drain ends streams early (500 ms after SIGTERM)',
    },
    messageIntervalMs: { default: 20, doc: 'time between two messages of a stream' },
    deadlineMarginMs: { default: 2000, doc: "each call's deadline beyond its expected length" },
    ...pick(backendOptions, ['deleteAtMs', 'settleMs']),
  },
  build: (profile, o) => ({
    id: 'backend-delete-grpc',
    profile: profile.name,
    topology: backendTopology(profile, {
      replicas: o.replicas,
      preStopSeconds: o.preStopSeconds,
      graceSeconds: o.graceSeconds,
      programmingDelayMs: o.programmingDelayMs,
      protocol: 'grpc',
    }),
    loads: [
      {
        id: 'grpc',
        startMs: 0,
        spec: {
          kind: 'grpc',
          service: BACKEND,
          channels: o.channels,
          unaryRatePerChannel: o.ratePerChannel,
          unaryMs: o.requestMs,
          streams: o.streams,
          messagesPerStream: o.messagesPerStream,
          messageIntervalMs: o.messageIntervalMs,
          timeoutMs: o.deadlineMarginMs,
        },
      },
    ],
    steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: BACKEND, pick: 'oldest' } }],
    end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
    maxDurationMs: o.deleteAtMs + o.graceSeconds * 1000 + o.settleMs + 15_000,
    expectations: [
      { assert: 'noFailedRequests', load: 'grpc' },
      { assert: 'grpcStreamsComplete', load: 'grpc', pod: { step: 'delete' } },
      { assert: 'http2Goaway', load: 'grpc', pod: { step: 'delete' } },
      { assert: 'notKilled', pod: { step: 'delete' } },
    ],
  }),
});
