// Real gateways from Debian's packages (and Caddy built from its Go module, caddy-binary.ts, where
// Debian's is too old), each defined with the public defineProfile as a team would write it in its
// zerodrop.config.ts (docs/own-gateway.md), and each twice: drain-correct (what its documentation
// and the seeds teach: a preStop that waits for deprogramming, then the system's graceful stop,
// exit once its connections reach zero, a grace period above its drain timeout) and `-naive` (the
// package's defaults, no preStop, plain SIGTERM). Their configuration templates are in
// fixtures/gateways/<system>/, readable as what a user would deploy; every drain directive in them
// is a drain setting below, proven necessary by its ablation (docs/drain-settings.md). nginx-pooled
// is nginx with its upstream connections pooled, as a gateway at high rates runs it; it has no twin
// of its own: as packaged, nginx does not pool (nginx-naive).

import { packageRoot } from '../paths.ts';
import { builtCaddy, caddyPin } from './caddy-binary.ts';
import { defineProfile, shellWord, type PodContext, type ProfileDefinition, type ReadinessDefinition } from './define.ts';
import type { DrainSettingDefinition } from './drain-setting.ts';
import { drainShape, gatewayDrainSettings, KEEPALIVE_SCENARIOS, OVERLONG_SCENARIOS, STOP_TIMEOUT_SECONDS } from './gateway-drain.ts';
import { openFileLimit } from './limits.ts';
import { ProfileCannotCarry, type Profile } from './profile.ts';

/**
 * nginx's keepalive_time in the drain-correct config: a client keep-alive connection is closed
 * politely (Connection: close) after this long, so the preStop waits this much past deprogramming.
 */
const NGINX_KEEPALIVE_TIME_SECONDS = 1;
/** Probes and connections being closed while new ones open. */
const NGINX_SPARE_CONNECTIONS = 64;

/**
 * nginx counts a proxied request twice against worker_connections (the client's connection and the
 * upstream one): sized from the scenario, never the 1,024 that made a dense load fail on our limit.
 */
const nginxWorkerConnections = (pod: PodContext): number => 2 * (pod.peak ?? 0) + NGINX_SPARE_CONNECTIONS;

/** Refuses a load whose worker_connections would exceed the open-file limit the worker inherits. */
function nginxFitsOpenFiles(pod: PodContext): void {
  const needed = nginxWorkerConnections(pod);
  const limit = openFileLimit();
  if (needed > limit) {
    throw new ProfileCannotCarry(
      `${pod.peak} client connections need ${needed} nginx worker_connections, above the open-file limit of ${limit} (ulimit -n) its worker inherits; raise the limit or use fewer connections`,
    );
  }
}

const nginxShape = (pod: PodContext) => drainShape(pod, NGINX_KEEPALIVE_TIME_SECONDS * 1000);

/**
 * gRPC (gateway-delete-grpc) runs on a configuration file of its own beside the HTTP one: h2c with
 * prior knowledge in front and h2c to the backends, the same drain directives. Both are rendered
 * into the pod; the command names the one its protocol needs.
 */
const configFor = (pod: PodContext, http: string, grpc: string): string => `\${POD_DIR}/${pod.protocol === 'grpc' ? grpc : http}`;
/** A listener that speaks h2c only has no HTTP/1.1 for an httpGet probe: a TCP probe, as for any h2c-only server. */
const healthz = (pod: PodContext): ReadinessDefinition => (pod.protocol === 'grpc' ? { tcpSocket: {} } : { httpGet: { path: '/healthz' } });
const shape = (pod: PodContext) => drainShape(pod);

/**
 * What the naive twins take back: the package's defaults, no preStop, plain SIGTERM, no promise. And
 * no reload: a twin is naive in how it stops, and its reload would be the drain-correct profile's
 * own, which the reload scenarios measure there.
 */
const asPackaged = { preStop: undefined, stopSignal: undefined, terminationGracePeriodSeconds: undefined, drain: undefined, reload: undefined } as const;

