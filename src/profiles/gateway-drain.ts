// The drain arithmetic every drain-correct gateway profile shares, after Envoy Gateway's shutdown
// manager (seed 004): a preStop that outlasts the load balancer's deprogramming (the minimum
// drain), then the system's graceful stop bounded by its own timeout (the drain timeout), and a
// terminationGracePeriodSeconds above both, so that SIGKILL never decides.
//
// Deprogramming is not one moment: each node's proxy applies the change at its own sync, up to the
// Service's spread after its programming delay (kube-proxy's minSyncPeriod, 1 s by default:
// https://kubernetes.io/docs/reference/command-line-tools-reference/kube-proxy/). The preStop waits
// for the last of them, delay + spread, plus a margin of its own: a preStop sized to the delay alone
// lets the stop signal close the listener while some node still sends the pod new connections.

import type { OptionValues } from '../model/verdict.ts';
import type { DrainSettingDefinition } from './drain-setting.ts';
import type { GatewayPlan } from './profile.ts';

/** The system's own bound on its graceful stop, after the stop signal (short; Envoy Gateway's is 600 s). */
export const STOP_TIMEOUT_SECONDS = 5;
/** Margin of the preStop over the last node's deprogramming, for the balancer's timer and the harness's clock. */
const PRESTOP_MARGIN_MS = 300;

export interface DrainShape {
  preStopSeconds: number;
  drain: NonNullable<GatewayPlan['drain']>;
  terminationGracePeriodSeconds: number;
}

/**
 * How much later than its programming delay each node of a Service may apply a change, per node and
 * per change: kube-proxy applies changes at its next sync, no sooner than `minSyncPeriod` (1 s by
 * default, iptables and nftables modes) after its last, each node on its own loop
 * (https://kubernetes.io/docs/reference/command-line-tools-reference/kube-proxy/). Measured on a
 * real cluster, a rolling update's old pod left kube-proxy's rules 0.5 to 0.7 s after its delete and
 * now and then later than 1 s (docs/local-provider.md): a preStop must outlast the last node, not the
 * delay alone.
 */
export const PROGRAMMING_SPREAD_MS = 1000;

/**
 * The preStop sleep, in whole seconds as Kubernetes takes them, that outlasts the last node's
 * deprogramming (the Service's programming delay and spread) with a margin, plus `extraMs` the
 * system needs after it before its stop signal. A pod's, gateway or backend alike.
 */
export function preStopOutlasting(service: { programmingDelayMs?: number; programmingSpreadMs?: number }, extraMs = 0): number {
  const deprogrammedMs = (service.programmingDelayMs ?? 0) + (service.programmingSpreadMs ?? 0);
  return Math.max(1, Math.ceil((deprogrammedMs + extraMs + PRESTOP_MARGIN_MS) / 1000));
}

/**
 * True while a pod's preStop (a scenario's `preStopSeconds` option) outlasts its Service's last node
 * deprogramming it (`programmingDelayMs` and the spread) with the margin: no new connection reaches
 * the pod after its stop signal. What a broken profile that refuses new connections from SIGTERM
 * on (a mutant, a mesh proxy without its wait) needs to pass a backend scenario.
 */
export function preStopOutlastsDeprogramming(options: Readonly<OptionValues>): boolean {
  const preStopSeconds = options['preStopSeconds'] ?? 0;
  return preStopSeconds >= preStopOutlasting({ programmingDelayMs: options['programmingDelayMs'] ?? 0, programmingSpreadMs: PROGRAMMING_SPREAD_MS });
}

/**
 * The preStop sleep (whole seconds, as Kubernetes takes them) for a gateway that must wait for the
 * Service's programming delay and spread (the last node's deprogramming), plus `extraMs` the system
 * needs before its stop signal (nginx's keepalive_time), and the drain bounds that follow from it.
 */
export function drainShape(request: { programmingDelayMs?: number; programmingSpreadMs?: number }, extraMs = 0): DrainShape {
  const preStopSeconds = preStopOutlasting(request, extraMs);
  const drainTimeoutSeconds = preStopSeconds + STOP_TIMEOUT_SECONDS + 1;
  return {
    preStopSeconds,
    drain: { minDrainSeconds: preStopSeconds, drainTimeoutSeconds },
    terminationGracePeriodSeconds: drainTimeoutSeconds + 2,
  };
}

/** The scenario with requests outlasting the grace period: only the system's own drain timeout ends them in time. */
export const OVERLONG_SCENARIOS = ['gateway-delete-http'];
/** The scenarios whose keep-alive connections see a close between two requests (keepAliveClosedPolitely). */
export const KEEPALIVE_SCENARIOS = ['gateway-delete-http', 'gateway-rollout-http', 'gateway-scale-down'];

/** The scenarios that catch a gateway that stops accepting before its load balancer deprograms it. */
const NEW_CONNECTIONS = ['gateway-delete-http', 'gateway-delete-http-no-keepalive', 'gateway-rollout-http', 'gateway-scale-down'];
/** The scenarios that hold a gateway's stop signal to the last node's deprogramming (preStopOutlastsDeprogramming). */
const DEPROGRAMMING_MARGIN = [...NEW_CONNECTIONS, 'gateway-slow-lb', 'gateway-http2-goaway'];
/** The scenarios with requests in flight at the stop signal that last until near the drain timeout. */
const LONG_REQUESTS = ['gateway-delete-http', 'gateway-delete-http-no-keepalive', 'gateway-rollout-http', 'gateway-scale-down'];

/**
 * The drain settings of the Kubernetes side that every drain-correct gateway of this shape has: the
 * preStop, the stop signal when the system's graceful stop is not SIGTERM, and a grace period above
 * the drain timeout.
 */
export function gatewayDrainSettings(o: { stopSignal?: NodeJS.Signals; preStopCaughtBy?: string[] }): DrainSettingDefinition[] {
  const settings: DrainSettingDefinition[] = [
    {
      name: 'prestop',
      why: 'the stop signal closes the listener: the preStop holds it back until the load balancer has deprogrammed the pod',
      change: 'no preStop hook',
      caughtBy: o.preStopCaughtBy ?? NEW_CONNECTIONS,
      remove: 'preStop',
    },
    {
      name: 'prestop-margin',
      why: 'each node deprograms the pod at its own sync, up to the spread past the programming delay: the preStop outlasts the last node, with a margin',
      change: 'the preStop cut to the programming delay, rounded up to whole seconds (no margin)',
      caughtBy: DEPROGRAMMING_MARGIN,
      margin: 'none',
    },
    {
      name: 'grace',
      why: 'terminationGracePeriodSeconds above preStop + drain timeout, so that SIGKILL never cuts a request the drain promised to finish',
      change: 'terminationGracePeriodSeconds weakened to the preStop + 1 s',
      caughtBy: LONG_REQUESTS,
      grace: 'preStop+1',
    },
  ];
  if (o.stopSignal !== undefined) {
    settings.push({
      name: 'stopsignal',
      why: `${o.stopSignal} is the system's graceful stop; SIGTERM is its fast stop, which cuts what is in flight`,
      change: `the stop signal SIGTERM instead of ${o.stopSignal}`,
      caughtBy: LONG_REQUESTS,
      remove: 'stopSignal',
    });
  }
  return settings;
}
