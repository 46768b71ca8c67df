// Real gateways installed with their own Helm charts, on cluster providers only. Each is data: the
// chart, where it comes from, the pinned version, the values that carry the drain settings its
// documentation recommends, the objects that configure the dataplane, and a `-naive` twin with the
// setting that is known to drop traffic. src/providers/kube/helm.ts turns one into `helm` commands.
//
// Sources for each drain setting:
// - Envoy Gateway: the shutdown manager sidecar drains listeners in its preStop and exits once
//   connections reach 0, no earlier than minDrainDuration and no later than drainTimeout
//   (EnvoyProxy spec.shutdown; https://gateway.envoyproxy.io/latest/tasks/operations/graceful-shutdown/,
//   PR 2633 = seed 004: minDrainDuration 15 s, drainTimeout 600 s, terminationGracePeriodSeconds 900 s).
// - STUNner: the Dataplane's terminationGracePeriodSeconds (default 3600 s) lets live TURN
//   allocations finish while the pod keeps accepting new ones (seeds 000 and 002).
// - ingress-nginx: the chart's /wait-shutdown preStop makes the controller stop gracefully, and
//   --shutdown-grace-period keeps it serving while load balancers deprogram it (controller flag,
//   kubernetes/ingress-nginx PR 8143); terminationGracePeriodSeconds bounds both.

import { ProfileCannotPlay, type Profile } from './profile.ts';

export interface HelmChart {
  /** Chart name in its repository, or an oci:// reference. */
  chart: string;
  /** Chart repository URL (omitted for oci:// charts). */
  repo?: string;
  version: string;
  /** The release name; the release is installed into the run's namespace. */
  release: string;
}

export interface HelmProfileSpec {
  name: string;
  naive: boolean;
  description: string;
  chart: HelmChart;
  values: Record<string, unknown>;
  /**
   * Objects applied after the chart (Gateway API objects, the system's own CRs). `namespace` is the
   * run's namespace. Cluster-scoped objects are marked so that providers that must stay inside
   * their namespace (an existing cluster) can refuse them.
   */
  objects: (namespace: string) => { clusterScoped: boolean; object: Record<string, unknown> }[];
  /** Label selector of the dataplane pods a gateway scenario deletes, scales and rolls. */
  dataplaneSelector: string;
  /** What the documentation promises about the drain, for the timing assertions. */
  drain?: { minDrainSeconds: number; drainTimeoutSeconds: number; terminationGracePeriodSeconds: number };
  docs: string;
}

export const HELM_INSTALL_HINT = 'install Helm 3 (https://helm.sh/docs/intro/install/)';

function envoyGateway(naive: boolean): HelmProfileSpec {
  // Seed 004's production settings; the naive twin zeroes the drain so that Envoy exits at once.
  const shutdown = naive ? { drainTimeout: '0s', minDrainDuration: '0s' } : { drainTimeout: '600s', minDrainDuration: '15s' };
  // Envoy Gateway sets the Envoy pods' terminationGracePeriodSeconds to drainTimeout + 300 s
  // (expectedTerminationGracePeriodSeconds in PR 2633): 900 s for the 600 s drain.
  const grace = naive ? 300 : 900;
  return {
    name: naive ? 'envoy-gateway-naive' : 'envoy-gateway',
    naive,
    description: naive
      ? 'Envoy Gateway with the shutdown manager drain zeroed (drainTimeout 0 s): Envoy exits as soon as the pod is deleted.'
      : 'Envoy Gateway with its shutdown manager: min drain 15 s, drain timeout 600 s, terminationGracePeriodSeconds 900 s (PR 2633).',
    chart: { chart: 'oci://docker.io/envoyproxy/gateway-helm', version: 'v1.9.1', release: 'eg' },
    values: {},
    objects: (namespace) => [
      {
        clusterScoped: false,
        object: {
          apiVersion: 'gateway.envoyproxy.io/v1alpha1',
          kind: 'EnvoyProxy',
          metadata: { name: 'zerodrop', namespace },
          spec: {
            shutdown,
            provider: {
              type: 'Kubernetes',
              kubernetes: {
                envoyDeployment: { replicas: 3, pod: { labels: { 'zerodrop.dev/workload': 'gateway' } } },
                envoyService: { type: 'NodePort' },
              },
            },
          },
        },
      },
      {
        clusterScoped: true,
        object: {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'GatewayClass',
          metadata: { name: `zerodrop-${namespace}` },
          spec: {
            controllerName: 'gateway.envoyproxy.io/gatewayclass-controller',
            parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'zerodrop', namespace },
          },
        },
      },
    ],
    dataplaneSelector: 'zerodrop.dev/workload=gateway',
    ...(naive ? {} : { drain: { minDrainSeconds: 15, drainTimeoutSeconds: 600, terminationGracePeriodSeconds: grace } }),
    docs: 'https://gateway.envoyproxy.io/latest/tasks/operations/graceful-shutdown/',
  };
}