/** What the drain-correct nginx pods share, pooled or not: the process, its sizing, its stop and its reload. */
const nginxPod = {
  role: 'gateway',
  directory: packageRoot,
  requires: [{ binary: 'nginx', install: 'apt-get install nginx' }],
  check: nginxFitsOpenFiles,
  readiness: healthz,
  preStop: (pod) => ({ sleep: { seconds: nginxShape(pod).preStopSeconds } }),
  // The official nginx image's STOPSIGNAL: SIGQUIT is nginx's graceful shutdown.
  stopSignal: 'SIGQUIT',
  // `nginx -s reload` is this signal to the master: it starts workers on the new configuration and
  // shuts the old ones down gracefully (https://nginx.org/en/docs/control.html).
  reload: { signal: 'SIGHUP' },
  terminationGracePeriodSeconds: (pod) => nginxShape(pod).terminationGracePeriodSeconds,
  drain: (pod) => nginxShape(pod).drain,
  attribution: { header: 'x-zerodrop-gateway' },
} satisfies Omit<ProfileDefinition, 'name' | 'description' | 'command' | 'protocols'>;

// -e: the error log before the configuration is read; -p/-c: everything in the pod's directory.
const nginxCommand = (config: string): string[] => ['nginx', '-e', 'stderr', '-p', '${POD_DIR}', '-c', config, '-g', 'daemon off;'];

/** The one variable every nginx template uses, the naive ones too. */
const nginxSizing = (pod: PodContext): Record<string, string> => ({ WORKER_CONNECTIONS: String(Math.max(1024, nginxWorkerConnections(pod))) });

/** The pod's variables every drain-correct nginx template uses. */
const nginxEnv = (pod: PodContext): Record<string, string> => ({
  ...nginxSizing(pod),
  DRAIN_TIMEOUT_SECONDS: String(STOP_TIMEOUT_SECONDS),
  KEEPALIVE_TIME_SECONDS: String(NGINX_KEEPALIVE_TIME_SECONDS),
});

/** The drain settings of nginx.conf, which nginx-pooled.conf shares. */
const nginxDrainSettings: DrainSettingDefinition[] = [
  ...gatewayDrainSettings({ stopSignal: 'SIGQUIT' }),
  {
    name: 'keepalive_time',
    why: 'graceful shutdown closes idle keep-alive connections at once, racing a client sending its next request; keepalive_time makes each connection leave politely during the preStop',
    change: 'the keepalive_time line removed',
    caughtBy: KEEPALIVE_SCENARIOS,
    dropLines: ['keepalive_time ${KEEPALIVE_TIME_SECONDS}s;'],
  },
  {
    name: 'worker_shutdown_timeout',
    why: 'the drain timeout: graceful shutdown waits for every connection, however long, unless bounded',
    change: 'the worker_shutdown_timeout line removed',
    caughtBy: OVERLONG_SCENARIOS,
    dropLines: ['worker_shutdown_timeout ${DRAIN_TIMEOUT_SECONDS}s;'],
  },
];

export const nginx = defineProfile({
  ...nginxPod,
  name: 'nginx',
  protocols: ['http', 'grpc'],
  description:
    'nginx, drain-correct: preStop outlasts deprogramming and keepalive_time, then SIGQUIT (graceful shutdown) bounded by worker_shutdown_timeout.',
  command: (pod) => nginxCommand(configFor(pod, 'nginx.conf', 'nginx-grpc.conf')),
  config: { 'nginx.conf': 'fixtures/gateways/nginx/nginx.conf', 'nginx-grpc.conf': 'fixtures/gateways/nginx/nginx-grpc.conf' },
  env: nginxEnv,
  placeholders: ['WORKER_CONNECTIONS', 'KEEPALIVE_TIME_SECONDS'],
  drainSettings: nginxDrainSettings,
  naive: {
    description:
      'nginx as packaged: no preStop, plain SIGTERM (fast shutdown): in-flight requests are cut and the listener closes before the load balancer deprograms the pod.',
    config: { 'nginx.conf': 'fixtures/gateways/nginx/nginx-naive.conf', 'nginx-grpc.conf': 'fixtures/gateways/nginx/nginx-grpc-naive.conf' },
    env: nginxSizing,
    ...asPackaged,
  },
});

