// Renders a Topology to the Kubernetes objects of one run, and validates them with kubernetes-models
// (the OpenAPI schemas of the Kubernetes API) before anything is sent to a cluster.
//
// One Namespace per run holds everything the run creates, so that teardown is one namespace delete
// and can never touch anything else. The reference apps (fixtures/*.mjs) are shipped in a ConfigMap
// and run on a stock Node.js image: no image is built or loaded. A profile defined with defineProfile
// runs its own argv on its image (or its program's stock one), its configuration templates shipped in
// a ConfigMap of their own and rendered into the pod's emptyDir by an init container. The Workload's
// fields are named after core/v1 and apps/v1 and map one to one; where Kubernetes is coarser than the
// local provider (probe periods in whole seconds, minimum 1) the value is rounded up.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service as ServiceModel } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { Gateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import { GatewayClass } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GatewayClass';
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import { UDPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1alpha2/UDPRoute';
import { disruptionBudgetsOf, type DisruptionBudget, type Probe, type Service, type Topology, type Workload } from '../../model/workload.ts';
import { helmProfileSpec, type HelmProfileSpec } from '../../profiles/helm-charts.ts';
import type { KubeObject } from './list-watch.ts';
import { shellWord } from '../../profiles/define.ts';
import { executableOf, statedStopSignal } from './stop-signal.ts';
import { appBundle, BUNDLED_APPS } from './app-bundle.ts';

export const LABELS = {
  run: 'zerodrop.dev/run',
  workload: 'zerodrop.dev/workload',
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

/**
 * A stock image with Node.js 24 and nothing else: the reference apps need only node: built-ins.
 * A moving tag on purpose (the newest Node 24 patch), not a digest; the Docker Official Images'
 * tag list is not readable here, so only a real pull confirms it (docs/kubernetes-pins.md).
 */
export const NODE_IMAGE = 'node:24-alpine';
/** Where the fixtures ConfigMap is mounted in every container; `fixtures/x.mjs` becomes `/zerodrop/fixtures/x.mjs`. */
export const FIXTURES_MOUNT = '/zerodrop/fixtures';
export const FIXTURES_CONFIGMAP = 'zerodrop-fixtures';
export const MAIN_CONTAINER = 'main';

/** Scratch directory of a pod that renders its configuration (render.mjs's ZERODROP_POD_DIR), an emptyDir. */
export const POD_DIR = '/zerodrop/pod';

/**
 * The stock image each program of a command runs on in a cluster. Programs not listed cannot run
 * there. The real systems' official images carry their own STOPSIGNAL (stop-signal.ts): the
 * renderer states a workload's stop signal only where it differs from its image's.
 */
export const IMAGES: Readonly<Record<string, string>> = {
  node: NODE_IMAGE,
  nginx: 'nginx:1.29-alpine',
  haproxy: 'haproxy:3.2-alpine',
  caddy: 'caddy:2.10-alpine',
  turnserver: 'coturn/coturn:4.6',
};

/** A repository path to a fixture, as an argument or inside a shell script. */
const FIXTURE_REF = /(?<![\w/$])fixtures\/[\w.-]+(?:\/[\w.-]+)*/g;
/** The renderer of a defined pod's templates (defineProfile's `config`), run by its init container. */
export const RENDER_FIXTURE = 'fixtures/gateways/render.mjs';
/** Where a defined pod's templates (its own ConfigMap) are mounted in its init container. */
export const CONFIG_MOUNT = '/zerodrop/config';
/** The ConfigMap of a workload's templates. */
export const configMapName = (workload: string): string => `${workload}-config`;

export interface RenderOptions {
  namespace: string;
  runId: string;
  /** Contents of every fixture a command names, by its repository path (`fixtures/reference-backend.mjs`). */
  fixtures: Record<string, string>;
  /** NodePorts the provider publishes to the harness, by Service and port name; those Services become type NodePort. */
  nodePorts?: Record<string, Record<string, number>>;
  /** Services that get type LoadBalancer (clusters with a load balancer controller). */
  loadBalancers?: readonly string[];
  images?: Readonly<Record<string, string>>;
}

export class ManifestError extends Error {}

/** A reference app at the top of fixtures/ (not a gateway template or render.mjs). */
const REFERENCE_APP = /^fixtures\/[\w.-]+\.mjs$/;
/**
 * The module every reference app imports (`./pod-env.mjs`). It is mounted beside the app, so Node
 * resolves the relative import inside the ConfigMap volume as it does in the repository.
 */
export const FIXTURE_SHARED_MODULE = 'fixtures/pod-env.mjs';

/**
 * Repository paths of the fixtures the topology's commands name (arguments, or paths inside a shell
 * script), plus the shared module of the reference apps among them and what a bundled app reads
 * beside itself (app-bundle.ts).
 */
export function fixturesOf(topology: Topology): string[] {
  const paths = new Set<string>();
  for (const w of topology.workloads) {
    // A defined pod's own argv: its local command also names the templates, which travel in its own ConfigMap.
    for (const arg of w.defined?.argv ?? w.command) for (const m of arg.matchAll(FIXTURE_REF)) paths.add(m[0]);
    if (w.defined && Object.keys(w.defined.templates).length > 0) paths.add(RENDER_FIXTURE);
  }
  if ([...paths].some((p) => REFERENCE_APP.test(p))) paths.add(FIXTURE_SHARED_MODULE);
  for (const p of [...paths]) for (const read of BUNDLED_APPS[p]?.reads ?? []) paths.add(read);
  return [...paths].sort();
}

/**
 * The contents of the fixtures the topology names (fixturesOf), read below `root`: RenderOptions.fixtures.
 * An app that imports npm packages is shipped as its bundle (app-bundle.ts).
 */
export async function readFixtures(topology: Topology, root: string): Promise<Record<string, string>> {
  const fixtures: Record<string, string> = {};
  for (const path of fixturesOf(topology)) fixtures[path] = BUNDLED_APPS[path] ? await appBundle(path, root) : await readFile(join(root, path), 'utf8');
  return fixtures;
}

/** ConfigMap keys allow only [-._a-zA-Z0-9]: `fixtures/gateways/nginx/nginx.conf` -> `gateways__nginx__nginx.conf`. */
export function fixtureKey(path: string): string {
  return path.replace(/^fixtures\//, '').replaceAll('/', '__');
}

function mountedPath(arg: string): string {
  return arg.replace(FIXTURE_REF, (m) => `${FIXTURES_MOUNT}/${m.replace(/^fixtures\//, '')}`);
}

export function namespaceFor(runId: string): string {
  return `zerodrop-${runId}`;
}

function wholeSeconds(value: number, min: number): number {
  return Math.max(min, Math.ceil(value));
}

function renderProbe(probe: Probe): Record<string, unknown> {
  const h = probe.handler;
  const handler =
    'tcpSocket' in h ? { tcpSocket: { port: h.tcpSocket.port } } : 'httpGet' in h ? { httpGet: { port: h.httpGet.port, path: h.httpGet.path } } : { exec: { command: h.exec.command } };
  return {
    ...handler,
    periodSeconds: wholeSeconds(probe.periodSeconds, 1),
    timeoutSeconds: wholeSeconds(probe.timeoutSeconds, 1),
    successThreshold: wholeSeconds(probe.successThreshold, 1),
    failureThreshold: wholeSeconds(probe.failureThreshold, 1),
    initialDelaySeconds: wholeSeconds(probe.initialDelaySeconds, 0),
  };
}

interface RenderedCommand {
  image: string;
  command: string[];
  /** argv of an init container (on the node image) that renders the pod's configuration into POD_DIR. */
  render?: string[];
  /** The pod uses its scratch directory POD_DIR (an emptyDir). */
  podDir: boolean;
}

/**
 * Maps a pod's argv to a cluster container. A defined pod (defineProfile) runs its own argv through
 * the image's `sh`, which expands `${NAME}` from the container's environment as the local pod's shell
 * does; its templates, shipped in its ConfigMap, are rendered into the pod's emptyDir by an init
 * container on Node.js (render.mjs, the renderer the local provider runs). Otherwise the command runs
 * as it is: `node fixtures/x.mjs ...` (a reference app) or any argv, fixture paths mapped to the mount.
 */
function renderCommand(workload: Workload, images: Readonly<Record<string, string>>): RenderedCommand {
  const { executable } = executableOf(workload);
  const image = workload.image ?? images[executable];
  if (!image) {
    throw new ManifestError(
      `workload ${workload.name} runs "${executable}", which has no image for clusters (known: ${Object.keys(images).join(', ')}); give its profile an image`,
    );
  }
  const defined = workload.defined;
  if (!defined) return { image, command: workload.command.map(mountedPath), podDir: false };
  const files = Object.keys(defined.templates);
  return {
    image,
    command: ['sh', '-c', `exec ${defined.argv.map((a) => shellWord(mountedPath(a))).join(' ')}`],
    ...(files.length > 0 ? { render: ['node', mountedPath(RENDER_FIXTURE), ...files.map((f) => `${f}=${CONFIG_MOUNT}/${f}`)] } : {}),
    podDir: true,
  };
}

function labelsOf(opts: RenderOptions, extra: Record<string, string> = {}): Record<string, string> {
  return { [LABELS.run]: opts.runId, [LABELS.managedBy]: 'zerodrop', ...extra };
}

function renderDeployment(workload: Workload, opts: RenderOptions): KubeObject {
  const { image, command, render, podDir } = renderCommand(workload, opts.images ?? IMAGES);
  const selector = { [LABELS.workload]: workload.name };
  const lifecycle: Record<string, unknown> = {};
  if (workload.preStop) {
    if ('sleep' in workload.preStop) {
      // The kubelet's built-in sleep action (PodLifecycleSleepAction, GA in 1.34). The API server
      // refuses one longer than the grace period (validateSleepAction), while the kubelet lets an exec
      // hook run into it and kills the container at the grace period, which is what the local provider
      // models: a longer sleep goes as `sleep` in an exec hook (every image used here has one).
      const seconds = wholeSeconds(workload.preStop.sleep.seconds, 1);
      lifecycle['preStop'] = seconds <= workload.terminationGracePeriodSeconds ? { sleep: { seconds } } : { exec: { command: ['sleep', String(seconds)] } };
    } else {
      lifecycle['preStop'] = { exec: { command: workload.preStop.exec.command } };
    }
  }
  // Stated only where the image's own STOPSIGNAL is not the one wanted (stop-signal.ts); a stated
  // stop signal needs the pod's OS to be set (KEP-4960).
  const stopSignal = statedStopSignal(workload);
  if (stopSignal) lifecycle['stopSignal'] = stopSignal;
  const env = [
    ...Object.entries(workload.env).map(([name, value]) => ({ name, value })),
    // The reference apps identify themselves in every response and bind the pod's own address.
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    // Where a relay discovers its backends (the reference UDP relay reads the namespace's EndpointSlices).
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: 'ZERODROP_RUN_ID', value: opts.runId },
    // The pod directory the init container rendered into, for the system and its preStop hook alike
    // (a draining marker file there: the Caddy and user-defined profiles), as locally.
    ...(podDir ? [{ name: 'POD_DIR', value: POD_DIR }, { name: 'ZERODROP_POD_DIR', value: POD_DIR }] : []),
  ];
  const usesFixtures = fixturesOf({ workloads: [workload], services: [] }).length > 0;
  const mounts = [
    ...(usesFixtures ? [{ name: 'fixtures', mountPath: FIXTURES_MOUNT, readOnly: true }] : []),
    ...(podDir ? [{ name: 'pod', mountPath: POD_DIR }] : []),
  ];
  const renderMounts = [...mounts, { name: 'config', mountPath: CONFIG_MOUNT, readOnly: true }];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: workload.name, namespace: opts.namespace, labels: labelsOf(opts, { ...selector, ...(workload.labels ?? {}) }) },
    spec: {
      replicas: workload.replicas,
      selector: { matchLabels: selector },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: workload.strategy.maxSurge, maxUnavailable: workload.strategy.maxUnavailable } },
      template: {
        metadata: { labels: labelsOf(opts, { ...selector, ...(workload.labels ?? {}) }) },
        spec: {
          terminationGracePeriodSeconds: workload.terminationGracePeriodSeconds,
          enableServiceLinks: true,
          ...(stopSignal ? { os: { name: 'linux' } } : {}),
          ...(render
            ? {
                initContainers: [
                  { name: 'render', image: NODE_IMAGE, command: render, env, volumeMounts: renderMounts },
                ],
              }
            : {}),
          containers: [
            {
              name: MAIN_CONTAINER,
              image,
              command,
              env,
              ports: workload.ports.map((p) => ({ name: p.name, containerPort: p.containerPort, protocol: p.protocol })),
              ...(workload.readinessProbe ? { readinessProbe: renderProbe(workload.readinessProbe) } : {}),
              ...(Object.keys(lifecycle).length > 0 ? { lifecycle } : {}),
              ...(mounts.length > 0 ? { volumeMounts: mounts } : {}),
              // The config is rendered by the node image's root user into the pod directory; a system
              // image that drops to its own user (haproxy runs as uid 99) could not write its pid
              // file there, so the system runs as root, as it would from a Debian package.
              ...(render ? { securityContext: { runAsUser: 0 } } : {}),
            },
          ],
          ...(mounts.length > 0
            ? {
                volumes: [
                  ...(usesFixtures ? [{ name: 'fixtures', configMap: { name: FIXTURES_CONFIGMAP, items: fixtureItems(workload) } }] : []),
                  ...(podDir ? [{ name: 'pod', emptyDir: {} }] : []),
                  ...(render ? [{ name: 'config', configMap: { name: configMapName(workload.name) } }] : []),
                ],
              }
            : {}),
        },
      },
    },
  };
}

