// What of a built scenario a provider cannot carry out (charted workloads, stop signals, controller
// restarts), beyond the features it lacks: one of the checks of
// src/runner/eligibility.ts, which decides whether a pair runs.

import type { Scenario } from '../model/scenario.ts';
import type { Provider } from './provider.ts';
import { cacheDir } from './netns/go-module-build.ts';
import { statedStopSignal } from './kube/stop-signal.ts';

/** Chaos actions that need the workload's own Deployment, which a Helm chart's controller owns. */
const DEPLOYMENT_ACTIONS = new Set(['scale', 'rollout-restart']);

/** Why `provider` cannot run `scenario`, or undefined when it can. */
export function unsupported(scenario: Scenario, provider: Pick<Provider, 'name' | 'capabilities'>): string | undefined {
  const charted = scenario.topology.workloads.filter((w) => w.installedBy);
  for (const workload of charted) {
    const profile = workload.installedBy?.helmProfile ?? '';
    if (provider.name === 'local') {
      return `profile ${profile} is installed with its Helm chart: it runs only on a cluster provider (--provider kind|k3s|cluster)`;
    }
    const step = scenario.steps.find((s) => DEPLOYMENT_ACTIONS.has(s.action.kind) && 'workload' in s.action && s.action.workload === workload.name);
    if (step) {
      // Envoy Gateway and the STUNner operator reconcile their dataplane Deployment from their own
      // resources (EnvoyProxy envoyDeployment.replicas, Dataplane spec.replicas): a scale or restart
      // patched onto the Deployment would be undone by the controller, not measured.
      return `${step.action.kind} of the ${workload.name} workload would act on a Deployment that ${profile}'s controller owns; not supported for Helm dataplanes`;
    }
  }
  if (provider.name !== 'local') {
    for (const workload of scenario.topology.workloads) {
      // A program built into this machine's cache (caddy-built) is a path no image has.
      const built = (workload.defined?.argv ?? workload.command).find((word) => word.startsWith(`${cacheDir()}/`));
      if (built) return `the ${workload.name} workload runs ${built}, a build in zerodrop's cache on this machine, which no image carries: it runs on the local provider only`;
    }
  }
  if (!provider.capabilities.containerStopSignals) {
    for (const workload of scenario.topology.workloads) {
      const signal = workload.installedBy ? undefined : statedStopSignal(workload);
      if (signal) {
        return `the ${workload.name} workload must stop on ${signal}, not on its image's own signal, and provider ${provider.name} cannot say so here (lifecycle.stopSignal needs the ContainerStopSignals feature gate; without it the API server drops the field and the run would measure another stop)`;
      }
    }
  }
  for (const { action } of scenario.steps) {
    if (action.kind !== 'restart-controller') continue;
    if (!scenario.topology.workloads.find((w) => w.name === action.workload)?.installedBy?.controller) {
      return `the ${action.workload} workload has no controller to restart: only a chart profile that names its controller Deployment (defineHelmProfile's controller) has one`;
    }
  }
  for (const { action } of scenario.steps) {
    if (action.kind === 'move-route' && action.recreate && provider.capabilities.routeChanges !== 'gateway-api') {
      return `the route of ${action.workload} is deleted and created again, a Gateway API operation: provider ${provider.name} moves a route by reloading the gateway's configuration, where there is no route object (run on a cluster with --gateway-class)`;
    }
  }
  return undefined;
}