/**
 * nginx-pooled's upstream keepalive_time and keepalive_timeout: a pooled connection to a backend
 * lives at most about their sum past the backend's deprogramming (in use, then idle), which must
 * end before the backend's stop signal closes it (the scenario backends' preStop is 2 s, and
 * kube-proxy deprograms a pod 0.5 to 1 s after its delete).
 */
const UPSTREAM_KEEPALIVE_TIME_MS = 400;
const UPSTREAM_KEEPALIVE_TIMEOUT_MS = 200;

export const nginxPooled = defineProfile({
  ...nginxPod,
  name: 'nginx-pooled',
  protocols: ['http'],
  description:
    'nginx like `nginx`, its upstream connections pooled (HTTP/1.1, keepalive), each retired by keepalive_time and keepalive_timeout well inside the backends\' preStop.',
  command: () => nginxCommand('${POD_DIR}/nginx.conf'),
  config: { 'nginx.conf': 'fixtures/gateways/nginx/nginx-pooled.conf' },
  env: (pod) => ({ ...nginxEnv(pod), UPSTREAM_KEEPALIVE_TIME_MS: String(UPSTREAM_KEEPALIVE_TIME_MS), UPSTREAM_KEEPALIVE_TIMEOUT_MS: String(UPSTREAM_KEEPALIVE_TIMEOUT_MS) }),
  placeholders: ['WORKER_CONNECTIONS', 'KEEPALIVE_TIME_SECONDS', 'UPSTREAM_KEEPALIVE_TIME_MS', 'UPSTREAM_KEEPALIVE_TIMEOUT_MS'],
  drainSettings: [
    ...nginxDrainSettings,
    {
      name: 'upstream-keepalive-retirement',
      why: "a pooled connection keeps reaching its backend after the backend is deprogrammed, until the backend's stop signal closes it under the next request nginx sends; keepalive_time (in use) and keepalive_timeout (idle) retire every pooled connection first",
      change: "the upstream's keepalive_time and keepalive_timeout lines removed (nginx's defaults: 1 h and 60 s)",
      caughtBy: ['gateway-backend-rollout-http'],
      dropLines: ['keepalive_time ${UPSTREAM_KEEPALIVE_TIME_MS}ms;', 'keepalive_timeout ${UPSTREAM_KEEPALIVE_TIMEOUT_MS}ms;'],
    },
  ],
});

/** The drain-correct HAProxy pod, whichever way it is started and reloaded. */
const haproxyPod = {
  role: 'gateway',
  protocols: ['http'],
  directory: packageRoot,
  requires: [{ binary: 'haproxy', install: 'apt-get install haproxy' }],
  config: { 'haproxy.cfg': 'fixtures/gateways/haproxy/haproxy.cfg' },
  env: { DRAIN_TIMEOUT_SECONDS: String(STOP_TIMEOUT_SECONDS) },
  readiness: { httpGet: { path: '/healthz' } },
  preStop: (pod) => ({ sleep: { seconds: shape(pod).preStopSeconds } }),
  // The official haproxy image's STOPSIGNAL: SIGUSR1 is the soft-stop (SIGTERM a hard stop).
  stopSignal: 'SIGUSR1',
  terminationGracePeriodSeconds: (pod) => shape(pod).terminationGracePeriodSeconds,
  drain: (pod) => shape(pod).drain,
  attribution: { header: 'x-zerodrop-gateway' },
} satisfies Omit<ProfileDefinition, 'name' | 'description' | 'command'>;