/** The ConfigMap keys a workload needs, each at its path under the mount (nested directories kept). */
function fixtureItems(workload: Workload): { key: string; path: string }[] {
  return fixturesOf({ workloads: [workload], services: [] }).map((p) => ({ key: fixtureKey(p), path: p.replace(/^fixtures\//, '') }));
}

/** The Helm profile whose chart plays a charted workload (Workload.installedBy). */
export function chartSpecOf(workload: Workload): HelmProfileSpec {
  const name = workload.installedBy?.helmProfile ?? '';
  const spec = helmProfileSpec(name);
  if (!spec) throw new ManifestError(`workload ${workload.name} is installed by unknown Helm profile ${name}`);
  return spec;
}

/**
 * Target ports of the Services that select a charted workload, by Service and port name: the
 * dataplane's container port for the listener (Envoy shifts ports below 1024, ingress-nginx listens
 * on 80 whatever the Service port is).
 */
export function chartedTargetPorts(topology: Topology): Map<string, Map<string, number>> {
  const result = new Map<string, Map<string, number>>();
  for (const workload of topology.workloads) {
    if (!workload.installedBy) continue;
    const spec = chartSpecOf(workload);
    for (const service of topology.services.filter((s) => s.selector === workload.name)) {
      result.set(service.name, new Map(service.ports.map((p) => [p.name, spec.dataplanePort(p.targetPort)])));
    }
  }
  return result;
}

function renderDisruptionBudget(budget: DisruptionBudget, opts: RenderOptions, selector: Record<string, string>): KubeObject {
  const limits = { ...(budget.minAvailable !== undefined ? { minAvailable: budget.minAvailable } : {}), ...(budget.maxUnavailable !== undefined ? { maxUnavailable: budget.maxUnavailable } : {}) };
  if (Object.keys(limits).length !== 1) throw new ManifestError(`PodDisruptionBudget of ${budget.workload} needs exactly one of minAvailable and maxUnavailable`);
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: budget.workload, namespace: opts.namespace, labels: labelsOf(opts) },
    spec: { ...limits, selector: { matchLabels: selector } },
  };
}

/** The labels a Service selects its workload's pods by: the chart's dataplane selector, or zerodrop's workload label. */
export function podSelectorOf(topology: Topology, workload: string): Record<string, string> {
  return topology.workloads.find((w) => w.name === workload)?.installedBy?.selector ?? { [LABELS.workload]: workload };
}

function renderService(service: Service, opts: RenderOptions, targetPorts: Map<string, number> | undefined, selector: Record<string, string>): KubeObject {
  const nodePorts = opts.nodePorts?.[service.name];
  const type = opts.loadBalancers?.includes(service.name) ? 'LoadBalancer' : nodePorts ? 'NodePort' : 'ClusterIP';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: service.name, namespace: opts.namespace, labels: labelsOf(opts) },
    spec: {
      type,
      selector,
      ports: service.ports.map((p) => ({
        name: p.name,
        port: p.port,
        targetPort: targetPorts?.get(p.name) ?? p.targetPort,
        protocol: p.protocol,
        ...(type === 'NodePort' && nodePorts?.[p.name] !== undefined ? { nodePort: nodePorts[p.name] } : {}),
      })),
    },
  };
}

