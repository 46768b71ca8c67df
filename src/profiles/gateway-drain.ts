// The drain arithmetic every drain-correct gateway profile shares, after Envoy Gateway's shutdown
// manager (seed 004): a preStop that outlasts the load balancer's deprogramming (the minimum
// drain), then the system's graceful stop bounded by its own timeout (the drain timeout), and a
// terminationGracePeriodSeconds above both, so that SIGKILL never decides.

import type { DrainSettingDefinition } from './drain-setting.ts';
import type { GatewayPlan } from './profile.ts';

/** The system's own bound on its graceful stop, after the stop signal (short; Envoy Gateway's is 600 s). */
export const STOP_TIMEOUT_SECONDS = 5;
/** Margin of the preStop over deprogramming, for the balancer's timer and the harness's clock. */
const PRESTOP_MARGIN_MS = 300;

export interface DrainShape {
  preStopSeconds: number;
  drain: NonNullable<GatewayPlan['drain']>;
  terminationGracePeriodSeconds: number;
}

/**
 * The preStop sleep (whole seconds, as Kubernetes takes them) for a gateway that must wait for the
 * Service's programming delay, plus `extraMs` the system needs before its stop signal (nginx's
 * keepalive_time), and the drain bounds that follow from it.
 */
export function drainShape(request: { programmingDelayMs?: number }, extraMs = 0): DrainShape {
  const preStopSeconds = Math.max(1, Math.ceil(((request.programmingDelayMs ?? 0) + extraMs + PRESTOP_MARGIN_MS) / 1000));
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
