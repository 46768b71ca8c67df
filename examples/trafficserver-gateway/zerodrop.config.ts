// Your own gateway, a second example: Apache Traffic Server 9.2 (Debian's `trafficserver`), which
// zerodrop has no profile for, drain-correct and as packaged. Written from Traffic Server's own
// documentation (records.config `proxy.config.stop.shutdown_timeout`) and measured here: at SIGTERM
// it keeps listening, closes each connection after its response, and exits when shutdown_timeout
// runs out, idle or not. The profile declares that (`drain.exits: 'at-timeout'`), so drainTiming
// holds it to its drain timeout, not to exiting once idle; no wrapper that kills it when idle is
// needed. docs/own-gateway.md walks through it.
import { defineConfig, defineProfile } from 'zerodrop';

/** Past the load balancer's deprogramming (which the scenario sets), with a margin for its timer. */
const deprogrammedSeconds = (programmingDelayMs: number) => Math.ceil((programmingDelayMs + 500) / 1000);
/** shutdown_timeout: the listener stays past deprogramming, and requests in flight get 3 s more. */
const shutdownTimeout = (programmingDelayMs: number) => deprogrammedSeconds(programmingDelayMs) + 3;
/** Traffic Server exits about 1 s after its shutdown_timeout (measured: 4.0 s after SIGTERM with 3). */
const EXIT_AFTER_TIMEOUT_SECONDS = 2;

const trafficserver = defineProfile({
  name: 'trafficserver',
  role: 'gateway',
  protocols: ['http'],
  description: 'Apache Traffic Server 9.2, drain-correct: SIGTERM with shutdown_timeout past deprogramming; it keeps listening, sends Connection: close, and exits at its timeout.',
  requires: [{ binary: 'traffic_server', install: 'apt-get install trafficserver' }],
  // runroot.yaml points every directory of Traffic Server at the pod's own.
  command: ['traffic_server', '--run-root=${POD_DIR}/runroot.yaml'],
  config: { 'records.config': 'records.config', 'runroot.yaml': 'runroot.yaml', 'remap.config': 'remap.config', 'ip_allow.yaml': 'ip_allow.yaml', 'storage.config': 'storage.config' },
  placeholders: ['SHUTDOWN_TIMEOUT'],
  env: ({ programmingDelayMs }) => ({ SHUTDOWN_TIMEOUT: String(shutdownTimeout(programmingDelayMs)) }),
  readiness: { tcpSocket: {} },
  // Traffic Server names no pod in its responses: each request is attributed by its connection.
  attribution: 'connection',
  drain: ({ programmingDelayMs }) => ({
    minDrainSeconds: deprogrammedSeconds(programmingDelayMs),
    drainTimeoutSeconds: shutdownTimeout(programmingDelayMs) + EXIT_AFTER_TIMEOUT_SECONDS,
    // It waits out shutdown_timeout whatever the traffic: judged against its drain timeout, not idleExitMs.
    exits: 'at-timeout',
  }),
  terminationGracePeriodSeconds: ({ programmingDelayMs }) => shutdownTimeout(programmingDelayMs) + EXIT_AFTER_TIMEOUT_SECONDS + 2,
  drainSettings: [
    {
      name: 'shutdown-timeout',
      why: 'without it SIGTERM stops Traffic Server at once: requests in flight are cut and the listener closes before deprogramming',
      change: 'the proxy.config.stop.shutdown_timeout line removed (the default, 0)',
      caughtBy: ['gateway-delete-http'],
      dropLines: ['proxy.config.stop.shutdown_timeout'],
    },
  ],
  // As Debian packages it: shutdown_timeout 0, so SIGTERM stops it at once.
  naive: {
    description: 'Apache Traffic Server as packaged: shutdown_timeout 0, SIGTERM stops it at once: requests in flight are cut and the listener closes before deprogramming.',
    env: { SHUTDOWN_TIMEOUT: '0' },
    drain: undefined,
    terminationGracePeriodSeconds: undefined,
  },
});

export default defineConfig({
  profiles: [trafficserver, trafficserver.naive!],
  scenarios: ['gateway-delete-http', 'gateway-delete-http-no-keepalive', 'gateway-slow-lb', 'gateway-rollout-http'],
  reportDir: 'reports/drain',
});
