// The dense traffic a stopped pod must carry, for gateways and backends alike: many
// keep-alive connections with a think time, new connections alongside them, and long requests in
// flight at the stop signal. What each load is for is said at denseTraffic.

import type { ChaosAction, ChaosStep, Expectation, LoadPhase } from '../model/scenario.ts';

export interface DenseTrafficOptions {
  keepAliveConnections: number;
  thinkMs: number;
  freshClients: number;
  /** The rate of each fresh client, per second. */
  ratePerClient: number;
  longRequests: number;
}

export const denseTrafficDefaults: Omit<DenseTrafficOptions, 'ratePerClient'> = {
  keepAliveConnections: 60,
  thinkMs: 200,
  freshClients: 4,
  longRequests: 8,
};

/** The drain a stopped pod promises, in ms from its delete: its stop signal (after its preStop) and its drain timeout. */
export interface DrainBounds {
  minDrainMs: number;
  drainTimeoutMs: number;
}

/**
 * A long request ends halfway between the pod's minimum drain (its stop signal) and its drain
 * timeout: in flight at the stop signal and well into the drain, so that a grace period below the
 * drain timeout or a stop that cuts what is in flight fails it, yet clear of the drain timeout by
 * seconds, so that a machine too busy to answer on time does not read as a drain failure (ending 2 s
 * before the timeout, one run of a correct nginx under a load average of 8 on 2 cores was cut).
 */
const LONG_REQUEST_SHARE_OF_DRAIN = 0.5;
/** Long requests start this long before the stop, so that they are in flight on every pod then. */
const LONG_LEAD_MS = 500;
/** What a keep-alive connection may spend per request beyond its think time, and still count as held. */
const TURNAROUND_MS = 100;
/** Requests outlasting the drain by design (gatewayTraffic's): not judged. */
export const OVERLONG = 'overlong-';

export function longRequestStart(stopAtMs: number): number {
  return Math.max(0, stopAtMs - LONG_LEAD_MS);
}

/**
 * When the pods a scenario stops are deleted: all at a time (`atMs`: a delete, a scale-down), or one
 * by one in a rolling update (maxSurge 1, maxUnavailable 0) of `pods` pods started by the step
 * `rollout` (the scenario's own, so that the loads name the step it runs), each old pod when its
 * replacement turns ready: a fraction of a second after the step on the model, seconds on a
 * cluster, and not known beforehand.
 */
export type Stops = { atMs: number } | { rollout: RolloutStep; pods: number };

export type RolloutStep = ChaosStep & { action: Extract<ChaosAction, { kind: 'rollout-restart' }> };

/**
 * The loads, to `service`, beside a scenario's own:
 * - `keepalive`: many keep-alive connections, each thinking `thinkMs` on a timer between a response
 *   and its next request. A server that closes one between two requests (an idle close at its stop
 *   signal) races the client's next request: a request already on the wire fails, and every such
 *   close is counted by keepAliveClosedPolitely whether a request crossed it or not, so the race is
 *   seen every run, not by luck. Connections mostly idle are what a graceful stop closes
 *   at once; connections mid-request are closed politely after their response by every system here,
 *   so many connections with a think time show the race more surely than a few busy ones. A polite
 *   drain needs one request on each connection while it drains (a response saying Connection:
 *   close), so each must send at least every thinkMs + 100 ms, or the run is inconclusive;
 * - `fresh`: a new connection per request, at `ratePerClient`, crossing the load balancer all the time;
 * - `long-N`: requests started just before the stop, lasting halfway into the drain the pod
 *   promises: in flight at the stop signal, they must complete. In a rolling update, `long-K-N`:
 *   one such batch per old pod, sent when the replacement that makes the controller stop it turns
 *   ready, while that pod still serves (longRequests).
 */
export function denseTraffic(service: string, o: DenseTrafficOptions, drain: DrainBounds, stops: Stops): LoadPhase[] {
  const loads: LoadPhase[] = [];
  if (o.keepAliveConnections > 0) {
    loads.push({
      id: 'keepalive',
      startMs: 0,
      spec: {
        kind: 'http',
        service,
        path: '/',
        thinkMs: o.thinkMs,
        keepAlive: true,
        mode: 'closed',
        connections: o.keepAliveConnections,
        heldRatePerWorker: 1000 / (o.thinkMs + TURNAROUND_MS),
        timeoutMs: 5_000,
      },
    });
  }
  if (o.freshClients > 0) {
    loads.push({
      id: 'fresh',
      startMs: 0,
      spec: { kind: 'http', service, path: '/', keepAlive: false, mode: 'closed', connections: o.freshClients, ratePerWorker: o.ratePerClient, timeoutMs: 5_000 },
    });
  }
  return [...loads, ...longRequests(service, o.longRequests, drain, stops)];
}

