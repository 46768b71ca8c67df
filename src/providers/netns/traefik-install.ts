// Traefik as a Gateway API implementation on a cluster without its Helm chart or image (neither
// chart repository nor registry is reachable here): what its kubernetesGateway provider needs, from
// the Go modules traefik/go.mod pins, applied with kubectl, and a GatewayClass for it.
//
// - the Gateway API CRDs of the sigs.k8s.io/gateway-api version Traefik's own go.mod requires,
//   standard channel (HTTPRoute, GRPCRoute: what Traefik serves without its experimental flag),
// - Traefik's RBAC for that provider, as its documentation ships it
//   (docs/content/reference/dynamic-configuration/kubernetes-gateway-rbac.yml of the module),
//   bound to the install's ServiceAccount,
// - Traefik as a Deployment of the image `traefik` (the node agent runs the build for it), a
//   NodePort Service in front of it, and a ConfigMap for its file provider (the pod's name on
//   every response),
// - the GatewayClass, controllerName traefik.io/gateway-controller (the one Traefik reconciles).
//
// Traefik is its own dataplane and serves every Gateway of its classes from this one Deployment:
// nothing is generated per Gateway, so the run finds the pods by the labels its Helm chart gives
// them (gateway-class.ts, the shared-dataplane rule), not by GEP-1762's per-Gateway label.
//
// Two configurations, one per class name, so that a run says which one it measures by naming it:
// `traefik` is drain-correct, `traefik-naive` is Traefik as packaged.
//
// Usage: node src/providers/netns/traefik-install.ts [traefik|traefik-naive] KUBECTL... (the `kubectl:` line `dev-cluster.ts up` prints).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { parseAllDocuments } from 'yaml';
import { drainShape, STOP_TIMEOUT_SECONDS } from '../../profiles/gateway-drain.ts';
import { PUBLISHED_NODE_PORTS } from '../kind/kind.ts';
import { KUBE_PROXY_PROGRAMMING_BOUND_MS } from '../kube/observers.ts';
import { downloadedModule, requiredVersion } from './go-module-build.ts';
import { yamlFiles } from './stunner-install.ts';
import { TRAEFIK_MODULE_DIR, traefikPin } from './traefik-binary.ts';

/** The namespace and name of the install (the chart's defaults: release `traefik` in namespace `traefik`). */
export const TRAEFIK_NAMESPACE = 'traefik';
const NAME = 'traefik';
/** Traefik's Gateway API controller name (pkg/provider/kubernetes/gateway/kubernetes.go, controllerName). */
export const TRAEFIK_CONTROLLER = 'traefik.io/gateway-controller';
/** The pods' labels, as Traefik's Helm chart sets them (release `traefik` in namespace `traefik`). */
export const TRAEFIK_LABELS = { 'app.kubernetes.io/name': 'traefik', 'app.kubernetes.io/instance': `${NAME}-${TRAEFIK_NAMESPACE}` };

/** The HTTP entrypoint: the port every HTTP gateway scenario's listener has (Traefik attaches a listener to the entrypoint of its port). */
export const TRAEFIK_HTTP_PORT = 8000;
/** Traefik's own entrypoint (ping), the chart's port. */
const TRAEFIK_PING_PORT = 8080;
/**
 * Traefik's file provider, for one middleware on the HTTP entrypoint: every response names the
 * Traefik pod that forwarded it, in the header the harness reads a gateway pod's name from (as the
 * nginx, HAProxy and Caddy configurations here do). Without it a request cut at a pod's exit
 * belongs to no pod, and drainTiming cannot say when that pod went idle. The file provider renders
 * the file as a Go template with sprig's functions (pkg/provider/file), `env` among them.
 */
// Not under /etc: the node agent mounts the host's /etc read-only, with no room for a volume in it.
const DYNAMIC_DIR = '/config/dynamic';
const DYNAMIC_FILE = 'zerodrop.yml';
const NAME_MIDDLEWARE = 'zerodrop-pod-name';
export const TRAEFIK_DYNAMIC = `http:
  middlewares:
    ${NAME_MIDDLEWARE}:
      headers:
        customResponseHeaders:
          x-zerodrop-gateway: '{{ env "POD_NAME" }}'
`;

/** The last NodePort the netns and kind clusters publish: the run's own Services take them from the first. */
const NODE_PORT = PUBLISHED_NODE_PORTS[PUBLISHED_NODE_PORTS.length - 1]!.nodePort;

/** transport.keepAliveMaxTime: a response on a connection older than this says Connection: close. */
const KEEPALIVE_MAX_TIME_SECONDS = 1;
/**
 * The drain-correct configuration, by the arithmetic every drain-correct gateway here shares
 * (src/profiles/gateway-drain.ts): a preStop that outlasts kube-proxy's deprogramming and the
 * keep-alive bound, then Traefik's graceful stop bounded by its own timeout, and a grace period above
 * both. One install serves every scenario, so the preStop waits for kube-proxy's bound as measured
 * on this cluster, not for one scenario's programming delay.
 */