function stunner(naive: boolean): HelmProfileSpec {
  // The Kubernetes default grace period (30 s) cuts live TURN allocations; STUNner's own default is 3600 s.
  const grace = naive ? 30 : 3600;
  return {
    name: naive ? 'stunner-naive' : 'stunner',
    naive,
    description: naive
      ? 'STUNner with terminationGracePeriodSeconds 30 (the Kubernetes default): allocations still relaying are cut when the grace period ends.'
      : 'STUNner with its graceful shutdown: the dataplane keeps relaying and accepting allocations for up to 3600 s after the delete.',
    chart: { chart: 'stunner-gateway-operator', repo: 'https://l7mp.io/stunner', version: '1.1.0', release: 'stunner' },
    values: {},
    objects: () => [
      {
        // Dataplane is cluster-scoped (stunner.l7mp.io/v1, api/v1/dataplane_types.go).
        clusterScoped: true,
        object: {
          apiVersion: 'stunner.l7mp.io/v1',
          kind: 'Dataplane',
          metadata: { name: 'default' },
          spec: { replicas: 3, terminationGracePeriodSeconds: grace, labels: { 'zerodrop.dev/workload': 'gateway' } },
        },
      },
    ],
    dataplaneSelector: 'zerodrop.dev/workload=gateway',
    docs: 'https://docs.l7mp.io/en/stable/SCALING/ (graceful shutdown), seeds 000 and 002',
  };
}

function ingressNginx(naive: boolean): HelmProfileSpec {
  return {
    name: naive ? 'ingress-nginx-naive' : 'ingress-nginx',
    naive,
    description: naive
      ? 'ingress-nginx without the /wait-shutdown preStop and with --shutdown-grace-period=0: nginx stops while load balancers still send to it.'
      : 'ingress-nginx with the chart\'s /wait-shutdown preStop and --shutdown-grace-period=15, inside terminationGracePeriodSeconds 300.',
    chart: { chart: 'ingress-nginx', repo: 'https://kubernetes.github.io/ingress-nginx', version: '4.13.3', release: 'ingress-nginx' },
    values: {
      controller: {
        replicaCount: 3,
        podLabels: { 'zerodrop.dev/workload': 'gateway' },
        // An IngressClass per run, so that two runs never program each other's controller.
        ingressClassResource: { name: 'zerodrop', controllerValue: 'k8s.io/zerodrop-ingress-nginx' },
        ingressClass: 'zerodrop',
        scope: { enabled: true },
        service: { type: 'NodePort' },
        admissionWebhooks: { enabled: false },
        terminationGracePeriodSeconds: naive ? 30 : 300,
        extraArgs: { 'shutdown-grace-period': naive ? '0' : '15' },
        lifecycle: naive ? {} : { preStop: { exec: { command: ['/wait-shutdown'] } } },
      },
    },
    objects: () => [],
    dataplaneSelector: 'zerodrop.dev/workload=gateway',
    docs: 'https://kubernetes.github.io/ingress-nginx/ (controller flags: --shutdown-grace-period; chart values controller.lifecycle)',
  };
}

export const HELM_PROFILE_SPECS: readonly HelmProfileSpec[] = [
  envoyGateway(false),
  envoyGateway(true),
  stunner(false),
  stunner(true),
  ingressNginx(false),
  ingressNginx(true),
];

/**
 * The Helm systems as profiles: skipped with the install hint when helm is missing, and never
 * played by the local provider (they exist only as charts for a cluster).
 */
export const helmProfiles: Profile[] = HELM_PROFILE_SPECS.map((spec) => ({
  name: spec.name,
  kind: spec.naive ? 'naive' : 'system',
  description: spec.description,
  requires: [{ binary: 'helm', install: HELM_INSTALL_HINT }],
  gateway: () => {
    throw new ProfileCannotPlay(
      `profile ${spec.name} is installed with its Helm chart (${spec.chart.chart} ${spec.chart.version}) and runs only on a cluster provider (--provider kind|k3s|cluster); the runner does not install Helm gateways into a scenario yet`,
    );
  },
}));
