// Real gateways installed with their own Helm charts, on cluster providers only. Each is data: the
// chart, where it comes from, the pinned version, the values that carry the drain settings its
// documentation recommends, the objects that configure the dataplane and route it to the scenario's
// backend Service, the container port its dataplane listens on, and a `-naive` twin with the setting
// that is known to drop traffic. src/providers/kube/helm.ts turns one into `helm` commands and
// src/providers/kube/helm-gateway.ts into the objects of a run.
//
// How a chart plays a scenario's gateway role: the chart's controller creates the dataplane pods in
// the run's namespace, labelled zerodrop.dev/workload=<the gateway workload> through the chart's own
// pod-label setting; the scenario's gateway Service (rendered by zerodrop, type NodePort on kind)
// selects them by that label and targets `dataplanePort`. The chart's own Service is ClusterIP, so
// the traffic path is the same NodePort -> kube-proxy -> pod path as every other profile's.
//
// Sources for each drain setting:
// - Envoy Gateway: the shutdown manager sidecar drains Envoy's listeners when the pod terminates and
//   exits once connections reach 0, no earlier than minDrainDuration and no later than drainTimeout
//   (EnvoyProxy spec.shutdown; https://gateway.envoyproxy.io/v1.9/tasks/operations/graceful-shutdown/,
//   PR 2633 = seed 004: minDrainDuration 15 s, drainTimeout 600 s, terminationGracePeriodSeconds 900 s).
//   A listener port >= 1024 is the container port too (servicePortToContainerPort adds 10000 only
//   below 1024, internal/gatewayapi in envoyproxy/gateway).
// - STUNner: the Dataplane's terminationGracePeriodSeconds (default 3600 s, stunner-gateway-operator
//   api/v1/dataplane_types.go) lets live TURN allocations finish while the pod keeps accepting new
//   ones (seeds 000 and 002). Gateway/UDPRoute/GatewayConfig as in l7mp/stunner docs/GATEWAY.md.
// - ingress-nginx: --shutdown-grace-period keeps the controller serving for that many seconds after
//   the shutdown signal, while load balancers deprogram it (controller flag, default 0,
//   kubernetes/ingress-nginx PR 5855, cmd/nginx/flags.go); the chart's /wait-shutdown preStop sends
//   the controller that same SIGTERM and waits for nginx to exit (cmd/waitshutdown); nginx's
//   worker-shutdown-timeout bounds the old workers; terminationGracePeriodSeconds bounds all of them.
//   The grace period flag is what makes the difference, the preStop only starts the same shutdown early.

import { createHash } from 'node:crypto';
import type { ChartedDataplane } from '../model/workload.ts';
import { TURN_PASSWORD, TURN_USER } from './coturn.ts';
import { ProfileCannotPlay, type GatewayPlan, type Profile } from './profile.ts';

export interface HelmChart {
  /** Chart name in its repository, an oci:// reference, or a local chart directory or .tgz (absolute). */
  chart: string;
  /** Chart repository URL (omitted for oci:// and local charts). */
  repo?: string;
  /** The chart version; a local chart is installed as it is, whatever it says. */
  version?: string;
  /** Values files given to helm before the run's own values (which override them). */
  valuesFiles?: string[];
  /** Start of the release name; releaseName() adds the run to it (the release goes into the run's namespace). */
  release: string;
}

/** What a run tells a chart: where it is installed and what its gateway must do. */
export interface ChartContext {
  namespace: string;
  /** The gateway workload the dataplane plays: its pods carry zerodrop.dev/workload=<workload>. */
  workload: string;
  replicas: number;
  /** The listener port clients reach (the scenario's gateway Service port). */
  port: number;
  dataplane: ChartedDataplane;
}

export interface ChartObject {
  /** Cluster-scoped objects outlive the namespace: the provider deletes them, and refuses them where it must stay in its namespace. */
  clusterScoped: boolean;
  object: Record<string, unknown>;
}

