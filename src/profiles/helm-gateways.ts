// Real gateways installed with their own Helm charts, on the cluster providers, each defined with
// the public defineHelmProfile as a team would write it in its zerodrop.config.ts
// (docs/own-gateway.md), and each twice: drain-correct (the values and objects that carry the drain
// settings its documentation recommends) and `-naive` (the setting that is known to drop traffic).
// The chart's dataplane pods carry DATAPLANE_LABEL=<the run's gateway workload> through the chart's
// own pod-label setting; cluster-scoped objects are named per run (perRunName), so that two runs on
// one cluster never share one.
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

import { DATAPLANE_LABEL, defineHelmProfile, perRunName } from './define-helm.ts';
import { TURN_PASSWORD, TURN_USER } from './coturn.ts';
import { helmProfileSpec, type ChartContext, type ChartObject, type HelmProfileSpec } from './helm-charts.ts';
import type { Profile } from './profile.ts';

/** Name of the Gateway (or Ingress) each chart's objects create in the run's namespace. */
const CHART_GATEWAY_NAME = 'zerodrop';

const envoyControllerName = (namespace: string) => `gateway.envoyproxy.io/${perRunName(namespace)}`;

/** The run's EnvoyProxy (with the shutdown manager's drain settings), GatewayClass, Gateway and HTTPRoute. */
const envoyObjects =
  (shutdown: { drainTimeout: string; minDrainDuration: string }) =>
  (ctx: ChartContext): ChartObject[] => [
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
              envoyDeployment: { replicas: ctx.replicas, pod: { labels: { [DATAPLANE_LABEL]: ctx.workload } } },
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
        metadata: { name: perRunName(ctx.namespace) },
        spec: {
          controllerName: envoyControllerName(ctx.namespace),
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
        spec: { gatewayClassName: perRunName(ctx.namespace), listeners: [{ name: 'http', port: ctx.port, protocol: 'HTTP' }] },
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
  ];

export const envoyGateway = defineHelmProfile({
  name: 'envoy-gateway',
  description: 'Envoy Gateway with its shutdown manager: min drain 15 s, drain timeout 600 s, terminationGracePeriodSeconds 900 s (PR 2633).',
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
        gateway: { controllerName: envoyControllerName(ctx.namespace) },
        provider: { type: 'Kubernetes', kubernetes: { watch: { type: 'Namespaces', namespaces: [ctx.namespace] } } },
      },
    },
  }),
  // Seed 004's production settings.
  objects: envoyObjects({ drainTimeout: '600s', minDrainDuration: '15s' }),
  dataplanePort: (port) => (port < 1024 ? port + 10_000 : port),
  // Envoy Gateway sets the Envoy pods' terminationGracePeriodSeconds to drainTimeout + 300 s
  // (expectedTerminationGracePeriodSeconds in PR 2633): 900 s for the 600 s drain.
  terminationGracePeriodSeconds: 900,
  drain: { minDrainSeconds: 15, drainTimeoutSeconds: 600 },
  // The chart's controller Deployment (gateway-helm templates/envoy-gateway-deployment.yaml).
  controller: { deployment: 'envoy-gateway' },
  docs: 'https://gateway.envoyproxy.io/v1.9/tasks/operations/graceful-shutdown/',
  naive: {
    description: 'Envoy Gateway with the shutdown manager drain zeroed (drainTimeout 0 s): Envoy exits as soon as the pod is deleted.',
    // The drain zeroed, so that Envoy exits at once: 0 s + 300 s of grace, and no drain promised.
    objects: envoyObjects({ drainTimeout: '0s', minDrainDuration: '0s' }),
    terminationGracePeriodSeconds: 300,
    drain: undefined,
  },
});

// The Kubernetes default grace period (30 s) cuts live TURN allocations; STUNner's own default is 3600 s.
const STUNNER_GRACE_SECONDS = 3600;
const KUBERNETES_DEFAULT_GRACE_SECONDS = 30;

/** What differs between the STUNner releases the profiles run. */
interface StunnerRelease {
  /** stunnerd's image for the Dataplane. */
  image: string;
  /**
   * Whether the Dataplane has spec.labels (for the stunnerd pods). 0.18.0's has not (its schema
   * refuses the field); its pods are found by the labels its operator always sets.
   */
  podLabels: boolean;
}

