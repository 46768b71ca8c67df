// The gateway Deployment of every gateway scenario, as the profile's GatewayPlan describes it: the
// profile decides command, probe, preStop, stop signal and (when its drain needs one) the grace
// period; the scenario decides the name, replicas, ports and its default grace period.

import type { ContainerPort, GatewayRoute, Workload } from '../model/workload.ts';
import type { GatewayPlan, Profile } from '../profiles/profile.ts';
import { isGatewayClassProfile } from './gateway-class-profile.ts';

export interface GatewayWorkloadOptions {
  name: string;
  replicas: number;
  ports: ContainerPort[];
  /** terminationGracePeriodSeconds when the plan does not set its own. */
  graceSeconds: number;
  /** What the gateway carries and where it forwards it (the route a GatewayClass's Gateway gets). */
  route?: GatewayRoute;
}

export function gatewayWorkload(profile: Profile, plan: GatewayPlan, o: GatewayWorkloadOptions): Workload {
  return {
    name: o.name,
    replicas: o.replicas,
    command: plan.command,
    env: plan.env,
    ports: o.ports,
    readinessProbe: plan.readinessProbe,
    ...(plan.preStop ? { preStop: plan.preStop } : {}),
    terminationGracePeriodSeconds: plan.terminationGracePeriodSeconds ?? o.graceSeconds,
    ...(plan.stopSignal ? { stopSignal: plan.stopSignal } : {}),
    ...(plan.reload ? { reload: plan.reload } : {}),
    strategy: { maxSurge: 1, maxUnavailable: 0 },
    labels: { 'zerodrop.dev/profile': profile.name },
    ...(plan.installedBy ? { installedBy: plan.installedBy } : {}),
    ...(plan.image ? { image: plan.image } : {}),
    ...(plan.attribution ? { attribution: { role: 'gateway' as const, header: plan.attribution === 'connection' ? undefined : plan.attribution.header } } : {}),
    ...(plan.defined ? { defined: plan.defined } : {}),
    ...(o.route ? { route: o.route } : {}),
    ...(isGatewayClassProfile(profile) ? { gatewayClass: profile.gatewayClass } : {}),
  };
}