export interface HelmProfileSpec {
  name: string;
  naive: boolean;
  description: string;
  chart: HelmChart;
  /** What the dataplane carries (ChartedDataplane.protocol); other protocols make the profile unplayable. */
  protocols: readonly ChartedDataplane['protocol'][];
  values: (ctx: ChartContext) => Record<string, unknown>;
  /** Objects applied after the chart (Gateway API objects, Ingress, the system's own CRs). */
  objects: (ctx: ChartContext) => ChartObject[];
  /** Container port of the dataplane for a listener on `port`: the gateway Service's targetPort. */
  dataplanePort: (port: number) => number;
  /** terminationGracePeriodSeconds of the dataplane pods, as the chart's settings make it. */
  graceSeconds: number;
  /** What the documentation promises about the drain, for the timing assertions. */
  drain?: { minDrainSeconds: number; drainTimeoutSeconds: number };
  /** Labels of the dataplane pods (ChartedDataplane.selector), when the values do not label them zerodrop.dev/workload. */
  dataplaneSelector?: Record<string, string>;
  docs: string;
}

export const HELM_INSTALL_HINT = 'install Helm 3 (https://helm.sh/docs/intro/install/)';
const WORKLOAD_LABEL = 'zerodrop.dev/workload';
/** Name of the Gateway (or Ingress) each chart's objects create in the run's namespace. */
export const CHART_GATEWAY_NAME = 'zerodrop';

/** A per-run name for cluster-scoped objects, so that runs never share one. */
const perRun = (namespace: string) => `zerodrop-${namespace.replace(/^zerodrop-/, '')}`;

/** Helm's limit on a release name (maxReleaseNameLen in helm's pkg/chartutil/validate_name.go). */
export const RELEASE_NAME_MAX = 53;

/**
 * The chart's release for the run whose namespace is `namespace`: `<chart.release>-<run>`, so that
 * two runs on one cluster never upgrade each other's release, and the cluster-scoped objects a chart
 * names after its release (ClusterRoles of gateway-helm and ingress-nginx, "<fullname>") differ too.
 * Held to a DNS-1035 label of at most 53 characters (helm's limit, which leaves charts room for the
 * suffixes they append within a 63-character name); a run id that does not fit as it is keeps a
 * prefix and gets a hash of the whole namespace, so that distinct runs keep distinct names.
 */
export function releaseName(chart: Pick<HelmChart, 'release'>, namespace: string): string {
  const run = namespace.replace(/^zerodrop-/, '');
  const clean = run.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '');
  const name = `${chart.release}-${clean}`;
  if (clean === run && clean !== '' && name.length <= RELEASE_NAME_MAX) return name;
  const hash = createHash('sha256').update(namespace).digest('hex').slice(0, 8);
  const room = RELEASE_NAME_MAX - chart.release.length - hash.length - 2;
  const prefix = clean.slice(0, Math.max(0, room)).replace(/-+$/, '');
  return [chart.release, prefix, hash].filter((part) => part !== '').join('-');
}

