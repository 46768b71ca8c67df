// Real gateways from Debian's packages, each as a pod twice: drain-correct (what its documentation
// and the seeds teach: a preStop that waits for deprogramming, then the system's graceful stop,
// exit once its connections reach zero, a grace period above its drain timeout) and `-naive` (the
// package's defaults, no preStop, plain SIGTERM). Their configuration templates are in
// fixtures/gateways/<system>/, readable as what a user would deploy; fixtures/gateways/render.mjs
// fills them in per pod, then the shell `exec`s the system, so that the system itself is the pod's
// main process and gets the stop signal directly, as PID 1 of a container would.

import { defaultProbe } from '../model/workload.ts';
import { dropTemplateLines, type DrainSetting } from './ablation.ts';
import { drainShape, gatewayDrainSettings, KEEPALIVE_SCENARIOS, OVERLONG_SCENARIOS, STOP_TIMEOUT_SECONDS } from './gateway-drain.ts';
import { openFileLimit } from './limits.ts';
import { ProfileCannotCarry, ProfileCannotPlay, type GatewayPlan, type GatewayRequest, type Profile } from './profile.ts';

const RENDER = 'fixtures/gateways/render.mjs';

/**
 * nginx's keepalive_time in the drain-correct config: a client keep-alive connection is closed
 * politely (Connection: close) after this long, so the preStop waits this much past deprogramming.
 */
const NGINX_KEEPALIVE_TIME_SECONDS = 1;

interface SystemSpec {
  system: 'nginx' | 'haproxy' | 'caddy';
  /** The template, relative to the repository. */
  template: string;
  /** The shell command that runs the system on the rendered directory "$d", in the foreground. */
  exec: string;
}

const SYSTEMS: Record<SystemSpec['system'], Omit<SystemSpec, 'template'> & { install: string }> = {
  nginx: {
    system: 'nginx',
    // -e: the error log before the configuration is read; -p/-c: everything in the pod's directory.
    exec: `exec nginx -e stderr -p "$d" -c "$d/nginx.conf" -g 'daemon off;'`,
    install: 'apt-get install nginx',
  },
  haproxy: {
    system: 'haproxy',
    // -W: master-worker (signals go to the master, which drives the worker); -db: foreground.
    exec: `exec haproxy -W -db -f "$d/haproxy.cfg"`,
    install: 'apt-get install haproxy',
  },
  caddy: {
    system: 'caddy',
    exec: `XDG_CONFIG_HOME="$d" XDG_DATA_HOME="$d" exec caddy run --config "$d/Caddyfile" --adapter caddyfile`,
    install: 'apt-get install caddy',
  },
};

/** argv of the pod: render the template into the pod's directory, then become the system. */
function command(spec: SystemSpec): string[] {
  // Node is the harness's own (ZERODROP_NODE), as `node` in a pod's command is.
  return ['sh', '-c', `d=$("$ZERODROP_NODE" ${RENDER} ${spec.template}) && ${spec.exec}`];
}

function httpOnly(name: string, request: GatewayRequest): void {
  if (request.protocol !== 'http') throw new ProfileCannotPlay(`profile ${name} is configured for HTTP/1.1 only, not ${request.protocol}`);
}

/**
 * nginx counts a proxied request twice against worker_connections (the client's connection and the
 * upstream one): sized from the scenario, never the 1,024 that made a dense load fail on our limit.
 */
function nginxWorkerConnections(request: GatewayRequest): string {
  const needed = 2 * (request.peak ?? 0) + NGINX_SPARE_CONNECTIONS;
  const limit = openFileLimit();
  if (needed > limit) {
    throw new ProfileCannotCarry(
      `${request.peak} client connections need ${needed} nginx worker_connections, above the open-file limit of ${limit} (ulimit -n) its worker inherits; raise the limit or use fewer connections`,
    );
  }
  return String(Math.max(1024, needed));
}
/** Probes and connections being closed while new ones open. */
const NGINX_SPARE_CONNECTIONS = 64;

