// seed 005 (kubernetes-sigs/gateway-api#5014) asks what draining means for gRPC streams when the
// dataplane terminates. gRPC through two gateway pods, h2c with prior knowledge on both sides, to
// reference gRPC backends that are never disturbed: whatever breaks, the gateway broke. A draining
// gateway says GOAWAY to its clients, carries every call it holds to its end, keeps accepting until
// it is deprogrammed, and leaves within its drain bounds.
//
// The server streams are bounded as in the gateway WebSocket and SSE scenarios (gateway-streams.ts):
// each lasts half the time from the last node's deprogramming to the drain timeout, so every
// stream the pod was given can end on its own before a correct drain must cut it.

import { defineScenario, pick } from './definition.ts';
import { drainExpectations, GATEWAY, gatewayTopology } from './gateway-http-topology.ts';
import { gatewayStreamOptions, streamLengthMs } from './gateway-streams.ts';

const gatewayStreamDeleteOptions = gatewayStreamOptions.delete;

export default defineScenario({
  id: 'gateway-delete-grpc',
  description:
    "gRPC over cleartext HTTP/2 (grpc-js channels, retries off) through two gateway pods behind a Service to reference gRPC backends: unary calls on every channel, and bounded server-streaming calls of sequence-numbered messages (each lasts half the time from the last node's deprogramming to the gateway's drain timeout; a new one replaces each that ends); one gateway pod is deleted. Every unary call must succeed; every stream must run to its last message, none cut (UNAVAILABLE, INTERNAL, refused) nor ended early, no message lost or duplicated; the gateway pod must send GOAWAY and later calls be served by the other; it must keep accepting until deprogrammed and exit within its drain bounds, not by SIGKILL.",
  features: ['gateway', 'grpc', 'http2'],
  seeds: ['005'],
  role: 'gateway',
  knownFailures: {
    nginx:
      "http2Goaway: nginx 1.22 ends an HTTP/2 connection (at SIGQUIT, and at keepalive_time) with a single GOAWAY naming the last stream it took, no shutdown notice before it (RFC 9113 section 6.8), so a call its client sent meanwhile is refused (REFUSED_STREAM; with retries off, UNAVAILABLE): measured, a call refused in 3 of 7 runs with keepalive_time (on the pod not deleted) and in 1 of 9 with it left out (at SIGQUIT); every stream otherwise carried to its end",
    caddy:
      "grpcStreamsComplete: Caddy 2.6 serves h2c through x/net/http2/h2c, whose connections its graceful stop neither waits for nor closes gracefully (https://github.com/golang/go/issues/26682): it exits within 0.2 s of SIGTERM and a stream still in flight on the pod is cut (UNAVAILABLE: Connection dropped), 1 or 2 of 17 to 18 streams in each of 4 runs; and http2Goaway: the GOAWAY of its draining marker (Connection: close, which Go's HTTP/2 server turns into one) names the last stream taken, with no notice before it",
  },
  options: {
    ...pick(gatewayStreamDeleteOptions, ['gateways', 'backends', 'programmingDelayMs', 'graceSeconds']),
    channels: { default: 4, cluster: 12, nightly: 20, doc: 'gRPC channels, each with a connection of its own' },
    ratePerChannel: { default: 20, cluster: 7, doc: 'unary calls per second on each channel, one at a time' },
    requestMs: { default: 10, doc: 'server time of each unary call' },
    streams: { default: 8, cluster: 12, nightly: 50, doc: 'concurrent server-streaming calls (round robin over the channels; each ended one is followed by a new one)' },
    messageIntervalMs: { default: 20, doc: 'time between two messages of a stream' },
    ...pick(gatewayStreamDeleteOptions, ['streamMs']),
    deadlineMarginMs: { default: 2000, doc: "each call's deadline beyond its expected length" },
    ...pick(gatewayStreamDeleteOptions, ['deleteAtMs', 'settleMs', 'idleExitMs']),
  },
  build: (profile, o) => {
    const setup = gatewayTopology(profile, { ...o, protocol: 'grpc', backendProtocol: 'grpc', sessions: o.channels });
    const streamMs = streamLengthMs(setup, o);
    const deleteAtMs = streamMs + o.deleteAtMs;
    return {
      id: 'gateway-delete-grpc',
      profile: profile.name,
      topology: setup.topology,
      loads: [
        {
          id: 'grpc',
          startMs: 0,
          spec: {
            kind: 'grpc',
            service: GATEWAY,
            channels: o.channels,
            unaryRatePerChannel: o.ratePerChannel,
            unaryMs: o.requestMs,
            streams: o.streams,
            messagesPerStream: Math.max(1, Math.round(streamMs / o.messageIntervalMs)),
            messageIntervalMs: o.messageIntervalMs,
            timeoutMs: o.deadlineMarginMs,
            spreadFirstStreams: true,
          },
        },
      ],
      steps: [{ id: 'delete', when: { atMs: deleteAtMs }, action: { kind: 'delete-pod', workload: GATEWAY, pick: 'oldest' } }],
      end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
      maxDurationMs: deleteAtMs + setup.graceSeconds * 1000 + o.settleMs + 15_000,
      expectations: [
        { assert: 'noFailedRequests', load: 'grpc' },
        { assert: 'grpcStreamsComplete', load: 'grpc', pod: { step: 'delete' }, toEnd: true },
        { assert: 'http2Goaway', load: 'grpc', pod: { step: 'delete' }, announced: true },
        ...drainExpectations({ step: 'delete' }, setup, o.idleExitMs),
      ],
    };
  },
});