function envoyGateway(naive: boolean): HelmProfileSpec {
  // Seed 004's production settings; the naive twin zeroes the drain so that Envoy exits at once.
  const shutdown = naive ? { drainTimeout: '0s', minDrainDuration: '0s' } : { drainTimeout: '600s', minDrainDuration: '15s' };
  // Envoy Gateway sets the Envoy pods' terminationGracePeriodSeconds to drainTimeout + 300 s
  // (expectedTerminationGracePeriodSeconds in PR 2633): 900 s for the 600 s drain.
  const grace = naive ? 300 : 900;
  const controllerName = (ns: string) => `gateway.envoyproxy.io/${perRun(ns)}`;
  return {
    name: naive ? 'envoy-gateway-naive' : 'envoy-gateway',
    naive,
    description: naive
      ? 'Envoy Gateway with the shutdown manager drain zeroed (drainTimeout 0 s): Envoy exits as soon as the pod is deleted.'
      : 'Envoy Gateway with its shutdown manager: min drain 15 s, drain timeout 600 s, terminationGracePeriodSeconds 900 s (PR 2633).',
    // v1.9.3: envoyproxy/gateway release-notes/v1.9.3.yaml (October 3, 2026). What its notes and
    // v1.9.2's (release-notes/v1.9.2.yaml, September 28, 2026) say about draining, in their words:
    // v1.9.2 "Fixed the shutdown manager exiting after the minimum drain period while UDP proxy
    // sessions were still active" (and, in the control plane, not the shutdown manager, "a panic
    // during shutdown caused by closing the shared infraIR/pResources channels"); v1.9.3 "Fixed the
    // shutdown-manager failing to create /tmp/shutdown-ready ... when the Envoy container's
    // securityContext sets readOnlyRootFilesystem: true". Fixed on main after v1.9.3, in no release
    // yet (release-notes/current/bug_fixes/10186-shutdown-ready-write-deadline.md): the shutdown
    // manager "failing to deliver the /shutdown/ready response when a drain outlasts its 10s write
    // timeout, which made the kubelet report FailedPreStopHook ... even though the drain completed";
    // this profile's minimum drain is 15 s, so the run records that event as a note, not a failure.
    // The OCI tag form `v1.9.3` is the one Envoy Gateway's install docs use (`--version v1.x.y`);
    // that the tag resolves is for a real `helm install` to confirm.
    chart: { chart: 'oci://docker.io/envoyproxy/gateway-helm', version: 'v1.9.3', release: 'eg' },
    protocols: ['http'],
    values: (ctx) => ({
      config: {
        envoyGateway: {
          // A controller per run (chart value config.envoyGateway.gateway.controllerName), watching
          // only the run's namespace, so that two installations never reconcile each other's Gateways.
          gateway: { controllerName: controllerName(ctx.namespace) },
          provider: { type: 'Kubernetes', kubernetes: { watch: { type: 'Namespaces', namespaces: [ctx.namespace] } } },
        },
      },
    }),
    objects: (ctx) => [
      {
        clusterScoped: false,
        object: {
          apiVersion: 'gateway.envoyproxy.io/v1alpha1',
          kind: 'EnvoyProxy',
          metadata: { name: CHART_GATEWAY_NAME, namespace: ctx.namespace },
          spec: {
            shutdown,
            provider: {
              type: 'Kubernetes',
              kubernetes: {
                envoyDeployment: { replicas: ctx.replicas, pod: { labels: { [WORKLOAD_LABEL]: ctx.workload } } },
                // The scenario's own Service reaches the pods; Envoy's stays inside the cluster.
                envoyService: { type: 'ClusterIP' },
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
          metadata: { name: perRun(ctx.namespace) },
          spec: {
            controllerName: controllerName(ctx.namespace),
            parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: CHART_GATEWAY_NAME, namespace: ctx.namespace },
          },
        },
      },
      {
        clusterScoped: false,
        object: {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'Gateway',
          metadata: { name: CHART_GATEWAY_NAME, namespace: ctx.namespace },
          spec: { gatewayClassName: perRun(ctx.namespace), listeners: [{ name: 'http', port: ctx.port, protocol: 'HTTP' }] },
        },
      },
      {
        clusterScoped: false,
        object: {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'HTTPRoute',
          metadata: { name: CHART_GATEWAY_NAME, namespace: ctx.namespace },
          spec: {
            parentRefs: [{ name: CHART_GATEWAY_NAME }],
            rules: [{ backendRefs: [{ name: ctx.dataplane.routesTo.service, port: ctx.dataplane.routesTo.port }] }],
          },
        },
      },
    ],
    dataplanePort: (port) => (port < 1024 ? port + 10_000 : port),
    graceSeconds: grace,
    ...(naive ? {} : { drain: { minDrainSeconds: 15, drainTimeoutSeconds: 600 } }),
    docs: 'https://gateway.envoyproxy.io/v1.9/tasks/operations/graceful-shutdown/',
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
    // The operator's ClusterRoles and ClusterRoleBindings have fixed names (stunner-gateway-operator-*,
    // templates/stunner-gateway-operator.yaml of l7mp/stunner-helm), and so has the chart's own
    // cluster-scoped Dataplane `default` (stunner-default-dataplane.yaml), which no value renames: a
    // second STUNner run on the same cluster fails at `helm install` (helm refuses objects another
    // release owns) rather than sharing the first run's operator. The runs' own Dataplane is per run.
    // 1.1.0: `version: 1.1.0`, `appVersion: 1.1.0` in l7mp/stunner-helm helm/stunner-gateway-operator/Chart.yaml;
    // that the chart index at l7mp.io/stunner serves it is for a real `helm install` to confirm.
    chart: { chart: 'stunner-gateway-operator', repo: 'https://l7mp.io/stunner', version: '1.1.0', release: 'stunner' },
    protocols: ['turn'],
    values: () => ({}),
    objects: (ctx) => [
      {
        // Dataplane is cluster-scoped (api/v1/dataplane_types.go): one per run, named by the
        // GatewayConfig's spec.dataplane. Its labels go onto the stunnerd pods.
        clusterScoped: true,
        object: {
          apiVersion: 'stunner.l7mp.io/v1',
          kind: 'Dataplane',
          metadata: { name: perRun(ctx.namespace) },
          spec: {
            // stunnerd of the chart's release (appVersion 1.1.0 of stunner-gateway-operator; the
            // chart's own artifacthub.io/images annotation still lists stunnerd:1.0.0). The tag's
            // existence on Docker Hub is not readable here: a real pull confirms it.
            image: 'docker.io/l7mp/stunnerd:1.1.0',
            replicas: ctx.replicas,
            terminationGracePeriodSeconds: grace,
            labels: { [WORKLOAD_LABEL]: ctx.workload },
          },
        },
      },
      {
        clusterScoped: false,
        object: {
          apiVersion: 'stunner.l7mp.io/v1',
          kind: 'GatewayConfig',
          metadata: { name: CHART_GATEWAY_NAME, namespace: ctx.namespace },
          // Static (plaintext) long-term credentials, the ones the TURN load authenticates with.
          spec: { dataplane: perRun(ctx.namespace), realm: 'stunner.l7mp.io', authType: 'static', userName: TURN_USER, password: TURN_PASSWORD },
        },
      },
      {
        clusterScoped: true,
        object: {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'GatewayClass',
          metadata: { name: perRun(ctx.namespace) },
          spec: {
            controllerName: 'stunner.l7mp.io/gateway-operator',
            parametersRef: { group: 'stunner.l7mp.io', kind: 'GatewayConfig', name: CHART_GATEWAY_NAME, namespace: ctx.namespace },
          },
        },
      },
      {
        clusterScoped: false,
        object: {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'Gateway',
          // The operator's own Service for the Gateway stays ClusterIP (stunner.l7mp.io/service-type).
          metadata: { name: CHART_GATEWAY_NAME, namespace: ctx.namespace, annotations: { 'stunner.l7mp.io/service-type': 'ClusterIP' } },
          spec: { gatewayClassName: perRun(ctx.namespace), listeners: [{ name: 'turn-udp', port: ctx.port, protocol: 'TURN-UDP' }] },
        },
      },
      {
        clusterScoped: false,
        object: {
          apiVersion: 'gateway.networking.k8s.io/v1alpha2',
          kind: 'UDPRoute',
          metadata: { name: CHART_GATEWAY_NAME, namespace: ctx.namespace },
          // STUNner ignores the port of a backend Service (l7mp/stunner issue 87); the Gateway API requires one.
          spec: { parentRefs: [{ name: CHART_GATEWAY_NAME }], rules: [{ backendRefs: [{ name: ctx.dataplane.routesTo.service, port: ctx.dataplane.routesTo.port }] }] },
        },
      },
    ],
    // stunnerd listens on the Gateway listener's port itself.
    dataplanePort: (port) => port,
    graceSeconds: grace,
    docs: 'https://github.com/l7mp/stunner/blob/main/docs/GATEWAY.md (Gateway, UDPRoute, Dataplane), seeds 000 and 002',
  };
}

function ingressNginx(naive: boolean): HelmProfileSpec {
  return {
    name: naive ? 'ingress-nginx-naive' : 'ingress-nginx',
    naive,
    description: naive
      ? 'ingress-nginx with --shutdown-grace-period=0 (the default) and without the /wait-shutdown preStop: nginx stops while load balancers still send to it.'
      : 'ingress-nginx with the chart\'s /wait-shutdown preStop and --shutdown-grace-period=15, inside terminationGracePeriodSeconds 300.',
    // 4.13.9: kubernetes/ingress-nginx charts/ingress-nginx/changelog/helm-chart-4.13.9.md ("Update
    // Ingress-Nginx version controller-v1.13.9"), the last 4.13 changelog in the stored history.
    // Ingress NGINX is retired upstream (best-effort maintenance ended in March 2026); it stays here
    // because many clusters still run it.
    chart: { chart: 'ingress-nginx', repo: 'https://kubernetes.github.io/ingress-nginx', version: '4.13.9', release: 'ingress-nginx' },
    protocols: ['http'],
    values: (ctx) => ({
      controller: {
        replicaCount: ctx.replicas,
        podLabels: { [WORKLOAD_LABEL]: ctx.workload },
        // An IngressClass per run, so that two runs never program each other's controller.
        ingressClassResource: { name: perRun(ctx.namespace), controllerValue: `k8s.io/${perRun(ctx.namespace)}` },
        ingressClass: perRun(ctx.namespace),
        // Watch only the run's namespace.
        scope: { enabled: true },
        service: { type: 'ClusterIP' },
        admissionWebhooks: { enabled: false },
        terminationGracePeriodSeconds: naive ? 30 : 300,
        extraArgs: { 'shutdown-grace-period': naive ? '0' : '15' },
        // The chart's default preStop is /wait-shutdown. Helm merges values into the chart's defaults
        // and deletes a default key only when it is set to null (helm.sh docs, "Deleting a default
        // key"): an empty map would keep the preStop. The naive twin removes it.
        lifecycle: naive ? null : { preStop: { exec: { command: ['/wait-shutdown'] } } },
        config: { 'worker-shutdown-timeout': naive ? '0s' : '240s' },
      },
    }),
    objects: (ctx) => [
      {
        clusterScoped: false,
        object: {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'Ingress',
          metadata: { name: CHART_GATEWAY_NAME, namespace: ctx.namespace },
          spec: {
            ingressClassName: perRun(ctx.namespace),
            rules: [
              {
                http: {
                  paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: ctx.dataplane.routesTo.service, port: { number: ctx.dataplane.routesTo.port } } } }],
                },
              },
            ],
          },
        },
      },
    ],
    // The controller's http container port (chart value controller.containerPort.http, default 80).
    dataplanePort: () => 80,
    graceSeconds: naive ? 30 : 300,
    docs: 'https://kubernetes.github.io/ingress-nginx/ (controller flags: --shutdown-grace-period; ConfigMap worker-shutdown-timeout; chart values controller.lifecycle)',
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