function basePlan(spec: SystemSpec, request: GatewayRequest, env: Record<string, string>): GatewayPlan {
  return {
    command: command(spec),
    env: {
      ZERODROP_NODE: process.execPath,
      PORT: String(request.port),
      ...(spec.system === 'nginx' ? { WORKER_CONNECTIONS: nginxWorkerConnections(request) } : {}),
      ...env,
    },
    readinessProbe: defaultProbe({ httpGet: { port: request.port, path: '/healthz' } }),
  };
}

function systemProfile(
  system: SystemSpec['system'],
  naive: boolean,
  description: string,
  plan: (spec: SystemSpec, request: GatewayRequest) => GatewayPlan,
  drainSettings?: DrainSetting[],
): Profile {
  const { install, exec } = SYSTEMS[system];
  const file = { nginx: 'nginx.conf', haproxy: 'haproxy.cfg', caddy: 'Caddyfile' }[system];
  const template = `fixtures/gateways/${system}/${naive ? file.replace(/(\.[a-z]+)?$/, (ext) => `-naive${ext}`) : file}`;
  const name = naive ? `${system}-naive` : system;
  return {
    name,
    kind: naive ? 'naive' : 'system',
    description,
    requires: [{ binary: system, install }],
    gateway: (request) => {
      httpOnly(name, request);
      return plan({ system, template, exec }, request);
    },
    ...(drainSettings ? { drainSettings } : {}),
  };
}


