// The UDP backend of the UDP and TURN gateway scenarios: reference UDP echo pods
// (fixtures/reference-udp-echo.mjs, graceful drain) behind one UDP Service. The backend is the
// reference here; what is under test is the gateway in front of it.

import { defaultProbe, type Service, type Workload } from '../model/workload.ts';
import type { OptionSpecs } from './definition.ts';

export const REFERENCE_UDP_ECHO = 'fixtures/reference-udp-echo.mjs';
export const UDP_ECHO_PORT = 9001;
export const UDP_HEALTH_PORT = 8086;

export interface UdpEchoOptions {
  name: string;
  replicas: number;
  graceSeconds: number;
  /** 0 or omitted means no preStop hook. */
  preStopSeconds?: number;
  /** More of the echo's environment (DRAIN_IDLE_MS, ...). */
  env?: Record<string, string>;
}

export function udpEchoWorkload(o: UdpEchoOptions): Workload {
  return {
    name: o.name,
    replicas: o.replicas,
    command: ['node', REFERENCE_UDP_ECHO],
    env: { PORT: String(UDP_ECHO_PORT), HEALTH_PORT: String(UDP_HEALTH_PORT), DRAIN_MODE: 'graceful', ...o.env },
    ports: [
      { name: 'udp', containerPort: UDP_ECHO_PORT, protocol: 'UDP' },
      { name: 'health', containerPort: UDP_HEALTH_PORT, protocol: 'TCP' },
    ],
    readinessProbe: defaultProbe({ httpGet: { port: UDP_HEALTH_PORT, path: '/healthz' } }),
    ...(o.preStopSeconds ? { preStop: { sleep: { seconds: o.preStopSeconds } } } : {}),
    terminationGracePeriodSeconds: o.graceSeconds,
    strategy: { maxSurge: 1, maxUnavailable: 0 },
    labels: { 'zerodrop.dev/profile': 'reference' },
  };
}

export function udpEchoService(name: string, programmingDelayMs: number): Service {
  return { name, selector: name, ports: [{ name: 'udp', port: UDP_ECHO_PORT, targetPort: UDP_ECHO_PORT, protocol: 'UDP' }], programmingDelayMs };
}

/** The options of the scenarios that scale the echo backend to 0 (UDP flows and TURN allocations to it), but their flows'. */
export const scaleToZeroOptions = {
  preStopSeconds: { default: 1.5, nightly: 30, doc: 'preStop sleep of the backend pod (seed 000: 300)' },
  graceSeconds: { default: 6, nightly: 300, doc: 'terminationGracePeriodSeconds of the backend pod' },
  programmingDelayMs: { default: 100, nightly: 1000, doc: 'delay before the Services apply an endpoint change' },
  scaleAtMs: { default: 1000, nightly: 10_000, doc: 'when the backend is scaled to 0, after load starts' },
  echoIdleMs: { default: 500, nightly: 2000, doc: 'the echo exits this long after its last datagram once SIGTERMed' },
  settleMs: { default: 200, nightly: 2000, doc: 'time kept after the backend pod is gone' },
} satisfies OptionSpecs;
