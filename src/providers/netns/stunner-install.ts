// STUNner on a cluster without its Helm chart (no chart repository is reachable here): what the
// operator needs, from the Go modules stunner/go.mod pins, applied with kubectl.
//
// - the Gateway API CRDs of the sigs.k8s.io/gateway-api version the operator's own go.mod requires,
//   the experimental channel (UDPRoute is experimental in v1.0.0),
// - STUNner's CRDs (config/crd/bases of the operator module: Dataplane, GatewayConfig,
//   StaticService, stunner.l7mp.io UDPRoute),
// - the operator's Namespace, ServiceAccount, RBAC and ConfigMap, as its own kustomization
//   (config/default) renders them,
// - the operator itself, as a Deployment of the image l7mp/stunner-gateway-operator (the node
//   agent runs the build for it), without the kube-rbac-proxy sidecar config/default adds: that
//   image has no build here, and it only guards the metrics port.
//
// As the Helm chart does, the operator runs in the release's namespace (a run's own, when the netns
// cluster stands in for the chart: chart-stand-ins.ts), as the Deployment `stunner-gateway-operator`
// (the chart's default stunnerGatewayOperator.deployment.name); the CRDs and cluster roles are the
// cluster's, applied again by each install.
//
// Usage: node src/providers/netns/stunner-install.ts KUBECTL... (the `kubectl:` line `dev-cluster.ts up` prints).

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { parseAllDocuments } from 'yaml';
import { downloadedModule, requiredVersion } from './go-module-build.ts';
import { STUNNER_MODULE_DIR, stunnerPin } from './stunner-binary.ts';

/** Where the operator's own kustomization (config/default) puts it; the namespace of a standalone install. */
export const OPERATOR_NAMESPACE = 'stunner-gateway-operator-system';
/** The chart's default name for the operator's Deployment (stunnerGatewayOperator.deployment.name). */
export const OPERATOR_DEPLOYMENT = 'stunner-gateway-operator';
/** The ServiceAccount config/default's RBAC binds. */
const OPERATOR_SERVICE_ACCOUNT = 'stunner-gateway-operator-controller-manager';

export const yamlFiles = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').map((f) => join(dir, f));

/** The operator's Deployment: the manager container of config/manager/manager.yaml, with the CDS address as the Helm chart sets it. */
export function operatorDeployment(image: string, namespace: string): Record<string, unknown> {
  const labels = { 'control-plane': 'stunner-gateway-operator' };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: OPERATOR_DEPLOYMENT, namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: OPERATOR_SERVICE_ACCOUNT,
          terminationGracePeriodSeconds: 10,
          containers: [
            {
              name: 'manager',
              image,
              command: ['/manager'],
              args: ['--health-probe-bind-address=:8081', '--metrics-bind-address=127.0.0.1:8080', '--leader-elect'],
              // The stunnerd pods reach the config discovery server at this address (main.go's
              // STUNNER_GATEWAY_OPERATOR_ADDRESS); without it they are told ":13478", their own pod.
              env: [{ name: 'STUNNER_GATEWAY_OPERATOR_ADDRESS', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
              livenessProbe: { httpGet: { path: '/healthz', port: 8081 }, initialDelaySeconds: 15, periodSeconds: 20 },
              readinessProbe: { httpGet: { path: '/readyz', port: 8081 }, initialDelaySeconds: 5, periodSeconds: 10 },
            },
          ],
        },
      },
    },
  };
}

type Manifest = { kind: string; metadata?: { namespace?: string }; subjects?: { namespace?: string }[] };

/**
 * Installs the CRDs, RBAC and operator with `kubectl` (an argv prefix) into `namespace` (created
 * unless it exists), and waits for the operator to be available.
 */
export async function installStunner(kubectl: readonly string[], log: (line: string) => void = () => {}, namespace = OPERATOR_NAMESPACE): Promise<void> {
  const [file, ...prefix] = kubectl;
  const run = (args: string[], input?: string) => execa(file!, [...prefix, ...args], input === undefined ? {} : { input });
  const pin = stunnerPin();
  const operator = await downloadedModule(STUNNER_MODULE_DIR, 'github.com/l7mp/stunner-gateway-operator', pin);
  const gatewayApiVersion = requiredVersion(operator, 'sigs.k8s.io/gateway-api');
  const gatewayApi = await downloadedModule(STUNNER_MODULE_DIR, 'sigs.k8s.io/gateway-api', gatewayApiVersion);
  log(`Gateway API ${gatewayApiVersion} CRDs (experimental channel), STUNner ${pin} CRDs, RBAC and operator in namespace ${namespace}`);
  // Server-side: the CRDs exceed the 256 KiB last-applied annotation a client-side apply writes.
  // One kubectl for them all: a process per file took 2.1 s for the 13 files, one 0.8 s.
  const crds = [...yamlFiles(join(gatewayApi, 'config/crd/experimental')), ...yamlFiles(join(operator, 'config/crd/bases'))];
  await run(['apply', '--server-side', ...crds.flatMap((f) => ['-f', f])]);
  await run(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
  const rendered = (await run(['kustomize', join(operator, 'config/default')])).stdout;
  const keep = parseAllDocuments(rendered)
    .map((d) => d.toJS() as Manifest | null)
    .filter((o): o is Manifest => !!o && !['Namespace', 'Deployment', 'CustomResourceDefinition'].includes(o.kind))
    // Moved into the release's namespace, the bindings' subjects with them.
    .map((o) => ({
      ...o,
      ...(o.metadata?.namespace ? { metadata: { ...o.metadata, namespace } } : {}),
      ...(o.subjects ? { subjects: o.subjects.map((s) => (s.namespace ? { ...s, namespace } : s)) } : {}),
    }));
  await run(['create', 'namespace', namespace]).catch((err: unknown) => {
    if (!/AlreadyExists/.test(String((err as { stderr?: string }).stderr))) throw err;
  });
  await run(['apply', '--server-side', '--force-conflicts', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: keep }));
  await run(['apply', '--server-side', '-f', '-'], JSON.stringify(operatorDeployment(`docker.io/l7mp/stunner-gateway-operator:${pin.slice(1)}`, namespace)));
  await run(['-n', namespace, 'rollout', 'status', `deployment/${OPERATOR_DEPLOYMENT}`, '--timeout=120s']);
  log(`operator ${namespace}/${OPERATOR_DEPLOYMENT} available`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kubectl = process.argv.slice(2);
  if (kubectl.length === 0) {
    console.error('usage: node src/providers/netns/stunner-install.ts KUBECTL... (e.g. the kubectl line dev-cluster.ts up prints)');
    process.exit(2);
  }
  await installStunner(kubectl, (l) => console.log(l));
}
