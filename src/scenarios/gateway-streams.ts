// What the gateway scenarios of long-lived streams share (WebSocket, SSE, gRPC): bounded streams through
// the gateway pods to reference stream backends, new ones starting all through the run, and the
// gateway disrupted one of three ways (GatewayStreamDisruption): one pod deleted, the workload
// rolled out, or scaled down. The backends are never disturbed, so a stream that breaks was broken
// by a gateway's drain. The judgement is the backend stream scenarios' (streamsIntact, or for gRPC
// every call served, every stream complete and GOAWAY said, placed on the gateway pod the stream
// went through) plus the gateway drain bounds of the HTTP gateway scenarios, each on every gateway
// pod the disruption stopped.
//
// Why bounded: a stream longer than the drain timeout must be cut by a gateway that keeps its
// promise to leave, so an unbounded stream cannot tell a correct drain from a cut. Each stream here
// lasts half the time from the last node's deprogramming to the drain timeout, so every stream
// that was sent to a pod before it was deprogrammed can end on its own within the drain, and
// those opened shortly before its delete are still in flight at its stop signal. The stream load
// runs until the scenario ends (LoadPhase), so through a rollout streams keep ending and being
// replaced, and every old pod meets streams opened just before its own delete.

import type { StreamLoadSpec } from '../model/load.ts';
import type { ChaosStep, EndCondition, Expectation, LoadPhase, PodRef, Scenario } from '../model/scenario.ts';
import type { Profile } from '../profiles/profile.ts';
import { pick, type OptionsOf, type OptionSpecs } from './definition.ts';
import { drainExpectations, GATEWAY, gatewayOptions, gatewayTopology, type GatewaySetup } from './gateway-http-topology.ts';

const streamOptions = {
  streams: { default: 8, cluster: 12, nightly: 50, doc: 'concurrent bounded streams; each one that ends is replaced by a new one' },
  ratePerStream: { default: 20, doc: 'messages (WebSocket) or events (SSE) per second on each stream' },
  streamMs: { default: 0, doc: "how long each stream lasts; 0: half the time from the last node's deprogramming to the gateway's drain timeout" },
  stallMs: { default: 1000, doc: 'an outstanding message or the next event missing for this long is a stall' },
} satisfies OptionSpecs;

/** The gRPC load's options: unary calls beside the bounded server streams, on channels of their own. */
const grpcOptions = {
  channels: { default: 4, cluster: 12, nightly: 20, doc: 'gRPC channels, each with a connection of its own' },
  ratePerChannel: { default: 20, cluster: 7, doc: 'unary calls per second on each channel, one at a time' },
  requestMs: { default: 10, doc: 'server time of each unary call' },
  streams: { default: 8, cluster: 12, nightly: 50, doc: 'concurrent server-streaming calls (round robin over the channels; each ended one is followed by a new one)' },
  messageIntervalMs: { default: 20, doc: 'time between two messages of a stream' },
  streamMs: streamOptions.streamMs,
  deadlineMarginMs: { default: 2000, doc: "each call's deadline beyond its expected length" },
} satisfies OptionSpecs;

const AFTER_FIRST_STREAMS = 'after the first streams have all started (one stream length after load starts)';

/** A load's options within each disruption's: the gateways first, the load, then when and how long. */
function withDisruptions<L extends OptionSpecs>(load: L) {
  return {
    delete: {
      ...pick(gatewayOptions, ['gateways', 'backends', 'programmingDelayMs', 'graceSeconds']),
      ...load,
      deleteAtMs: { ...gatewayOptions.deleteAtMs, doc: `when the gateway pod is deleted, ${AFTER_FIRST_STREAMS}` },
      ...pick(gatewayOptions, ['settleMs', 'idleExitMs']),
    },
    rollout: {
      ...pick(gatewayOptions, ['gateways', 'backends', 'programmingDelayMs', 'graceSeconds']),
      ...load,
      rolloutAtMs: { default: 1000, nightly: 10_000, doc: `when the rollout restart starts, ${AFTER_FIRST_STREAMS}` },
      ...pick(gatewayOptions, ['settleMs', 'idleExitMs']),
    },
    'scale-down': {
      gateways: { default: 3, doc: gatewayOptions.gateways.doc },
      replicasAfter: { default: 1, doc: 'gateway replicas after the scale down' },
      ...pick(gatewayOptions, ['backends', 'programmingDelayMs', 'graceSeconds']),
      ...load,
      scaleAtMs: { default: 1000, nightly: 10_000, doc: `when the gateway is scaled down, ${AFTER_FIRST_STREAMS}` },
      ...pick(gatewayOptions, ['settleMs', 'idleExitMs']),
    },
  } satisfies Record<string, OptionSpecs>;
}