/** The Role and RoleBinding that let the run's pods discover their backends (see renderTopology). */
export const DISCOVERY_ROLE = 'zerodrop-discovery';

function renderDiscoveryAccess(opts: RenderOptions): KubeObject[] {
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: DISCOVERY_ROLE, namespace: opts.namespace, labels: labelsOf(opts) },
      rules: [
        { apiGroups: [''], resources: ['services', 'endpoints', 'pods'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: DISCOVERY_ROLE, namespace: opts.namespace, labels: labelsOf(opts) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: DISCOVERY_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: opts.namespace }],
    },
  ];
}

/**
 * Every object of the run, in apply order: Namespace, ConfigMap, discovery Role and RoleBinding,
 * Services, Deployments, PodDisruptionBudgets. The Role lets the namespace's `default`
 * ServiceAccount read the namespace's Services, Endpoints, EndpointSlices and Pods: a gateway or
 * relay that discovers its backends through the API (the reference UDP relay, STUNner's dataplane)
 * is refused them by RBAC otherwise. A charted workload (Workload.installedBy) gets no Deployment: its chart
 * creates the pods (helm-gateway.ts); its Service and budget are rendered here like any other.
 */
export function renderTopology(topology: Topology, opts: RenderOptions): KubeObject[] {
  const objects: KubeObject[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: opts.namespace, labels: labelsOf(opts) } },
  ];
  const fixtures = fixturesOf(topology);
  if (fixtures.length > 0) {
    const data: Record<string, string> = {};
    for (const path of fixtures) {
      const content = opts.fixtures[path];
      if (content === undefined) throw new ManifestError(`fixture ${path} was not provided`);
      data[fixtureKey(path)] = content;
    }
    objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: FIXTURES_CONFIGMAP, namespace: opts.namespace, labels: labelsOf(opts) }, data });
  }
  objects.push(...renderDiscoveryAccess(opts));
  for (const workload of topology.workloads) {
    if (workload.defined && Object.keys(workload.defined.templates).length > 0) {
      objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: configMapName(workload.name), namespace: opts.namespace, labels: labelsOf(opts) }, data: workload.defined.templates });
    }
  }
  const targetPorts = chartedTargetPorts(topology);
  for (const service of topology.services) objects.push(renderService(service, opts, targetPorts.get(service.name), podSelectorOf(topology, service.selector)));
  for (const workload of topology.workloads) if (!workload.installedBy) objects.push(renderDeployment(workload, opts));
  for (const budget of disruptionBudgetsOf(topology)) objects.push(renderDisruptionBudget(budget, opts, podSelectorOf(topology, budget.workload)));
  return objects;
}