/** Chart profiles by name: the built-in ones and those a config defines (defineHelmProfile), which register here. */
const specs = new Map<string, HelmProfileSpec>(HELM_PROFILE_SPECS.map((s) => [s.name, s]));

export function helmProfileSpec(name: string): HelmProfileSpec | undefined {
  return specs.get(name);
}

/** The profile's gateway: the chart's dataplane, routed to the scenario's backend Service. */
function chartGateway(spec: HelmProfileSpec): Profile['gateway'] {
  return (request): GatewayPlan => {
    const protocol = request.protocol === 'turn' ? 'turn' : request.protocol === 'http' ? 'http' : undefined;
    if (!protocol || !spec.protocols.includes(protocol)) {
      throw new ProfileCannotPlay(`profile ${spec.name} carries ${spec.protocols.join(', ')}, not ${request.protocol}`);
    }
    return {
      // Never started by zerodrop: the chart's controller runs the dataplane with its own probes.
      command: [],
      env: {},
      readinessProbe: { handler: { tcpSocket: { port: request.port } }, periodSeconds: 1, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 1, initialDelaySeconds: 0 },
      terminationGracePeriodSeconds: spec.graceSeconds,
      ...(spec.drain ? { drain: spec.drain } : {}),
      installedBy: {
        helmProfile: spec.name,
        protocol,
        routesTo: { service: request.backendService, port: request.backendPort },
        ...(spec.dataplaneSelector ? { selector: spec.dataplaneSelector } : {}),
      },
    };
  };
}

/**
 * The Helm systems as profiles: skipped with the install hint when helm is missing; their gateway is
 * the chart's dataplane, which only cluster providers install (the local provider skips the
 * scenario with the reason, src/providers/support.ts).
 */
export function helmProfile(spec: HelmProfileSpec): Profile {
  const known = specs.get(spec.name);
  if (known !== undefined && known !== spec) throw new Error(`a chart profile named ${spec.name} exists already`);
  specs.set(spec.name, spec);
  return {
    name: spec.name,
    kind: spec.naive ? 'naive' : 'system',
    description: spec.description,
    requires: [{ binary: 'helm', install: HELM_INSTALL_HINT }],
    gateway: chartGateway(spec),
  };
}

export const helmProfiles: Profile[] = HELM_PROFILE_SPECS.map(helmProfile);