export const haproxy = defineProfile({
  ...haproxyPod,
  name: 'haproxy',
  protocols: ['http', 'grpc'],
  description: 'HAProxy, drain-correct: preStop outlasts deprogramming, then SIGUSR1 (soft-stop) with idle-close-on-response, bounded by hard-stop-after.',
  // -W: master-worker (signals go to the master, which drives the worker); -db: foreground.
  command: (pod) => ['haproxy', '-W', '-db', '-f', configFor(pod, 'haproxy.cfg', 'haproxy-grpc.cfg')],
  config: { 'haproxy.cfg': 'fixtures/gateways/haproxy/haproxy.cfg', 'haproxy-grpc.cfg': 'fixtures/gateways/haproxy/haproxy-grpc.cfg' },
  readiness: healthz,
  // SIGUSR2 to the master: it re-executes itself on the new configuration and its new worker takes
  // the old one's listening socket over through the master's socket pair to it (the new worker runs
  // with `-x sockpair@N`; the socket's inode is unchanged across the reload, measured with HAProxy
  // 2.6, with no `expose-fd listeners` stats socket); the old worker then finishes what it holds.
  reload: { signal: 'SIGUSR2' },
  drainSettings: [
    ...gatewayDrainSettings({ stopSignal: 'SIGUSR1' }),
    {
      name: 'idle-close-on-response',
      why: 'a soft-stop closes idle keep-alive connections at once, racing a client sending its next request; with the option each one is closed after its next response instead',
      change: 'the `option idle-close-on-response` line removed',
      caughtBy: KEEPALIVE_SCENARIOS,
      dropLines: ['option idle-close-on-response'],
    },
    {
      name: 'hard-stop-after',
      why: 'the drain timeout: a soft-stop waits for every connection, however long, unless bounded',
      change: 'the hard-stop-after line removed',
      caughtBy: OVERLONG_SCENARIOS,
      dropLines: ['hard-stop-after ${DRAIN_TIMEOUT_SECONDS}s'],
    },
    {
      name: 'http-server-close',
      why: 'a fresh backend connection per request, so that no pooled server connection is closed by a backend under a request',
      change: 'the `option http-server-close` line removed',
      caughtBy: ['gateway-backend-rollout-http'],
      dropLines: ['option http-server-close'],
    },
  ],
  naive: {
    description: 'HAProxy as packaged: no preStop, plain SIGTERM (hard stop): every connection is closed at once, in-flight requests included.',
    config: { 'haproxy.cfg': 'fixtures/gateways/haproxy/haproxy-naive.cfg', 'haproxy-grpc.cfg': 'fixtures/gateways/haproxy/haproxy-grpc-naive.cfg' },
    env: {},
    ...asPackaged,
  },
});

/** The reload scenarios: what a profile broken in its reload only must fail. */
export const RELOAD_SCENARIOS = ['gateway-reload-http', 'gateway-reload-http-no-keepalive', 'gateway-route-swap-http'];

/**
 * HAProxy drain-correct, reloaded by an entrypoint shell that runs a new haproxy without handing its
 * listeners over (fixtures/gateways/haproxy/haproxy-reexec.sh): `restart` stops the old one before
 * starting the new one; `sf` starts the new one with -sf beside the old one.
 */
export function haproxyReexec(mode: 'sf' | 'restart', fields: { name: string; description: string; kind?: 'mutant' | 'system'; caughtBy?: string[] }) {
  return defineProfile({
    ...haproxyPod,
    ...fields,
    command: ['sh', 'fixtures/gateways/haproxy/haproxy-reexec.sh', mode, '${POD_DIR}/haproxy.cfg'],
    // The entrypoint shell replaces its haproxy on SIGHUP (the pod's stop signal it passes on).
    reload: { signal: 'SIGHUP' },
  });
}

export const haproxyRestart = haproxyReexec('restart', {
  name: 'haproxy-restart',
  kind: 'mutant',
  caughtBy: RELOAD_SCENARIOS,
  description: 'HAProxy drain-correct, but "reloaded" by a restart: the old process soft-stops and only then does a new one bind, so new connections are refused in between.',
});

export const haproxyDetachFirst = defineProfile({
  ...haproxyPod,
  name: 'haproxy-detach-first',
  kind: 'mutant',
  // A plain reload keeps its route: only the route change meets the gap (404 from the gateway itself).
  caughtBy: ['gateway-route-swap-http'],
  description: 'HAProxy drain-correct, its route changes applied detach-first: a reload with no route (404 for everything), then a second later the new route.',
  command: ['haproxy', '-W', '-db', '-f', '${POD_DIR}/haproxy.cfg'],
  reload: { exec: { command: ['sh', 'fixtures/gateways/haproxy/reload-detach-first.sh'] } },
});