const MODELS: Record<string, (data: KubeObject) => { validate(): void }> = {
  'v1/Namespace': (d) => new Namespace(d as never),
  'v1/ConfigMap': (d) => new ConfigMap(d as never),
  'v1/Service': (d) => new ServiceModel(d as never),
  'apps/v1/Deployment': (d) => new Deployment(d as never),
  'policy/v1/PodDisruptionBudget': (d) => new PodDisruptionBudget(d as never),
  'rbac.authorization.k8s.io/v1/Role': (d) => new Role(d as never),
  'rbac.authorization.k8s.io/v1/RoleBinding': (d) => new RoleBinding(d as never),
  'networking.k8s.io/v1/Ingress': (d) => new Ingress(d as never),
  // @kubernetes-models/gateway-api: the Gateway API CRDs' schemas.
  'gateway.networking.k8s.io/v1/GatewayClass': (d) => new GatewayClass(d as never),
  'gateway.networking.k8s.io/v1/Gateway': (d) => new Gateway(d as never),
  'gateway.networking.k8s.io/v1/HTTPRoute': (d) => new HTTPRoute(d as never),
  'gateway.networking.k8s.io/v1alpha2/UDPRoute': (d) => new UDPRoute(d as never),
};

/**
 * Custom resources of the charted systems for which no schema package is published (checked:
 * kubernetes-models has none for Envoy Gateway or STUNner). They are applied without a client-side
 * schema check; the API server validates them against the CRDs the chart installed.
 */
