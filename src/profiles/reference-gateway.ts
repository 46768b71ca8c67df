// The reference gateway (fixtures/reference-gateway.mjs), a Node reverse proxy with a correct drain,
// and its mutant that closes HTTP/2 connections without GOAWAY. It needs nothing but Node, so that
// `npm start` shows the gateway scenarios on any machine. In gateway scenarios the backends are
// always the reference backend; the profile supplies the gateway. Its pod's fields are shared by
// the `reference` profile (reference.ts) and the mutant, both written with defineProfile.

import type { PodContext, ReadinessDefinition } from './define.ts';
import type { DrainSettingDefinition } from './drain-setting.ts';
import { drainShape, gatewayDrainSettings, OVERLONG_SCENARIOS, STOP_TIMEOUT_SECONDS } from './gateway-drain.ts';

export const REFERENCE_GATEWAY = 'fixtures/reference-gateway.mjs';

export type ReferenceGatewayMode = 'graceful' | 'no-goaway';

/** HTTP/1.1, h2c or gRPC in front; a preStop that outlasts deprogramming, then SIGTERM and its own drain. */
export const referenceGateway = {
  command: ['node', REFERENCE_GATEWAY],
  env: (pod: PodContext, mode: ReferenceGatewayMode) => ({
    PROTOCOL: pod.protocol,
    GATEWAY_MODE: mode,
    DRAIN_IDLE_MS: '300',
    DRAIN_TIMEOUT_MS: String(STOP_TIMEOUT_SECONDS * 1000),
  }),
  // h2c has no HTTP/1.1 listener for an httpGet probe: a TCP probe, as for any h2c-only server.
  readiness: (pod: PodContext): ReadinessDefinition => (pod.protocol === 'http' ? { httpGet: { path: '/healthz' } } : { tcpSocket: {} }),
  preStop: (pod: PodContext) => ({ sleep: { seconds: drainShape(pod).preStopSeconds } }),
  terminationGracePeriodSeconds: (pod: PodContext) => drainShape(pod).terminationGracePeriodSeconds,
  drain: (pod: PodContext) => drainShape(pod).drain,
};

/** The drain settings of the reference gateway's pod (its drain itself is code: fixtures/reference-gateway.mjs). */
export const referenceGatewayDrainSettings: DrainSettingDefinition[] = [
  // It keeps accepting after SIGTERM, so without its preStop no connection is refused, and the long
  // requests of the HTTP/1.1 scenarios keep it past the drain it declares (measured: it passed
  // gateway-delete-http, -no-keepalive and -rollout-http). gateway-http2-goaway has nothing long in
  // flight at SIGTERM: without the preStop the pod says GOAWAY at once and leaves about 0.5 s after
  // its delete, before the minimum drain it declares (the balancer's deprogramming and a margin),
  // with its h2 connections open at SIGTERM: drainTiming fails (6 runs of 6, docs/drain-settings.md).
  ...gatewayDrainSettings({ preStopCaughtBy: ['gateway-http2-goaway'] }),
  {
    name: 'drain-timeout',
    why: 'the drain timeout: the drain waits for every connection, however long, unless bounded',
    change: 'DRAIN_TIMEOUT_MS unset',
    caughtBy: OVERLONG_SCENARIOS,
    unsetEnv: ['DRAIN_TIMEOUT_MS'],
  },
];