/** The options of each disruption's WebSocket and SSE gateway scenarios. */
export const gatewayStreamOptions = withDisruptions(streamOptions);
/** The options of each disruption's gRPC gateway scenarios. */
export const gatewayGrpcOptions = withDisruptions(grpcOptions);

export type GatewayStreamDisruption = keyof typeof gatewayStreamOptions;
export type GatewayStreamOptions<D extends GatewayStreamDisruption> = OptionsOf<(typeof gatewayStreamOptions)[D]>;
export type GatewayGrpcOptions<D extends GatewayStreamDisruption> = OptionsOf<(typeof gatewayGrpcOptions)[D]>;

/** Why nginx and Caddy, drain-correct, fail the gRPC gateway scenarios (ScenarioDefinition.knownFailures). */
export const grpcGatewayKnownFailures = {
  nginx:
    "http2Goaway: nginx 1.22 ends an HTTP/2 connection (at SIGQUIT, and at keepalive_time) with a single GOAWAY naming the last stream it took, no shutdown notice before it (RFC 9113 section 6.8), so a call its client sent meanwhile is refused (REFUSED_STREAM; with retries off, UNAVAILABLE): measured, a call refused in 3 of 7 runs with keepalive_time (on the pod not deleted) and in 1 of 9 with it left out (at SIGQUIT); every stream otherwise carried to its end",
  caddy:
    "grpcStreamsComplete: Caddy 2.6 serves h2c through x/net/http2/h2c, whose connections its graceful stop neither waits for nor closes gracefully (https://github.com/golang/go/issues/26682): it exits within 0.2 s of SIGTERM and a stream still in flight on the pod is cut (UNAVAILABLE: Connection dropped), 1 or 2 of 17 to 18 streams in each of 4 runs; and http2Goaway: the GOAWAY of its draining marker (Connection: close, which Go's HTTP/2 server turns into one) names the last stream taken, with no notice before it",
};

/** Why Caddy, drain-correct, fails every WebSocket scenario of the gateway (ScenarioDefinition.knownFailures). */
export const caddyClosesWebSockets =
  "streamsIntact: Caddy 2.6 closes every proxied WebSocket with 1001 as soon as its stop signal unloads the configuration, whatever its grace_period; stream_close_delay, which delays that close, came with Caddy 2.7.0 (https://caddyserver.com/docs/caddyfile/directives/reverse_proxy#stream_close_delay), and Debian 12's caddy is 2.6.2. Measured with Caddy 2.11.9 (caddy-built): stream_close_delay alone does not carry them through a stop, since the process exits once its requests are done and the streams die with it (1006); loaded away by the preStop (a configuration without a server) they run on in the live process, and caddy-built passes";

/** The length of each stream: given, or derived from the drain bounds the profile promises. */
export function streamLengthMs(setup: GatewaySetup, o: { streamMs: number }): number {
  if (o.streamMs > 0) return o.streamMs;
  return Math.max(100, Math.round((setup.drainTimeoutMs - setup.programmingDelayMs - setup.programmingSpreadMs) / 2));
}

/** The options of a scenario, tagged with its disruption. */
export type GatewayStreamRun = { [D in GatewayStreamDisruption]: { disruption: D } & GatewayStreamOptions<D> }[GatewayStreamDisruption];
export type GatewayGrpcRun = { [D in GatewayStreamDisruption]: { disruption: D } & GatewayGrpcOptions<D> }[GatewayStreamDisruption];