/** Caddy's `run` and `reload` of the pod's Caddyfile, whichever caddy runs. */
function caddyArgv(program: string, verb: 'run' | 'reload', config = '${POD_DIR}/Caddyfile'): string[] {
  // Caddy keeps its autosave and data under XDG directories: the pod's own.
  const argv = ['env', 'XDG_CONFIG_HOME=${POD_DIR}', 'XDG_DATA_HOME=${POD_DIR}', program, verb, '--config', config, '--adapter', 'caddyfile'];
  // POST /load through the admin socket the Caddyfile names (https://caddyserver.com/docs/api);
  // --force: a configuration rendered the same is reloaded too, not skipped as unchanged.
  return verb === 'reload' ? [...argv, '--force'] : argv;
}

/** The drain-correct Caddy pod, whichever caddy runs it. */
const caddyPod = {
  role: 'gateway',
  protocols: ['http'],
  directory: packageRoot,
  env: { DRAIN_TIMEOUT_SECONDS: String(STOP_TIMEOUT_SECONDS) },
  readiness: healthz,
  // The Caddyfile answers with Connection: close once this file exists (its `@draining` matcher).
  preStop: (pod) => ({ exec: { command: ['sh', '-c', `touch "$POD_DIR/draining" && sleep ${shape(pod).preStopSeconds}`] } }),
  terminationGracePeriodSeconds: (pod) => shape(pod).terminationGracePeriodSeconds,
  drain: (pod) => shape(pod).drain,
  attribution: { header: 'x-zerodrop-gateway' },
} satisfies Omit<ProfileDefinition, 'name' | 'description' | 'command'>;

const caddyNaive = {
  description: 'Caddy as packaged: no preStop, plain SIGTERM: its listener closes at once, so a load balancer that has not deprogrammed the pod is refused.',
  config: { Caddyfile: 'fixtures/gateways/caddy/Caddyfile-naive', 'Caddyfile-grpc': 'fixtures/gateways/caddy/Caddyfile-grpc-naive' },
  env: {},
  ...asPackaged,
};

export const caddy = defineProfile({
  ...caddyPod,
  name: 'caddy',
  description: 'Caddy, drain-correct: preStop marks the pod draining (responses say Connection: close) and outlasts deprogramming, then SIGTERM bounded by grace_period.',
  protocols: ['http', 'grpc'],
  requires: [{ binary: 'caddy', install: 'apt-get install caddy' }],
  command: (pod) => caddyArgv('caddy', 'run', configFor(pod, 'Caddyfile', 'Caddyfile-grpc')),
  config: { Caddyfile: 'fixtures/gateways/caddy/Caddyfile', 'Caddyfile-grpc': 'fixtures/gateways/caddy/Caddyfile-grpc' },
  reload: { exec: { command: caddyArgv('caddy', 'reload') } },
  drainSettings: [
    ...gatewayDrainSettings({}),
    {
      name: 'draining-connection-close',
      why: 'SIGTERM closes idle keep-alive connections at once, racing a client sending its next request; once draining, every response says Connection: close so clients leave between two requests',
      change: 'the `header @draining Connection close` line removed',
      caughtBy: KEEPALIVE_SCENARIOS,
      dropLines: ['header @draining Connection close'],
    },
    {
      name: 'grace_period',
      why: 'the drain timeout: the graceful stop waits for active requests, however long, unless bounded',
      change: 'the grace_period line removed',
      caughtBy: OVERLONG_SCENARIOS,
      dropLines: ['grace_period ${DRAIN_TIMEOUT_SECONDS}s'],
    },
    {
      name: 'upstream-keepalive-off',
      why: 'a fresh backend connection per request, so that no pooled connection is closed by a backend under a request',
      change: "the transport's `keepalive off` line removed",
      caughtBy: ['gateway-backend-rollout-http'],
      dropLines: ['keepalive off'],
    },
  ],
  naive: caddyNaive,
});

