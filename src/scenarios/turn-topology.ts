// The TURN scenarios' topology: client -> gateway Service (UDP) -> TURN server pods (the profile
// under test) -> relay -> UDP echo backend pods (the reference, udp-echo-backend.ts). Each flow of a
// TURN load is one allocation with long-term credentials and one channel to its peer: the backend
// Service's address, or one of its pods' own (TurnLoadSpec.peerPods).

import type { TurnLoadSpec } from '../model/load.ts';
import type { Topology } from '../model/workload.ts';
import { TURN_PASSWORD, TURN_USER } from '../profiles/coturn.ts';
import { ProfileCannotPlay, type Profile } from '../profiles/profile.ts';
import { gatewayWorkload } from './gateway-workload.ts';
import { UDP_ECHO_PORT, udpEchoService, udpEchoWorkload, type UdpEchoOptions } from './udp-echo-backend.ts';

export const TURN_BACKEND = 'backend';
export const TURN_GATEWAY = 'gateway';
export const TURN_PORT = 3478;

export interface TurnTopologyOptions {
  gatewayReplicas: number;
  gatewayGraceSeconds: number;
  programmingDelayMs: number;
  /** Most allocations one TURN pod may hold at once (a profile sizes its relay port range by it). */
  peak: number;
  backend: Omit<UdpEchoOptions, 'name'>;
}

export function turnTopology(profile: Profile, o: TurnTopologyOptions): Topology {
  if (!profile.gateway) throw new ProfileCannotPlay(`profile ${profile.name} provides no gateway`);
  const plan = profile.gateway({
    protocol: 'turn',
    port: TURN_PORT,
    backendService: TURN_BACKEND,
    backendPort: UDP_ECHO_PORT,
    programmingDelayMs: o.programmingDelayMs,
    graceSeconds: o.gatewayGraceSeconds,
    peak: o.peak,
  });
  return {
    workloads: [
      udpEchoWorkload({ name: TURN_BACKEND, ...o.backend }),
      gatewayWorkload(profile, plan, {
        name: TURN_GATEWAY,
        replicas: o.gatewayReplicas,
        ports: [{ name: 'turn', containerPort: TURN_PORT, protocol: 'UDP' }],
        graceSeconds: o.gatewayGraceSeconds,
        route: { kind: 'UDPRoute', backend: { service: TURN_BACKEND, port: UDP_ECHO_PORT } },
      }),
    ],
    services: [
      udpEchoService(TURN_BACKEND, o.programmingDelayMs),
      {
        name: TURN_GATEWAY,
        selector: TURN_GATEWAY,
        ports: [{ name: 'turn', port: TURN_PORT, targetPort: TURN_PORT, protocol: 'UDP' }],
        programmingDelayMs: o.programmingDelayMs,
      },
    ],
  };
}

/** A TURN load through the gateway Service to the echo backends (their Service, or each pod with `peerPods`). */
export function turnLoad(o: { flows: number; ratePerFlow: number; durationMs: number; peerPods?: boolean }): TurnLoadSpec {
  return {
    kind: 'turn',
    service: TURN_GATEWAY,
    port: 'turn',
    peerService: TURN_BACKEND,
    peerPort: 'udp',
    ...(o.peerPods ? { peerPods: { workload: TURN_BACKEND, port: UDP_ECHO_PORT } } : {}),
    username: TURN_USER,
    password: TURN_PASSWORD,
    flows: o.flows,
    ratePerFlow: o.ratePerFlow,
    durationMs: o.durationMs,
    payloadBytes: 64,
    replyTimeoutMs: 1000,
  };
}