export const gatewayProfiles: Profile[] = [
  systemProfile(
    'nginx',
    false,
    'nginx, drain-correct: preStop outlasts deprogramming and keepalive_time, then SIGQUIT (graceful shutdown) bounded by worker_shutdown_timeout.',
    (spec, request) => {
      const shape = drainShape(request, NGINX_KEEPALIVE_TIME_SECONDS * 1000);
      return {
        ...basePlan(spec, request, {
          DRAIN_TIMEOUT_SECONDS: String(STOP_TIMEOUT_SECONDS),
          KEEPALIVE_TIME_SECONDS: String(NGINX_KEEPALIVE_TIME_SECONDS),
        }),
        preStop: { sleep: { seconds: shape.preStopSeconds } },
        // The official nginx image's STOPSIGNAL: SIGQUIT is nginx's graceful shutdown.
        stopSignal: 'SIGQUIT',
        terminationGracePeriodSeconds: shape.terminationGracePeriodSeconds,
        drain: shape.drain,
      };
    },
    [
      ...gatewayDrainSettings({ stopSignal: 'SIGQUIT' }),
      {
        name: 'keepalive_time',
        why: 'graceful shutdown closes idle keep-alive connections at once, racing a client sending its next request; keepalive_time makes each connection leave politely during the preStop',
        change: 'the keepalive_time line removed',
        caughtBy: KEEPALIVE_SCENARIOS,
        weaken: dropTemplateLines('keepalive_time ${KEEPALIVE_TIME_SECONDS}s;'),
      },
      {
        name: 'worker_shutdown_timeout',
        why: 'the drain timeout: graceful shutdown waits for every connection, however long, unless bounded',
        change: 'the worker_shutdown_timeout line removed',
        caughtBy: OVERLONG_SCENARIOS,
        weaken: dropTemplateLines('worker_shutdown_timeout ${DRAIN_TIMEOUT_SECONDS}s;'),
      },
    ],
  ),
  systemProfile(
    'nginx',
    true,
    'nginx as packaged: no preStop, plain SIGTERM (fast shutdown): in-flight requests are cut and the listener closes before the load balancer deprograms the pod.',
    (spec, request) => basePlan(spec, request, {}),
  ),
  systemProfile(
    'haproxy',
    false,
    'HAProxy, drain-correct: preStop outlasts deprogramming, then SIGUSR1 (soft-stop) with idle-close-on-response, bounded by hard-stop-after.',
    (spec, request) => {
      const shape = drainShape(request);
      return {
        ...basePlan(spec, request, { DRAIN_TIMEOUT_SECONDS: String(STOP_TIMEOUT_SECONDS) }),
        preStop: { sleep: { seconds: shape.preStopSeconds } },
        // The official haproxy image's STOPSIGNAL: SIGUSR1 is the soft-stop (SIGTERM a hard stop).
        stopSignal: 'SIGUSR1',
        terminationGracePeriodSeconds: shape.terminationGracePeriodSeconds,
        drain: shape.drain,
      };
    },
    [
      ...gatewayDrainSettings({ stopSignal: 'SIGUSR1' }),
      {
        name: 'idle-close-on-response',
        why: 'a soft-stop closes idle keep-alive connections at once, racing a client sending its next request; with the option each one is closed after its next response instead',
        change: 'the `option idle-close-on-response` line removed',
        caughtBy: KEEPALIVE_SCENARIOS,
        weaken: dropTemplateLines('option idle-close-on-response'),
      },
      {
        name: 'hard-stop-after',
        why: 'the drain timeout: a soft-stop waits for every connection, however long, unless bounded',
        change: 'the hard-stop-after line removed',
        caughtBy: OVERLONG_SCENARIOS,
        weaken: dropTemplateLines('hard-stop-after ${DRAIN_TIMEOUT_SECONDS}s'),
      },
      {
        name: 'http-server-close',
        why: 'a fresh backend connection per request, so that no pooled server connection is closed by a backend under a request',
        change: 'the `option http-server-close` line removed',
        caughtBy: ['gateway-backend-rollout-http'],
        weaken: dropTemplateLines('option http-server-close'),
      },
    ],
  ),
  systemProfile(
    'haproxy',
    true,
    'HAProxy as packaged: no preStop, plain SIGTERM (hard stop): every connection is closed at once, in-flight requests included.',
    (spec, request) => basePlan(spec, request, {}),
  ),
  systemProfile(
    'caddy',
    false,
    'Caddy, drain-correct: preStop marks the pod draining (responses say Connection: close) and outlasts deprogramming, then SIGTERM bounded by grace_period.',
    (spec, request) => {
      const shape = drainShape(request);
      return {
        ...basePlan(spec, request, { DRAIN_TIMEOUT_SECONDS: String(STOP_TIMEOUT_SECONDS) }),
        // The Caddyfile answers with Connection: close once this file exists (its `@draining` matcher).
        preStop: { exec: { command: ['sh', '-c', `touch "$ZERODROP_POD_DIR/draining" && sleep ${shape.preStopSeconds}`] } },
        terminationGracePeriodSeconds: shape.terminationGracePeriodSeconds,
        drain: shape.drain,
      };
    },
    [
      ...gatewayDrainSettings({}),
      {
        name: 'draining-connection-close',
        why: 'SIGTERM closes idle keep-alive connections at once, racing a client sending its next request; once draining, every response says Connection: close so clients leave between two requests',
        change: 'the `header @draining Connection close` line removed',
        caughtBy: KEEPALIVE_SCENARIOS,
        weaken: dropTemplateLines('header @draining Connection close'),
      },
      {
        name: 'grace_period',
        why: 'the drain timeout: the graceful stop waits for active requests, however long, unless bounded',
        change: 'the grace_period line removed',
        caughtBy: OVERLONG_SCENARIOS,
        weaken: dropTemplateLines('grace_period ${DRAIN_TIMEOUT_SECONDS}s'),
      },
      {
        name: 'upstream-keepalive-off',
        why: 'a fresh backend connection per request, so that no pooled connection is closed by a backend under a request',
        change: 'the transport\'s `keepalive off` line removed',
        caughtBy: ['gateway-backend-rollout-http'],
        weaken: dropTemplateLines('keepalive off'),
      },
    ],
  ),
  systemProfile(
    'caddy',
    true,
    'Caddy as packaged: no preStop, plain SIGTERM: its listener closes at once, so a load balancer that has not deprogrammed the pod is refused.',
    (spec, request) => basePlan(spec, request, {}),
  ),
];