/**
 * `count` requests in flight at each stop, each ending halfway from the pod's minimum drain to its
 * drain timeout, counted from its delete. In a rolling update the delete follows the trigger (a
 * replacement turning ready) by the controller's reaction, tens of milliseconds; sent then, the
 * batch spreads over the pods still serving, the one about to be stopped among them.
 */
function longRequests(service: string, count: number, drain: DrainBounds, stops: Stops): LoadPhase[] {
  const holdMs = drain.minDrainMs + (drain.drainTimeoutMs - drain.minDrainMs) * LONG_REQUEST_SHARE_OF_DRAIN;
  const request = (ms: number) => ({ kind: 'single', service, path: `/delay?ms=${ms}`, timeoutMs: ms + 5_000 }) as const;
  if ('atMs' in stops) {
    const start = longRequestStart(stops.atMs);
    const ms = Math.round(stops.atMs - start + holdMs);
    return ms > 0 ? Array.from({ length: count }, (_, i) => ({ id: `long-${i + 1}`, startMs: start, spec: request(ms) })) : [];
  }
  const { rollout, pods } = stops;
  const ms = Math.round(holdMs);
  if (ms <= 0) return [];
  return Array.from({ length: pods }, (_, k) =>
    Array.from({ length: count }, (_, i) => ({
      id: `long-${k + 1}-${i + 1}`,
      startMs: 0,
      startOn: { newPodReady: { workload: rollout.action.workload, afterStep: rollout.id, nth: k + 1 } },
      spec: request(ms),
    })),
  ).flat();
}

/**
 * `lagging-node`: new connections straight to each deleted pod of `workload`, from its delete until
 * every node of the Service's balancer has deprogrammed it (`windowMs`: the programming delay and
 * spread the scenario assumes), as a cluster's slowest node sends them (LaggingNodeSpec). A pod whose
 * preStop outlasts the window gets them before its stop signal; one that stops accepting at its
 * signal while the window runs refuses them, on a two-node cluster as on a hundred-node one.
 */
export function laggingNode(service: string, workload: string, windowMs: number): LoadPhase {
  return { id: 'lagging-node', startMs: 0, spec: { kind: 'lagging-node', service, workload, path: '/', rate: LAGGING_NODE_RATE, windowMs, timeoutMs: 2_000 } };
}
/** New connections a second from a lagging node to a deleted pod: one every 50 ms of the window. */
const LAGGING_NODE_RATE = 20;

/** Every client connection dense traffic holds at once (a rolling update's batches of long requests may overlap). */
export function denseConnections(o: Partial<DenseTrafficOptions>, stops: Stops): number {
  const batches = 'rollout' in stops ? stops.pods : 1;
  return (o.keepAliveConnections ?? 0) + (o.freshClients ?? 0) + (o.longRequests ?? 0) * batches;
}

/**
 * No request of `loads` may fail, except the overlong ones: those outlast the drain by design and
 * are cut at the drain timeout; what holds the pod to that timeout is drainTiming and notKilled.
 * With keep-alive loads, no keep-alive connection may be closed between two requests unannounced.
 */
export function trafficExpectations(loads: readonly LoadPhase[], o: { ratePerClient: number; thinkMs?: number }): Expectation[] {
  const exceptLoads = loads.filter((l) => l.id.startsWith(OVERLONG)).map((l) => l.id);
  const keepAlive = loads.some((l) => l.spec.kind === 'http' && l.spec.keepAlive);
  return [
    exceptLoads.length > 0 ? { assert: 'noFailedRequests', exceptLoads } : { assert: 'noFailedRequests' },
    // Every keep-alive connection sends at least every 1/ratePerClient s or thinkMs: idle for twice
    // the longer (and at least a second), it may have met a keep-alive timeout, which is no drain.
    ...(keepAlive
      ? [{ assert: 'keepAliveClosedPolitely', idleTimeoutMs: Math.max(KEEPALIVE_IDLE_TIMEOUT_MS, 2000 / o.ratePerClient, 2 * (o.thinkMs ?? 0)) } as const]
      : []),
  ];
}

/** Idle this long at least, a keep-alive connection may be closed without notice (a keep-alive timeout). */
const KEEPALIVE_IDLE_TIMEOUT_MS = 1000;
