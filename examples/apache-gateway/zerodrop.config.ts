// Testing your own gateway: Apache httpd (mod_proxy), a system zerodrop has no built-in profile for,
// defined here in full, drain-correct and as packaged, with a backend of this repository's own.
// `npx zerodrop run` runs the selection below; docs/own-gateway.md walks through every field.
import { defineConfig, defineProfile } from 'zerodrop';

/** Apache's own bound on a graceful stop (GracefulShutdownTimeout, seconds). */
const GRACEFUL_SHUTDOWN_TIMEOUT = 3;
/** Past the last node's deprogramming (the delay and the nodes' spread), with a margin for its timer. */
const preStopSeconds = ({ programmingDelayMs, programmingSpreadMs }: { programmingDelayMs: number; programmingSpreadMs: number }) =>
  Math.ceil((programmingDelayMs + programmingSpreadMs + 500) / 1000);

const apache = defineProfile({
  name: 'apache',
  role: 'gateway',
  protocols: ['http'],
  description: 'Apache httpd (mod_proxy), drain-correct: preStop turns keep-alive off and outlasts deprogramming, then SIGWINCH (graceful-stop) bounded by GracefulShutdownTimeout.',
  requires: [{ binary: 'apache2', install: 'apt-get install apache2' }],
  command: ['apache2', '-f', '${POD_DIR}/httpd.conf', '-DFOREGROUND'],
  config: { 'httpd.conf': 'httpd.conf' },
  readiness: { tcpSocket: {} },
  // Past the load balancer's last node deprogramming the pod (which the scenario sets), with a margin.
  preStop: (pod) => ({ exec: { command: ['sh', '-c', `touch "$POD_DIR/draining" && sleep ${preStopSeconds(pod)}`] } }),
  stopSignal: 'SIGWINCH',
  env: { GRACEFUL_SHUTDOWN_TIMEOUT: String(GRACEFUL_SHUTDOWN_TIMEOUT) },
  // Apache exits about 9.5 s after GracefulShutdownTimeout when a request outlasts it (httpd.conf).
  drain: (pod) => ({
    minDrainSeconds: preStopSeconds(pod),
    drainTimeoutSeconds: preStopSeconds(pod) + GRACEFUL_SHUTDOWN_TIMEOUT + 11,
  }),
  terminationGracePeriodSeconds: (pod) => preStopSeconds(pod) + GRACEFUL_SHUTDOWN_TIMEOUT + 13,
  // What the drain depends on, each taken out by an ablation `apache-without-<name>` that the
  // scenarios named must fail: `npx zerodrop campaign --ablations`, or one by name with --profile.
  drainSettings: [
    { name: 'prestop', why: 'the listener must outlive deprogramming', change: 'no preStop hook', caughtBy: ['gateway-delete-http'], remove: 'preStop' },
    { name: 'stopsignal', why: 'SIGWINCH is the graceful stop; SIGTERM stops at once', change: 'SIGTERM instead of SIGWINCH', caughtBy: ['gateway-delete-http'], remove: 'stopSignal' },
    {
      name: 'graceful-timeout',
      why: 'bounds the graceful stop, or a request that never ends keeps the pod until SIGKILL',
      change: 'the GracefulShutdownTimeout line removed',
      caughtBy: ['gateway-delete-http'],
      dropLines: ['GracefulShutdownTimeout'],
    },
  ],
  // As Debian packages it: no preStop, and SIGTERM, Apache's immediate stop.
  naive: {
    description: 'Apache httpd as packaged: no preStop, SIGTERM (stop now): connections are cut and the listener closes before deprogramming.',
    preStop: undefined,
    stopSignal: 'SIGTERM',
    drain: undefined,
    terminationGracePeriodSeconds: undefined,
  },
});

const backend = defineProfile({
  name: 'my-backend',
  role: 'backend',
  protocols: ['http'],
  description: "This repository's own backend (backend.mjs): keeps accepting after SIGTERM, then exits when drained.",
  command: ['node', 'backend.mjs'],
  env: { DRAIN_SECONDS: '5' },
  readiness: { httpGet: { path: '/healthz' } },
});

export default defineConfig({
  profiles: [apache, apache.naive!, backend],
  scenarios: ['gateway-delete-http', 'gateway-delete-http-no-keepalive', 'gateway-slow-lb', 'gateway-rollout-http', 'backend-delete-http', 'backend-sigterm-keeps-accepting'],
  reportDir: 'reports/drain',
});
