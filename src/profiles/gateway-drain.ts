// The drain arithmetic every drain-correct gateway profile shares, after Envoy Gateway's shutdown
// manager (seed 004): a preStop that outlasts the load balancer's deprogramming (the minimum
// drain), then the system's graceful stop bounded by its own timeout (the drain timeout), and a
// terminationGracePeriodSeconds above both, so that SIGKILL never decides.

import type { GatewayPlan, GatewayRequest } from './profile.ts';

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
export function drainShape(request: GatewayRequest, extraMs = 0): DrainShape {
  const preStopSeconds = Math.max(1, Math.ceil(((request.programmingDelayMs ?? 0) + extraMs + PRESTOP_MARGIN_MS) / 1000));
  const drainTimeoutSeconds = preStopSeconds + STOP_TIMEOUT_SECONDS + 1;
  return {
    preStopSeconds,
    drain: { minDrainSeconds: preStopSeconds, drainTimeoutSeconds },
    terminationGracePeriodSeconds: drainTimeoutSeconds + 2,
  };
}
