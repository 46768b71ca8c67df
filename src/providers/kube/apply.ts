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
};

/** The API path of one object. */
export function objectPath(object: KubeObject): string {
  const key = `${object.apiVersion}/${object.kind}`;
  const resource = RESOURCES[key];
  if (!resource) throw new Error(`no API path known for ${key}`);
  const ns = resource.namespaced ? `/namespaces/${object.metadata.namespace ?? ''}` : '';
  return `${resource.prefix}${ns}/${resource.plural}/${object.metadata.name}`;
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
 * grace 0 (teardown stops everything at once) and Services are awaited, so that the next run can
 * take the same NodePorts.
 */
export async function deleteRunNamespace(client: KubeClient, namespace: string, runId: string, opts: { timeoutMs?: number } = {}): Promise<void> {
  const { status, body } = await client.request<{ metadata?: { labels?: Record<string, string> } }>('GET', `/api/v1/namespaces/${namespace}`, { allow: [404] });
  if (status === 404) return;
  if (body.metadata?.labels?.[LABELS.run] !== runId) {
    throw new Error(`namespace ${namespace} is not labelled ${LABELS.run}=${runId}; refusing to delete it`);
  }
  const gone = { allow: [404] };
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
