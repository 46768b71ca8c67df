// The profile that `--gateway-class NAME` adds to a run: the gateway role played by the dataplane an
// installed Gateway API implementation generates for a Gateway of that class. It starts nothing
// itself; the gateway workload it yields carries `gatewayClass`, and a cluster provider creates the
// Gateway and routes for it (src/providers/kube/gateway-class.ts). Its result rows are named for
// the class, so that a verdict is never filed under a profile that did not run.

import { defaultProbe } from '../model/workload.ts';
import { ProfileCannotPlay, type GatewayPlan, type Profile } from '../profiles/profile.ts';

export interface DrainBounds {
  minDrainSeconds: number;
  drainTimeoutSeconds: number;
}

export interface GatewayClassProfile extends Profile {
  gatewayClass: string;
  /** Stated drain bounds; when absent, the provider reads them from the dataplane pods' spec after deploy. */
  drain?: DrainBounds;
}

export const gatewayClassProfileName = (className: string) => `gatewayclass-${className}`;

export function gatewayClassProfile(className: string, drain?: DrainBounds): GatewayClassProfile {
  return {
    name: gatewayClassProfileName(className),
    kind: 'system',
    description: `the dataplane of GatewayClass ${className}, installed on the cluster (--gateway-class)`,
    requires: [],
    gatewayClass: className,
    ...(drain ? { drain } : {}),
    gateway: (request): GatewayPlan => {
      // A TURN gateway authenticates with credentials the scenario's clients must know; a class's are
      // configured in the implementation's own resources (STUNner's GatewayConfig), not by the run.
      if (request.protocol === 'turn') throw new ProfileCannotPlay(`GatewayClass ${className}: TURN needs the scenario's credentials in the implementation's own configuration, which zerodrop does not write for an installed class; run --profile stunner instead`);
      return {
        // Never started: the implementation's controller creates the pods.
        command: [],
        env: {},
        readinessProbe: defaultProbe({ tcpSocket: { port: request.port } }),
        ...(drain ? { drain } : {}),
      };
    },
  };
}

export function isGatewayClassProfile(profile: Profile): profile is GatewayClassProfile {
  return typeof (profile as Partial<GatewayClassProfile>).gatewayClass === 'string';
}

/** The same profile with drain bounds stated (those read from the dataplane pods after deploy). */
export function withDrain(profile: GatewayClassProfile, drain: DrainBounds): GatewayClassProfile {
  return gatewayClassProfile(profile.gatewayClass, drain);
}
