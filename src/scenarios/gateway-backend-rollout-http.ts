// The backends behind a gateway are rolled while the gateway carries dense keep-alive traffic
// (dense-traffic.ts). The gateway pods are never stopped here; the backends drain correctly (the reference
// backend behind a preStop that outlasts the backend Service's deprogramming, `Connection: close` on
// every response after SIGTERM), and close a keep-alive connection left idle 30 ms after SIGTERM,
// nearer to Go's http.Server.Shutdown and Node's server.close(), which close idle connections at
// once, than the reference's own 1 s (a server may close an idle connection at any time, RFC 9112
// section 9.6). What is judged is the gateway's upstream side: a gateway that pools connections to
// its backends sends some requests over a connection the backend is closing, and loses them; one
// that opens a connection per request (nginx's default, HAProxy's `option http-server-close`,
// Caddy's transport `keepalive off`) has nothing to lose. Whether a request crosses the close is
// luck (the window is the path's latency); that the gateway left a connection for the backend's
// drain to close under it is not, and noIdleUpstreamAtDrain counts each one from the reference
// backend's own lines, every run (docs/drain-settings.md).

import type { Topology } from '../model/workload.ts';
import { BACKEND } from './backend-topology.ts';
import { defineScenario, pick, withoutNightly } from './definition.ts';
import { BACKEND_PRESTOP_SECONDS, BACKEND_PROGRAMMING_DELAY_MS, gatewayOptions, gatewayTopology, gatewayTraffic } from './gateway-http-topology.ts';
import { trafficExpectations, type RolloutStep } from './dense-traffic.ts';

/** The backends' preStop (gatewayTopology's): long enough for the backend Service's last node to deprogram them. */
const BACKEND_PRESTOP_MS = BACKEND_PRESTOP_SECONDS * 1000;
const ID = 'gateway-backend-rollout-http';

/** gatewayTopology's backends, closing idle connections `backendIdleCloseMs` after SIGTERM, with their own grace period. */
function rollingBackends(topology: Topology, o: { backendIdleCloseMs: number; backendGraceSeconds: number }): Topology {
  return {
    ...topology,
    workloads: topology.workloads.map((w) =>
      w.name === BACKEND
        ? { ...w, env: { ...w.env, DRAIN_IDLE_CLOSE_MS: String(o.backendIdleCloseMs) }, terminationGracePeriodSeconds: o.backendGraceSeconds, strategy: { maxSurge: 1, maxUnavailable: 0 } }
        : w,
    ),
  };
}

const NOT_STOPPED = 'the gateway pods are never stopped here, so its naive drain is not exercised (gateway-delete-http catches it), and';
const CADDY_NAIVE = `${NOT_STOPPED} the naive Caddy keeps the transport's \`keepalive off\` (an upstream connection per request)`;

