// Server-side apply of the run's objects, and teardown of exactly what the run created.
// https://kubernetes.io/docs/reference/using-api/server-side-apply/: a PATCH with content type
// application/apply-patch+yaml, a field manager, and force=true (the harness owns these objects).

import { FIELD_MANAGER, PATCH, statusOf, type KubeClient } from './client.ts';
import type { KubeObject } from './list-watch.ts';
import { LABELS } from './manifests.ts';

const RESOURCES: Record<string, { prefix: string; plural: string; namespaced: boolean }> = {
  'v1/Namespace': { prefix: '/api/v1', plural: 'namespaces', namespaced: false },
  'v1/ConfigMap': { prefix: '/api/v1', plural: 'configmaps', namespaced: true },
  'v1/Service': { prefix: '/api/v1', plural: 'services', namespaced: true },
  'apps/v1/Deployment': { prefix: '/apis/apps/v1', plural: 'deployments', namespaced: true },
  'policy/v1/PodDisruptionBudget': { prefix: '/apis/policy/v1', plural: 'poddisruptionbudgets', namespaced: true },
  'rbac.authorization.k8s.io/v1/Role': { prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'roles', namespaced: true },
  'rbac.authorization.k8s.io/v1/RoleBinding': { prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'rolebindings', namespaced: true },
  // The objects of the built-in Helm profiles (src/profiles/helm-gateways.ts), served by the CRDs their charts install.
  'networking.k8s.io/v1/Ingress': { prefix: '/apis/networking.k8s.io/v1', plural: 'ingresses', namespaced: true },
  'gateway.networking.k8s.io/v1/GatewayClass': { prefix: '/apis/gateway.networking.k8s.io/v1', plural: 'gatewayclasses', namespaced: false },
  'gateway.networking.k8s.io/v1/Gateway': { prefix: '/apis/gateway.networking.k8s.io/v1', plural: 'gateways', namespaced: true },
  'gateway.networking.k8s.io/v1/HTTPRoute': { prefix: '/apis/gateway.networking.k8s.io/v1', plural: 'httproutes', namespaced: true },
  'gateway.networking.k8s.io/v1alpha2/UDPRoute': { prefix: '/apis/gateway.networking.k8s.io/v1alpha2', plural: 'udproutes', namespaced: true },
  // The routes of a --gateway-class run (gateway-objects.ts).
  'gateway.networking.k8s.io/v1/GRPCRoute': { prefix: '/apis/gateway.networking.k8s.io/v1', plural: 'grpcroutes', namespaced: true },
  'gateway.networking.k8s.io/v1alpha2/TCPRoute': { prefix: '/apis/gateway.networking.k8s.io/v1alpha2', plural: 'tcproutes', namespaced: true },
  'gateway.envoyproxy.io/v1alpha1/EnvoyProxy': { prefix: '/apis/gateway.envoyproxy.io/v1alpha1', plural: 'envoyproxies', namespaced: true },
  'stunner.l7mp.io/v1/GatewayConfig': { prefix: '/apis/stunner.l7mp.io/v1', plural: 'gatewayconfigs', namespaced: true },
  'stunner.l7mp.io/v1/Dataplane': { prefix: '/apis/stunner.l7mp.io/v1', plural: 'dataplanes', namespaced: false },
  'stunner.l7mp.io/v1/StaticService': { prefix: '/apis/stunner.l7mp.io/v1', plural: 'staticservices', namespaced: true },
};

/**
 * The cluster-scoped kinds a run may create (a charted system's GatewayClass, STUNner's Dataplane),
 * with their collections: deleting the run's namespace does not reach them, so teardown and
 * `zerodrop clean` delete them by the run's label.
 */
export const CLUSTER_SCOPED_KINDS: readonly { apiVersion: string; kind: string; collection: string }[] = Object.entries(RESOURCES)
  .filter(([key, r]) => !r.namespaced && key !== 'v1/Namespace')
  .map(([key, r]) => ({ apiVersion: key.slice(0, key.lastIndexOf('/')), kind: key.slice(key.lastIndexOf('/') + 1), collection: `${r.prefix}/${r.plural}` }));

/**
 * The namespaced kinds a chart profile's run creates beside the chart (src/profiles/helm-gateways.ts),
 * in the order they must go: routes, then Gateways, then what Gateways are configured by, so that
 * each is gone before what it uses (see deleteRunObject). `zerodrop clean` deletes them by the run's
 * label before the cluster-scoped ones and before the charts.
 */
export function namespacedChartKinds(namespace: string): { apiVersion: string; kind: string; collection: string }[] {
  const order = ['HTTPRoute', 'UDPRoute', 'StaticService', 'Ingress', 'Gateway', 'EnvoyProxy', 'GatewayConfig'];
  return Object.entries(RESOURCES)
    .filter(([key, r]) => r.namespaced && order.includes(key.slice(key.lastIndexOf('/') + 1)))
    .map(([key, r]) => ({ apiVersion: key.slice(0, key.lastIndexOf('/')), kind: key.slice(key.lastIndexOf('/') + 1), collection: `${r.prefix}/namespaces/${namespace}/${r.plural}` }))
    .sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
}