/**
 * The UDPRoute's backends are also the peers stunnerd admits: a TURN permission is granted, and a
 * relayed packet passed, only to a peer inside one of the route's clusters (handlers.go
 * NewPermissionHandler, relay.go GenPortRangeChecker of stunner v0.18.0; a refused ChannelBind is
 * answered 401, internal/server/turn.go of pion/turn v3.0.1).
 * - `service`: the scenario's backend Service; the operator renders its ClusterIP and its ready pod
 *   addresses (EDS) into the cluster, so a pod leaves it when the endpoints say so;
 * - `service+pod-cidrs`: the same, and beside it a StaticService whose prefixes are the cluster's
 *   pod address ranges, which the operator copies into the same STATIC cluster as they are
 *   (internal/renderer/cluster_render.go getEndpointsForStaticService, stunner-gateway-operator
 *   v0.18.0): no endpoint change removes a pod from them, and any address of the ranges is admitted.
 */
type StunnerBackends = 'service' | 'service+pod-cidrs';

/** The UDPRoute's backendRefs, and the StaticService they name (before the route; teardown deletes it after the route, apply.ts). */
function stunnerBackends(backends: StunnerBackends, ctx: ChartContext): { backendRefs: Record<string, unknown>[]; objects: ChartObject[] } {
  // STUNner ignores the port of a backend Service (https://github.com/l7mp/stunner/issues/87); the Gateway API requires one.
  const service = { name: ctx.dataplane.routesTo.service, port: ctx.dataplane.routesTo.port };
  if (backends === 'service') return { backendRefs: [service], objects: [] };
  if (ctx.podCidrs.length === 0) throw new Error("a StaticService of the cluster's pod address ranges needs the Nodes' spec.podCIDRs, and the run's account cannot read them (or no Node has one)");
  return {
    // No port: a StaticService admits every port of its prefixes (a port would narrow each to it).
    backendRefs: [service, { group: 'stunner.l7mp.io', kind: 'StaticService', name: CHART_GATEWAY_NAME }],
    objects: [
      {
        clusterScoped: false,
        object: { apiVersion: 'stunner.l7mp.io/v1', kind: 'StaticService', metadata: { name: CHART_GATEWAY_NAME, namespace: ctx.namespace }, spec: { prefixes: [...ctx.podCidrs] } },
      },
    ],
  };
}