export const WITHOUT_PUBLISHED_SCHEMA: ReadonlySet<string> = new Set([
  'gateway.envoyproxy.io/v1alpha1/EnvoyProxy',
  'stunner.l7mp.io/v1/GatewayConfig',
  'stunner.l7mp.io/v1/Dataplane',
  'stunner.l7mp.io/v1/StaticService',
]);

/**
 * Validates every object against its kubernetes-models schema; throws one error listing every
 * problem. Returns the objects that have no published schema (WITHOUT_PUBLISHED_SCHEMA), unchecked.
 */
export function validateManifests(objects: readonly KubeObject[], extra: Record<string, (d: KubeObject) => { validate(): void }> = {}): string[] {
  const problems: string[] = [];
  const unchecked: string[] = [];
  for (const object of objects) {
    const key = `${object.apiVersion}/${object.kind}`;
    const model = extra[key] ?? MODELS[key];
    if (!model && WITHOUT_PUBLISHED_SCHEMA.has(key)) {
      unchecked.push(`${key} ${object.metadata.name}`);
      continue;
    }
    if (!model) {
      problems.push(`${key} ${object.metadata.name}: no schema to validate it against`);
      continue;
    }
    try {
      model(object).validate();
    } catch (err) {
      problems.push(`${key} ${object.metadata.name}: ${(err as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ManifestError(`invalid manifests:\n  ${problems.join('\n  ')}`);
  return unchecked;
}