export default defineScenario({
  id: ID,
  description:
    'Rollout restart of three reference backends (maxSurge 1, maxUnavailable 0; each closes a keep-alive connection left idle 30 ms after SIGTERM) behind two gateway pods carrying dense keep-alive traffic (POSTs). No request may fail: a gateway that pools its upstream connections must not lose a request to a backend closing one; no backend may be SIGKILLed.',
  features: ['gateway', 'http', 'http-keepalive', 'backend', 'rollout'],
  seeds: ['004'],
  role: 'gateway',
  tolerates: {
    'nginx-naive': `${NOT_STOPPED} nginx as packaged opens an upstream connection per request (no upstream keepalive)`,
    'haproxy-naive': `${NOT_STOPPED} the naive HAProxy keeps \`option http-server-close\` (an upstream connection per request)`,
    // Both Caddy twins: the same naive Caddyfile, on the caddy from PATH and on the built one.
    'caddy-naive': CADDY_NAIVE,
    'caddy-built-naive': CADDY_NAIVE,
    // Their twins differ from the drain-correct charts in the gateway pod's own drain only.
    'envoy-gateway-naive': `${NOT_STOPPED} its upstream connection pools are those of the drain-correct chart`,
    'ingress-nginx-naive': `${NOT_STOPPED} its upstream connection pools are those of the drain-correct chart`,
  },
  options: {
    ...withoutNightly(pick(gatewayOptions, ['gateways'])),
    backends: { default: 3, doc: 'reference backend replicas, rolled one at a time' },
    ...withoutNightly(pick(gatewayOptions, ['programmingDelayMs', 'graceSeconds'])),
    backendGraceSeconds: { default: 8, doc: 'terminationGracePeriodSeconds of the backends' },
    backendIdleCloseMs: { default: 30, doc: 'how long after SIGTERM a backend closes a keep-alive connection left idle (the reference backend\'s DRAIN_IDLE_CLOSE_MS)' },
    rolloutAtMs: { default: 1000, nightly: 10_000, doc: 'when the backends\' rollout restart starts, after load starts' },
    settleMs: gatewayOptions.settleMs,
    keepAliveConnections: {
      ...gatewayOptions.keepAliveConnections,
      // 120 x 200 ms (400 requests/s): a gateway that does not pool opens a backend connection per
      // request through the harness's balancer, and at 200 connections the drain-correct gateways'
      // load was not held on this 2-core machine (35 to 80%).
      default: 120,
      nightly: 200,
    },
    thinkMs: gatewayOptions.thinkMs,
    longRequests: { ...gatewayOptions.longRequests, doc: 'requests sent as each replacement backend turns ready (so in flight on the old one stopped then), lasting halfway from its preStop to its grace period' },
    postBytes: { default: 64, doc: 'the keep-alive connections send POSTs of this many bytes (0: GETs): a request no proxy may send again on its own' },
  },
  checkOptions: (o) =>
    o.backendGraceSeconds * 1000 > BACKEND_PRESTOP_MS ? undefined : `backendGraceSeconds (${o.backendGraceSeconds}) must be above the backends' ${BACKEND_PRESTOP_SECONDS} s preStop, or they are SIGKILLed by design`,
  build: (profile, o) => {
    // The gateway's own traffic shape, without the hey-like clients and new connections: the gateway
    // is not stopped, and each new client connection costs the harness what the upstream side needs.
    const traffic = { ...o, clients: 1, ratePerClient: 10, freshClients: 0 };
    const setup = gatewayTopology(profile, traffic);
    // Long requests are held to the backends' drain, not the gateway's: in flight at a backend's
    // SIGTERM (after its preStop), ending halfway to its grace period.
    const backendDrain = { ...setup, minDrainMs: BACKEND_PRESTOP_MS, drainTimeoutMs: o.backendGraceSeconds * 1000 };
    // The keep-alive connections POST: Go's transport (Caddy) sends a GET again on a new connection
    // when a pooled one turns out closed (net/http shouldRetryRequest), which would hide the close;
    // a POST it must not send twice.
    const rollout: RolloutStep = { id: 'rollout', when: { atMs: o.rolloutAtMs }, action: { kind: 'rollout-restart', workload: BACKEND } };
    const loads = gatewayTraffic({ ...traffic, keepAlive: true }, backendDrain, { rollout, pods: o.backends })
      // The gateway is not stopped: neither its clients' load nor a lagging node's connections to it.
      .filter((l) => l.id !== 'http' && l.id !== 'lagging-node')
      .map((l) => (l.id === 'keepalive' && l.spec.kind === 'http' && o.postBytes > 0 ? { ...l, spec: { ...l.spec, postBytes: o.postBytes } } : l));
    return {
      id: ID,
      profile: profile.name,
      topology: rollingBackends(setup.topology, o),
      loads,
      steps: [rollout],
      end: { rolloutComplete: BACKEND, settleMs: o.settleMs },
      maxDurationMs: o.rolloutAtMs + o.backends * (o.backendGraceSeconds * 1000 + 10_000) + o.settleMs + 15_000,
      expectations: [
        ...trafficExpectations(loads, { ratePerClient: traffic.ratePerClient, thinkMs: o.thinkMs }),
        // The race counted whole, every run: each upstream connection a backend's drain closed under the gateway.
        // Used after the backend Service began deprogramming the pod: idle at most the rest of the preStop at SIGTERM, plus the idle close.
        { assert: 'noIdleUpstreamAtDrain', pod: { workload: BACKEND }, usedWithinMs: BACKEND_PRESTOP_MS - BACKEND_PROGRAMMING_DELAY_MS + o.backendIdleCloseMs },
        { assert: 'notKilled', pod: { workload: BACKEND } },
        { assert: 'rolloutCompletesWithin', workload: BACKEND, maxMs: o.backends * (o.backendGraceSeconds * 1000 + 5000) },
      ],
    };
  },
});