const SHAPE = drainShape({ programmingDelayMs: KUBE_PROXY_PROGRAMMING_BOUND_MS }, KEEPALIVE_MAX_TIME_SECONDS * 1000);
export const TRAEFIK_DRAIN = {
  keepAliveMaxTimeSeconds: KEEPALIVE_MAX_TIME_SECONDS,
  preStopSeconds: SHAPE.preStopSeconds,
  /** transport.lifeCycle.graceTimeOut: how long the graceful stop waits for requests in flight. */
  graceTimeoutSeconds: STOP_TIMEOUT_SECONDS,
  terminationGracePeriodSeconds: SHAPE.terminationGracePeriodSeconds,
} as const;

export type TraefikVariant = 'drain-correct' | 'naive';

/** The GatewayClasses the netns cluster installs Traefik for, by name. */
export const TRAEFIK_CLASSES: Readonly<Record<string, TraefikVariant>> = { traefik: 'drain-correct', 'traefik-naive': 'naive' };

/** Traefik's arguments: everything on the pod's own address, nothing reporting outside. */
export function traefikArgs(variant: TraefikVariant, statusAddress: string): string[] {
  const web = '--entrypoints.web';
  return [
    // Both default to on in Traefik (and its chart): each calls out, and nothing a run starts may.
    '--global.checknewversion=false',
    '--global.sendanonymoususage=false',
    '--log.level=INFO',
    // Plain lines: the pod log lands on the Timeline and in the reports.
    '--log.nocolor=true',
    `${web}.address=$(POD_IP):${TRAEFIK_HTTP_PORT}`,
    `--entrypoints.traefik.address=$(POD_IP):${TRAEFIK_PING_PORT}`,
    '--ping=true',
    '--providers.kubernetesgateway=true',
    // Without it Programmed Gateways have no status.addresses; the Service's ClusterIP is where the cluster reaches them.
    `--providers.kubernetesgateway.statusaddress.ip=${statusAddress}`,
    `--providers.file.filename=${DYNAMIC_DIR}/${DYNAMIC_FILE}`,
    `${web}.http.middlewares=${NAME_MIDDLEWARE}@file`,
    ...(variant === 'naive'
      ? []
      : [
          // A keep-alive connection is closed between two requests at the graceful stop, racing the
          // client's next one; closed politely after a second, none is left by the time it comes.
          `${web}.transport.keepalivemaxtime=${TRAEFIK_DRAIN.keepAliveMaxTimeSeconds}s`,
          // The preStop already holds the stop signal until the pod is deprogrammed: accepting on
          // after it would only lengthen the drain.
          `${web}.transport.lifecycle.requestacceptgracetimeout=0s`,
          `${web}.transport.lifecycle.gracetimeout=${TRAEFIK_DRAIN.graceTimeoutSeconds}s`,
        ]),
  ];
}

export function traefikDeployment(variant: TraefikVariant, image: string, statusAddress: string): Record<string, unknown> {
  const correct = variant === 'drain-correct';
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: NAME, namespace: TRAEFIK_NAMESPACE, labels: TRAEFIK_LABELS },
    spec: {
      // Two pods: the gateway scenarios stop one while the other carries the traffic.
      replicas: 2,
      selector: { matchLabels: TRAEFIK_LABELS },
      template: {
        metadata: { labels: TRAEFIK_LABELS },
        spec: {
          serviceAccountName: NAME,
          ...(correct ? { terminationGracePeriodSeconds: TRAEFIK_DRAIN.terminationGracePeriodSeconds } : {}),
          volumes: [{ name: 'dynamic', configMap: { name: `${NAME}-dynamic` } }],
          containers: [
            {
              name: NAME,
              image,
              args: traefikArgs(variant, statusAddress),
              env: [
                { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              volumeMounts: [{ name: 'dynamic', mountPath: DYNAMIC_DIR, readOnly: true }],
              ports: [
                { name: 'web', containerPort: TRAEFIK_HTTP_PORT, protocol: 'TCP' },
                { name: 'traefik', containerPort: TRAEFIK_PING_PORT, protocol: 'TCP' },
              ],
              // The chart's probe, every second so that a fresh pod is ready as soon as it serves; /ping
              // answers 503 once Traefik is stopping.
              readinessProbe: { httpGet: { path: '/ping', port: TRAEFIK_PING_PORT }, periodSeconds: 1 },
              ...(correct ? { lifecycle: { preStop: { sleep: { seconds: TRAEFIK_DRAIN.preStopSeconds } } } } : {}),
            },
          ],
        },
      },
    },
  };
}