/**
 * Caddy as the `caddy` profile runs it, from the build of the release caddy/go.mod pins rather than
 * PATH: Debian 12's 2.6.2 lacks stream_close_delay. Named for where it comes from, not its version,
 * so that a new pin renames nothing. Unbuilt, every scenario skips it with the command that builds it.
 */
export const caddyBuilt = defineProfile({
  ...caddyPod,
  name: 'caddy-built',
  description: `Caddy ${caddyPin()} built from its Go module (npm run caddy:build), drain-correct like caddy, its preStop unloads the configuration after deprogramming, and stream_close_delay keeps WebSockets open past the unload, then SIGTERM.`,
  command: () => caddyArgv(builtCaddy(), 'run'),
  config: { Caddyfile: 'fixtures/gateways/caddy/Caddyfile-built', 'Caddyfile-unloaded': 'fixtures/gateways/caddy/Caddyfile-unloaded' },
  // After deprogramming, the serving configuration is unloaded by loading one without a server
  // (Caddyfile-unloaded says why), and the preStop outlasts its grace_period and stream_close_delay:
  // the SIGTERM that follows finds nothing left to stop. CADDY_UNLOAD_CONFIG names what it loads
  // (unset: the preStop ends at deprogramming, as caddy's does: its ablation).
  env: { ...caddyPod.env, CADDY_UNLOAD_CONFIG: 'Caddyfile-unloaded' },
  preStop: (pod) => {
    const unload = caddyArgv(builtCaddy(), 'reload').map((a) => (a === '${POD_DIR}/Caddyfile' ? '${POD_DIR}/${CADDY_UNLOAD_CONFIG}' : a));
    const script = `touch "$POD_DIR/draining" && sleep ${shape(pod).preStopSeconds} && if [ -n "\${CADDY_UNLOAD_CONFIG:-}" ]; then ${unload.map(shellWord).join(' ')} && sleep ${STOP_TIMEOUT_SECONDS}; fi`;
    return { exec: { command: ['sh', '-c', script] } };
  },
  // Its exit comes when the preStop ends, whatever the traffic: the drain timeout after deprogramming.
  drain: (pod) => ({ ...shape(pod).drain, exits: 'at-timeout' }),
  reload: () => ({ exec: { command: caddyArgv(builtCaddy(), 'reload') } }),
  // Only what the build adds: the rest is the `caddy` profile's drain, the same Caddyfile lines,
  // each proven necessary by caddy's own ablations.
  drainSettings: [
    {
      name: 'stream_close_delay',
      why: "the stop's unload closes every proxied WebSocket with 1001 at once, whatever grace_period allows requests; stream_close_delay leaves them open up to the drain timeout",
      change: 'the stream_close_delay line removed',
      caughtBy: ['gateway-delete-websocket'],
      dropLines: ['stream_close_delay ${DRAIN_TIMEOUT_SECONDS}s'],
    },
    {
      name: 'prestop-unload',
      why: "a stop by SIGTERM exits once its requests are done, cutting the upgraded streams whatever stream_close_delay allows; unloaded by the preStop instead, the configuration's streams run on in a live process",
      change: 'no unload in the preStop: it ends at deprogramming, and SIGTERM stops the serving configuration',
      caughtBy: ['gateway-delete-websocket'],
      unsetEnv: ['CADDY_UNLOAD_CONFIG'],
    },
  ],
  naive: { ...caddyNaive, description: `Caddy ${caddyPin()} built from its Go module, as packaged: no preStop, plain SIGTERM: its listener closes at once, so a load balancer that has not deprogrammed the pod is refused.` },
});

export const gatewayProfiles: Profile[] = [nginx, nginx.naive!, nginxPooled, haproxy, haproxy.naive!, haproxyRestart, haproxyDetachFirst, caddy, caddy.naive!, caddyBuilt, caddyBuilt.naive!];
