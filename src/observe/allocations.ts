// Joins a TURN allocation (client side, src/load/turn/transport.ts) to the gateway pod that held it:
// the gateway Service's balancer pinned the client's UDP socket to one pod when the Allocate
// arrived (its UdpFlowRecord), and a TURN allocation lives in the server process that created it.

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
  return best?.pod;
}