/** The API path of one object. */
export function objectPath(object: KubeObject): string {
  const key = `${object.apiVersion}/${object.kind}`;
  const resource = RESOURCES[key];
  if (!resource) throw new Error(`no API path known for ${key}`);
  const ns = resource.namespaced ? `/namespaces/${object.metadata.namespace ?? ''}` : '';
  return `${resource.prefix}${ns}/${resource.plural}/${object.metadata.name}`;
}

/**
 * Deletes an object the run created next to a chart (a Gateway API object, a GatewayClass, a
 * Dataplane), after checking that it carries the run's label, and with `waitMs` waits until it is
 * gone. The wait is what keeps teardown in dependency order: a controller puts finalizers on what
 * its objects use (Gateway API: "implementations SHOULD add the
 * `gateway-exists-finalizer.gateway.networking.k8s.io` finalizer" on a GatewayClass while a Gateway
 * uses it, apis/v1/gatewayclass_types.go of kubernetes-sigs/gateway-api) and only the running
 * controller removes them, so each object must be gone before what it depends on, and all of them
 * before the chart's controller is uninstalled. One still there at the deadline is an error that
 * names its finalizers.
 */
export async function deleteRunObject(client: KubeClient, object: KubeObject, runId: string, opts: { waitMs?: number; pollMs?: number } = {}): Promise<void> {
  const path = objectPath(object);
  type Meta = { metadata?: { labels?: Record<string, string>; finalizers?: string[]; deletionTimestamp?: string } };
  const { status, body } = await client.request<Meta>('GET', path, { allow: [404] });
  if (status === 404) return;
  if (body.metadata?.labels?.[LABELS.run] !== runId) throw new Error(`${path} is not labelled ${LABELS.run}=${runId}; refusing to delete it`);
  await client.request('DELETE', path, { allow: [404] });
  if (!opts.waitMs) return;
  const deadline = Date.now() + opts.waitMs;
  let finalizers: string[] = [];
  while (Date.now() < deadline) {
    const now = await client.request<Meta>('GET', path, { allow: [404] });
    if (now.status === 404) return;
    finalizers = now.body.metadata?.finalizers ?? [];
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 250));
  }
  throw new Error(`${object.kind} ${object.metadata.name} still there ${Math.round(opts.waitMs / 1000)} s after its delete (finalizers: ${finalizers.join(', ') || 'none'})`);
}

export async function serverSideApply(client: KubeClient, object: KubeObject, signal?: AbortSignal): Promise<KubeObject> {
  const { body } = await client.request<KubeObject>('PATCH', objectPath(object), {
    query: { fieldManager: FIELD_MANAGER, force: true },
    contentType: PATCH.apply,
    body: object,
    ...(signal ? { signal } : {}),
  });
  return body;
}

/**
 * Refuses to reuse a namespace the run did not create: teardown deletes the namespace, so it must
 * never be one that holds anything else.
 */
export async function assertNamespaceFree(client: KubeClient, namespace: string): Promise<void> {
  const { status, body } = await client.request<KubeObject & { metadata: { labels?: Record<string, string> } }>('GET', `/api/v1/namespaces/${namespace}`, { allow: [404] });
  if (status === 404) return;
  throw new Error(`namespace ${namespace} already exists (labels ${JSON.stringify(body.metadata?.labels ?? {})}); zerodrop only deletes namespaces it created`);
}

/**
 * Deletes the run's namespace, after checking that it carries the run's label. Pods go first with
 * grace 0 (teardown stops everything at once), after a delete of their Deployments and ReplicaSets
 * that orphans them: a controller whose object is being deleted makes no replacement pod that the
 * namespace delete would then give its full grace period. Services are awaited, so that the next
 * run can take the same NodePorts.
 */
export async function deleteRunNamespace(client: KubeClient, namespace: string, runId: string, opts: { timeoutMs?: number } = {}): Promise<void> {
  const { status, body } = await client.request<{ metadata?: { labels?: Record<string, string> } }>('GET', `/api/v1/namespaces/${namespace}`, { allow: [404] });
  if (status === 404) return;
  if (body.metadata?.labels?.[LABELS.run] !== runId) {
    throw new Error(`namespace ${namespace} is not labelled ${LABELS.run}=${runId}; refusing to delete it`);
  }
  const gone = { allow: [404] };
  const orphan = { body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Orphan' }, ...gone };
  // Best effort: a role without deletecollection on apps must not keep the namespace from going.
  for (const kind of ['deployments', 'replicasets']) {
    await client.request('DELETE', `/apis/apps/v1/namespaces/${namespace}/${kind}`, orphan).catch(() => undefined);
  }
  await client.request('DELETE', `/api/v1/namespaces/${namespace}/pods`, { query: { gracePeriodSeconds: 0 }, ...gone });
  await client.request('DELETE', `/api/v1/namespaces/${namespace}/services`, gone).catch((err: unknown) => {
    // Older servers have no deletecollection for Services (405): the namespace delete removes them.
    if (statusOf(err) !== 405) throw err;
  });
  await client.request('DELETE', `/api/v1/namespaces/${namespace}`, {
    body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' },
    ...gone,
  });
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  while (Date.now() < deadline) {
    const { body: list } = await client.request<{ items?: unknown[] }>('GET', `/api/v1/namespaces/${namespace}/services`, gone);
    if (!list?.items || list.items.length === 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}