/** The disruption, one stream length after load starts: its step, when the scenario ends, its hard stop, the pods it stops, and what else it must hold. */
function disrupt(o: GatewayStreamRun | GatewayGrpcRun, setup: GatewaySetup, streamMs: number): { step: ChaosStep; end: EndCondition; maxDurationMs: number; pods: PodRef; expectations: Expectation[] } {
  const graceMs = setup.graceSeconds * 1000;
  switch (o.disruption) {
    case 'delete': {
      const atMs = streamMs + o.deleteAtMs;
      return {
        step: { id: 'delete', when: { atMs }, action: { kind: 'delete-pod', workload: GATEWAY, pick: 'oldest' } },
        end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
        maxDurationMs: atMs + graceMs + o.settleMs + 15_000,
        pods: { step: 'delete' },
        expectations: [],
      };
    }
    case 'rollout': {
      const atMs = streamMs + o.rolloutAtMs;
      return {
        step: { id: 'rollout', when: { atMs }, action: { kind: 'rollout-restart', workload: GATEWAY } },
        end: { rolloutComplete: GATEWAY, settleMs: o.settleMs },
        maxDurationMs: atMs + o.gateways * (graceMs + 10_000) + o.settleMs + 15_000,
        pods: { workload: GATEWAY },
        // Pods drain one after another: each takes at most its drain timeout, plus a new pod's start.
        expectations: [{ assert: 'rolloutCompletesWithin', workload: GATEWAY, maxMs: o.gateways * (setup.drainTimeoutMs + 5000) }],
      };
    }
    case 'scale-down': {
      const atMs = streamMs + o.scaleAtMs;
      return {
        step: { id: 'scale-down', when: { atMs }, action: { kind: 'scale', workload: GATEWAY, replicas: o.replicasAfter } },
        end: { podGone: { step: 'scale-down' }, settleMs: o.settleMs },
        maxDurationMs: atMs + graceMs + o.settleMs + 15_000,
        pods: { step: 'scale-down' },
        expectations: [],
      };
    }
  }
}

/** A disrupted gateway under `load`: what `judge` holds on the pods the disruption stopped, their drain bounds, and the disruption's own. */
function streamScenario(id: string, profile: Profile, o: GatewayStreamRun | GatewayGrpcRun, setup: GatewaySetup, streamMs: number, load: LoadPhase, judge: (pods: PodRef) => Expectation[]): Scenario {
  const { step, end, maxDurationMs, pods, expectations } = disrupt(o, setup, streamMs);
  return {
    id,
    profile: profile.name,
    topology: setup.topology,
    loads: [load],
    steps: [step],
    end,
    maxDurationMs,
    expectations: [...judge(pods), ...drainExpectations(pods, setup, o.idleExitMs), ...expectations],
  };
}

export function buildGatewayStreams(id: string, kind: Extract<StreamLoadSpec['kind'], 'websocket' | 'sse'>, profile: Profile, o: GatewayStreamRun): Scenario {
  const setup = gatewayTopology(profile, { ...o, sessions: o.streams, backendProtocol: kind });
  const streamMs = streamLengthMs(setup, o);
  const messagesPerStream = Math.max(1, Math.round((streamMs * o.ratePerStream) / 1000));
  const load: LoadPhase = {
    id: 'streams',
    startMs: 0,
    spec: { kind, service: GATEWAY, streams: o.streams, ratePerStream: o.ratePerStream, stallMs: o.stallMs, reopen: false, messagesPerStream },
  };
  return streamScenario(id, profile, o, setup, streamMs, load, (pods) => [{ assert: 'streamsIntact', load: 'streams', pod: pods, toEnd: true }]);
}

/**
 * gRPC through the gateway pods, h2c with prior knowledge on both sides, to reference gRPC backends:
 * unary calls on every channel and bounded server streams. A draining gateway says GOAWAY to its
 * clients, carries every call it holds to its end, keeps accepting until it is deprogrammed, and
 * leaves within its drain bounds.
 */
export function buildGatewayGrpc(id: string, profile: Profile, o: GatewayGrpcRun): Scenario {
  const setup = gatewayTopology(profile, { ...o, protocol: 'grpc', backendProtocol: 'grpc', sessions: o.channels });
  const streamMs = streamLengthMs(setup, o);
  const load: LoadPhase = {
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
  };
  return streamScenario(id, profile, o, setup, streamMs, load, (pods) => [
    { assert: 'noFailedRequests', load: 'grpc' },
    { assert: 'grpcStreamsComplete', load: 'grpc', pod: pods, toEnd: true },
    { assert: 'http2Goaway', load: 'grpc', pod: pods, announced: true },
  ]);
}