export function traefikService(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: NAME, namespace: TRAEFIK_NAMESPACE, labels: TRAEFIK_LABELS },
    spec: {
      type: 'NodePort',
      selector: TRAEFIK_LABELS,
      ports: [{ name: 'web', port: TRAEFIK_HTTP_PORT, targetPort: 'web', nodePort: NODE_PORT, protocol: 'TCP' }],
    },
  };
}

type Manifest = { kind: string; metadata: { name: string; namespace?: string }; subjects?: { kind: string; name: string; namespace?: string }[] };

/** Installs Traefik and the GatewayClass `className` with `kubectl` (an argv prefix), and waits for it to be available. */
export async function installTraefik(kubectl: readonly string[], className: string, log: (line: string) => void = () => {}): Promise<void> {
  const variant = TRAEFIK_CLASSES[className];
  if (!variant) throw new Error(`no Traefik configuration for GatewayClass ${className} (known: ${Object.keys(TRAEFIK_CLASSES).join(', ')})`);
  const [file, ...prefix] = kubectl;
  const run = (args: string[], input?: string) => execa(file!, [...prefix, ...args], input === undefined ? {} : { input });
  const apply = (objects: unknown[]) => run(['apply', '--server-side', '--force-conflicts', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  const pin = traefikPin();
  const traefik = await downloadedModule(TRAEFIK_MODULE_DIR, 'github.com/traefik/traefik/v3', pin);
  const gatewayApiVersion = requiredVersion(traefik, 'sigs.k8s.io/gateway-api');
  const gatewayApi = await downloadedModule(TRAEFIK_MODULE_DIR, 'sigs.k8s.io/gateway-api', gatewayApiVersion);
  log(`Gateway API ${gatewayApiVersion} CRDs (standard channel), Traefik ${pin} (${variant}) in namespace ${TRAEFIK_NAMESPACE}, GatewayClass ${className}`);
  // Server-side: the CRDs exceed the 256 KiB last-applied annotation a client-side apply writes.
  for (const f of yamlFiles(join(gatewayApi, 'config/crd/standard'))) await run(['apply', '--server-side', '-f', f]);
  await run(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
  const rbac = parseAllDocuments(readFileSync(join(traefik, 'docs/content/reference/dynamic-configuration/kubernetes-gateway-rbac.yml'), 'utf8'))
    .map((d) => d.toJS() as Manifest | null)
    .filter((o): o is Manifest => !!o)
    .map((o) => (o.subjects ? { ...o, subjects: o.subjects.map((s) => (s.kind === 'ServiceAccount' ? { ...s, name: NAME, namespace: TRAEFIK_NAMESPACE } : s)) } : o));
  await apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: TRAEFIK_NAMESPACE } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: NAME, namespace: TRAEFIK_NAMESPACE } },
    ...rbac,
    traefikService(),
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${NAME}-dynamic`, namespace: TRAEFIK_NAMESPACE }, data: { [DYNAMIC_FILE]: TRAEFIK_DYNAMIC } },
    { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: className }, spec: { controllerName: TRAEFIK_CONTROLLER } },
  ]);
  const clusterIP = (await run(['-n', TRAEFIK_NAMESPACE, 'get', 'service', NAME, '-o', 'jsonpath={.spec.clusterIP}'])).stdout.trim();
  await apply([traefikDeployment(variant, `docker.io/traefik:${pin}`, clusterIP)]);
  await run(['-n', TRAEFIK_NAMESPACE, 'rollout', 'status', `deployment/${NAME}`, '--timeout=120s']).catch(async (err: unknown) => {
    // What Traefik said is the reason; kubectl's own message is only that the wait ran out.
    const selector = Object.entries(TRAEFIK_LABELS).map(([k, v]) => `${k}=${v}`).join(',');
    const logs = await run(['-n', TRAEFIK_NAMESPACE, 'logs', '-l', selector, '--tail=5', '--prefix']).then((r) => r.stdout, (e: unknown) => String(e));
    throw new Error(`Traefik ${TRAEFIK_NAMESPACE}/${NAME} did not become available within 120 s; its last log lines:\n${logs}`, { cause: err });
  });
  // Ready pods are not yet a programmed NodePort: kube-proxy takes up to its bound to route to them,
  // and a run probing the Gateway sooner is refused (seen: ECONNREFUSED 0.3 s after the rollout).
  await new Promise((resolve) => setTimeout(resolve, KUBE_PROXY_PROGRAMMING_BOUND_MS));
  log(`Traefik ${TRAEFIK_NAMESPACE}/${NAME} available, serving GatewayClass ${className}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [className, ...kubectl] = process.argv.slice(2);
  if (!className || kubectl.length === 0) {
    console.error('usage: node src/providers/netns/traefik-install.ts traefik|traefik-naive KUBECTL... (e.g. the kubectl line dev-cluster.ts up prints)');
    process.exit(2);
  }
  await installTraefik(kubectl, className, (l) => console.log(l));
}