/** The run's Dataplane (with the stunnerd pods' grace period), GatewayConfig, GatewayClass, Gateway, UDPRoute and its backend. */
const stunnerObjects =
  (grace: number, release: StunnerRelease, backends: StunnerBackends = 'service') =>
  (ctx: ChartContext): ChartObject[] => {
    const route = stunnerBackends(backends, ctx);
    return [
    {
      // Dataplane is cluster-scoped (api/v1/dataplane_types.go): one per run, named by the
      // GatewayConfig's spec.dataplane. Its labels go onto the stunnerd pods.
      clusterScoped: true,
      object: {
        apiVersion: 'stunner.l7mp.io/v1',
        kind: 'Dataplane',
        metadata: { name: perRunName(ctx.namespace) },
        spec: {
          image: release.image,
          replicas: ctx.replicas,
          terminationGracePeriodSeconds: grace,
          ...(release.podLabels ? { labels: { [DATAPLANE_LABEL]: ctx.workload } } : {}),
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
        spec: { dataplane: perRunName(ctx.namespace), realm: 'stunner.l7mp.io', authType: 'static', userName: TURN_USER, password: TURN_PASSWORD },
      },
    },
    {
      clusterScoped: true,
      object: {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'GatewayClass',
        metadata: { name: perRunName(ctx.namespace) },
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
        spec: { gatewayClassName: perRunName(ctx.namespace), listeners: [{ name: 'turn-udp', port: ctx.port, protocol: 'TURN-UDP' }] },
      },
    },
    // Before the route that names it, so that the operator resolves the route's backend at once.
    ...route.objects,
    {
      clusterScoped: false,
      object: {
        apiVersion: 'gateway.networking.k8s.io/v1alpha2',
        kind: 'UDPRoute',
        metadata: { name: CHART_GATEWAY_NAME, namespace: ctx.namespace },
        spec: { parentRefs: [{ name: CHART_GATEWAY_NAME }], rules: [{ backendRefs: route.backendRefs }] },
      },
    },
  ];
  };

const STUNNER_1_1: StunnerRelease = { image: 'docker.io/l7mp/stunnerd:1.1.0', podLabels: true };

export const stunner = defineHelmProfile({
  name: 'stunner',
  description: 'STUNner with its graceful shutdown: the dataplane keeps relaying and accepting allocations for up to 3600 s after the delete.',
  // The operator's ClusterRoles and ClusterRoleBindings have fixed names (stunner-gateway-operator-*,
  // templates/stunner-gateway-operator.yaml of l7mp/stunner-helm), and so has the chart's own
  // cluster-scoped Dataplane `default` (stunner-default-dataplane.yaml), which no value renames: a
  // second STUNner run on the same cluster fails at `helm install` (helm refuses objects another
  // release owns) rather than sharing the first run's operator. The runs' own Dataplane is per run.
  // 1.1.0: `version: 1.1.0`, `appVersion: 1.1.0` in l7mp/stunner-helm helm/stunner-gateway-operator/Chart.yaml;
  // that the chart index at l7mp.io/stunner serves it is for a real `helm install` to confirm.
  chart: { chart: 'stunner-gateway-operator', repo: 'https://l7mp.io/stunner', version: '1.1.0', release: 'stunner' },
  protocols: ['turn'],
  // stunnerd of the chart's release (appVersion 1.1.0 of stunner-gateway-operator; the chart's own
  // artifacthub.io/images annotation still lists stunnerd:1.0.0). The tag's existence on Docker Hub
  // is not readable here: a real pull confirms it.
  objects: stunnerObjects(STUNNER_GRACE_SECONDS, STUNNER_1_1),
  // stunnerd listens on the Gateway listener's port itself.
  dataplanePort: (port) => port,
  terminationGracePeriodSeconds: STUNNER_GRACE_SECONDS,
  // The chart's stunnerGatewayOperator.deployment.name (default), in the release's namespace.
  controller: { deployment: 'stunner-gateway-operator' },
  docs: 'https://github.com/l7mp/stunner/blob/main/docs/GATEWAY.md (Gateway, UDPRoute, Dataplane), seeds 000 and 002',
  naive: {
    description: 'STUNner with terminationGracePeriodSeconds 30 (the Kubernetes default): allocations still relaying are cut when the grace period ends.',
    objects: stunnerObjects(KUBERNETES_DEFAULT_GRACE_SECONDS, STUNNER_1_1),
    terminationGracePeriodSeconds: KUBERNETES_DEFAULT_GRACE_SECONDS,
  },
});

const stunner018Chart = { chart: 'stunner-gateway-operator', repo: 'https://l7mp.io/stunner', version: '0.18.0', release: 'stunner' };
const STUNNER_0_18: StunnerRelease = { image: 'docker.io/l7mp/stunnerd:0.18.0', podLabels: false };
// What 0.18.0's operator puts on every stunnerd pod (internal/renderer/dataplane_util.go), the
// Gateway's name being the run's own in its namespace.
const stunner018Selector = { app: 'stunner', 'stunner.l7mp.io/related-gateway-name': CHART_GATEWAY_NAME };

/**
 * STUNner 0.18.0, the last release whose operator feeds stunnerd its backends from the legacy
 * Endpoints API, which drops a pod the moment it terminates (seed 000; 0.19.0 moved to EndpointSlices,
 * seed 002). The release the netns cluster builds from Go modules and installs itself
 * (stunner/go.mod; src/providers/netns/chart-stand-ins.ts); with helm, chart 0.18.0 of the same repository.
 */
export const stunner018 = defineHelmProfile({
  name: 'stunner-018',
  description: 'STUNner 0.18.0 with its graceful shutdown (3600 s): the release before the EndpointSlice controller.',
  chart: stunner018Chart,
  protocols: ['turn'],
  objects: stunnerObjects(STUNNER_GRACE_SECONDS, STUNNER_0_18),
  dataplaneSelector: stunner018Selector,
  dataplanePort: (port) => port,
  terminationGracePeriodSeconds: STUNNER_GRACE_SECONDS,
  controller: { deployment: 'stunner-gateway-operator' },
  docs: 'https://github.com/l7mp/stunner-gateway-operator/releases/tag/v0.18.0 (the release), https://github.com/l7mp/stunner/blob/main/docs/GATEWAY.md, seeds 000 and 002',
});

/**
 * STUNner 0.18.0 made drain-correct without the EndpointSlice controller: its UDPRoute routes to the
 * backend Service as stunner-018's does, and to a StaticService of the cluster's pod address ranges
 * beside it, so the cluster stunnerd checks peers against keeps a terminating backend pod's address
 * (the Endpoints API's removal of it changes nothing) and the Service's ClusterIP. The cost:
 * stunnerd admits any address of those ranges, not only the backend's pods. STUNner documents
 * StaticService for backends outside the cluster
 * (https://github.com/l7mp/stunner/blob/main/docs/GATEWAY.md#staticservice); the pod ranges are a
 * range like any other to it.
 */
export const stunner018Static = defineHelmProfile({
  name: 'stunner-018-static',
  description: "STUNner 0.18.0 (graceful shutdown, 3600 s) routing to its backend Service and a StaticService of the cluster's pod CIDRs: pod peers are admitted by address, so a terminating backend stays reachable.",
  chart: stunner018Chart,
  protocols: ['turn'],
  objects: stunnerObjects(STUNNER_GRACE_SECONDS, STUNNER_0_18, 'service+pod-cidrs'),
  dataplaneSelector: stunner018Selector,
  dataplanePort: (port) => port,
  terminationGracePeriodSeconds: STUNNER_GRACE_SECONDS,
  controller: { deployment: 'stunner-gateway-operator' },
  docs: 'https://github.com/l7mp/stunner/blob/main/docs/GATEWAY.md (StaticService), stunner-gateway-operator v0.18.0 internal/renderer/cluster_render.go, seed 000',
});

/** The drain settings the two ingress-nginx definitions differ in. */
interface IngressNginxDrain {
  grace: number;
  shutdownGracePeriod: string;
  preStop: boolean;
  workerShutdownTimeout: string;
}

const ingressNginxValues =
  (drain: IngressNginxDrain) =>
  (ctx: ChartContext): Record<string, unknown> => ({
    controller: {
      replicaCount: ctx.replicas,
      podLabels: { [DATAPLANE_LABEL]: ctx.workload },
      // An IngressClass per run, so that two runs never program each other's controller.
      ingressClassResource: { name: perRunName(ctx.namespace), controllerValue: `k8s.io/${perRunName(ctx.namespace)}` },
      ingressClass: perRunName(ctx.namespace),
      // Watch only the run's namespace.
      scope: { enabled: true },
      service: { type: 'ClusterIP' },
      admissionWebhooks: { enabled: false },
      terminationGracePeriodSeconds: drain.grace,
      extraArgs: { 'shutdown-grace-period': drain.shutdownGracePeriod },
      // The chart's default preStop is /wait-shutdown. Helm merges values into the chart's defaults
      // and deletes a default key only when it is set to null (helm.sh docs, "Deleting a default
      // key"): an empty map would keep the preStop. The naive twin removes it.
      lifecycle: drain.preStop ? { preStop: { exec: { command: ['/wait-shutdown'] } } } : null,
      config: { 'worker-shutdown-timeout': drain.workerShutdownTimeout },
    },
  });

const ingressNginxDrainCorrect: IngressNginxDrain = { grace: 300, shutdownGracePeriod: '15', preStop: true, workerShutdownTimeout: '240s' };
const ingressNginxDefaults: IngressNginxDrain = { grace: 30, shutdownGracePeriod: '0', preStop: false, workerShutdownTimeout: '0s' };

/** The run's Ingress, of the run's own IngressClass. */
const ingressNginxObjects = (ctx: ChartContext): ChartObject[] => [
  {
    clusterScoped: false,
    object: {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: CHART_GATEWAY_NAME, namespace: ctx.namespace },
      spec: {
        ingressClassName: perRunName(ctx.namespace),
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
];

export const ingressNginx = defineHelmProfile({
  name: 'ingress-nginx',
  description: 'ingress-nginx with the chart\'s /wait-shutdown preStop and --shutdown-grace-period=15, inside terminationGracePeriodSeconds 300.',
  // 4.13.9: kubernetes/ingress-nginx charts/ingress-nginx/changelog/helm-chart-4.13.9.md ("Update
  // Ingress-Nginx version controller-v1.13.9"), the last 4.13 changelog in the stored history.
  // Ingress NGINX is retired upstream (best-effort maintenance ended in March 2026); it stays here
  // because many clusters still run it.
  chart: { chart: 'ingress-nginx', repo: 'https://kubernetes.github.io/ingress-nginx', version: '4.13.9', release: 'ingress-nginx' },
  protocols: ['http'],
  values: ingressNginxValues(ingressNginxDrainCorrect),
  objects: ingressNginxObjects,
  // The controller's http container port (chart value controller.containerPort.http, default 80).
  dataplanePort: () => 80,
  terminationGracePeriodSeconds: ingressNginxDrainCorrect.grace,
  docs: 'https://kubernetes.github.io/ingress-nginx/ (controller flags: --shutdown-grace-period; ConfigMap worker-shutdown-timeout; chart values controller.lifecycle)',
  naive: {
    description: 'ingress-nginx with --shutdown-grace-period=0 (the default) and without the /wait-shutdown preStop: nginx stops while load balancers still send to it.',
    values: ingressNginxValues(ingressNginxDefaults),
    terminationGracePeriodSeconds: ingressNginxDefaults.grace,
  },
});

export const helmProfiles: Profile[] = [envoyGateway, envoyGateway.naive!, stunner, stunner.naive!, stunner018, stunner018Static, ingressNginx, ingressNginx.naive!];

/** What defineHelmProfile registered for each: the chart, values and objects the kube provider installs. */
export const HELM_PROFILE_SPECS: readonly HelmProfileSpec[] = helmProfiles.map((p) => helmProfileSpec(p.name)!);
