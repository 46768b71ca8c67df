// Joins a TURN allocation (client side, src/load/turn/transport.ts) to the gateway pod that held it:
// the gateway Service's balancer pinned the client's UDP socket to one pod when the Allocate
// arrived (its UdpFlowRecord), and a TURN allocation lives in the server process that created it.
// On a cluster no balancer of the harness's records the pinning; there the relayed address names
// the pod instead: a TURN server in a pod relays from its pod IP (STUNner's STUNNER_ADDR is the
// pod IP), which the pod observer records when the pod starts.

import type { AllocationRecord, Timeline } from '../model/timeline.ts';

/** Slack for the balancer's record of the first datagram versus the client's send time, ms. */
const SLACK_MS = 1;

/** The gateway pod the allocation's Allocate was routed to; undefined when the balancer had none. */
export function allocationPod(timeline: Timeline, a: AllocationRecord): string | undefined {
  if (a.localPort === undefined) return undefined;
  let best: { open: number; pod: string | undefined } | undefined;
  for (const f of timeline.udpFlows ?? []) {
    if (f.clientPort !== a.localPort || f.open < a.start - SLACK_MS || f.open > a.end + SLACK_MS) continue;
    if (!best || f.open < best.open) best = { open: f.open, pod: f.pod };
  }
  return best?.pod ?? podByRelayedAddress(timeline, a);
}

/** The pod whose IP the allocation's relayed address is: the latest to start with it before the allocation (IPs are reused). */
function podByRelayedAddress(timeline: Timeline, a: AllocationRecord): string | undefined {
  const host = a.relayed?.replace(/:\d+$/, '');
  if (!host) return undefined;
  let best: { t: number; pod: string } | undefined;
  for (const e of timeline.events) {
    if (e.kind !== 'pod-started' || e.pod === undefined || e.t > a.start || (e.detail as { podIP?: unknown } | undefined)?.podIP !== host) continue;
    if (!best || e.t >= best.t) best = { t: e.t, pod: e.pod };
  }
  return best?.pod;
}
