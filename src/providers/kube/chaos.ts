// Chaos as Kubernetes API calls, each exactly what kubectl sends for the same action, so that the
// cluster does what it would do for an operator:
// - delete a pod: DELETE with DeleteOptions.gracePeriodSeconds (0 = `kubectl delete --force --grace-period=0`)
// - scale: merge patch of the Deployment's scale subresource (`kubectl scale`)
// - rollout restart: strategic merge patch of the pod template's kubectl.kubernetes.io/restartedAt
//   annotation (`kubectl rollout restart`)
// - cordon: strategic merge patch spec.unschedulable on the Node (`kubectl cordon`)
// - drain: cordon, then evict each of the run's pods on the node through the Eviction API, which
//   honours PodDisruptionBudgets: a 429 means the eviction is refused now, and it is tried again
//   after a pause, as `kubectl drain` does (https://kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/).
//   A 429 is a budget's refusal when its Status names a `DisruptionBudget` cause; without one it is
//   the API server's own throttling (API Priority and Fairness), which the run's notes tell apart.

import { evictEach, type EvictionLoopOptions } from '../../chaos/drain.ts';
import { KubeApiError, PATCH, statusOf, type KubeClient } from './client.ts';

export const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';

export async function deletePod(client: KubeClient, namespace: string, pod: string, gracePeriodSeconds?: number): Promise<void> {
  await client.request('DELETE', `/api/v1/namespaces/${namespace}/pods/${pod}`, {
    body: { apiVersion: 'v1', kind: 'DeleteOptions', ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}) },
  });
}

/** The apps/v1 resource of a workload kind. */
export type WorkloadResource = 'deployments' | 'statefulsets' | 'daemonsets';

/** Returns the replica count before the change. */
export async function scaleDeployment(client: KubeClient, namespace: string, name: string, replicas: number, resource: Exclude<WorkloadResource, 'daemonsets'> = 'deployments'): Promise<number | undefined> {
  const path = `/apis/apps/v1/namespaces/${namespace}/${resource}/${name}/scale`;
  const { body: before } = await client.request<{ spec?: { replicas?: number } }>('GET', path);
  await client.request('PATCH', path, { contentType: PATCH.merge, body: { spec: { replicas } } });
  return before.spec?.replicas;
}

/** Returns the Deployment's new metadata.generation. */
export async function rolloutRestart(client: KubeClient, namespace: string, name: string, now = new Date(), resource: WorkloadResource = 'deployments'): Promise<number | undefined> {
  const { body } = await client.request<{ metadata?: { generation?: number } }>('PATCH', `/apis/apps/v1/namespaces/${namespace}/${resource}/${name}`, {
    contentType: PATCH.strategic,
    body: { spec: { template: { metadata: { annotations: { [RESTARTED_AT]: now.toISOString() } } } } },
  });
  return body?.metadata?.generation;
}

export async function cordon(client: KubeClient, node: string, unschedulable = true): Promise<void> {
  await client.request('PATCH', `/api/v1/nodes/${node}`, { contentType: PATCH.strategic, body: { spec: { unschedulable } } });
}

/** One eviction request: true once accepted (or the pod is gone), else why it was refused right now (a 429). */
export async function evictPod(client: KubeClient, namespace: string, pod: string, gracePeriodSeconds?: number): Promise<true | string> {
  try {
    await client.request('POST', `/api/v1/namespaces/${namespace}/pods/${pod}/eviction`, {
      body: {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: pod, namespace },
        ...(gracePeriodSeconds !== undefined ? { deleteOptions: { gracePeriodSeconds } } : {}),
      },
    });
    return true;
  } catch (err) {
    if (statusOf(err) === 429) return refusal(err);
    if (statusOf(err) === 404) return true; // already gone
    throw err;
  }
}

/** Why a 429 refused an eviction, in words for the run's notes. */
function refusal(err: unknown): string {
  const causes = err instanceof KubeApiError ? err.causes : [];
  const budget = causes.find((c) => c.reason === 'DisruptionBudget');
  if (budget !== undefined) return `refused by its PodDisruptionBudget (429)${budget.message ? `: ${budget.message}` : ''}`;
  const said = err instanceof KubeApiError ? err.serverMessage : undefined;
  return `refused with 429 by the API server without a DisruptionBudget cause (its own throttling, not a budget)${said ? `: ${said}` : ''}`;
}

export type DrainOptions = Omit<EvictionLoopOptions, 'retryMs' | 'onBlocked'> & {
  retryMs?: number;
  /** An eviction was refused right now and will be tried again after retryMs; `why` says by what. */
  onRefused?: (pod: string, why: string) => void;
};

/**
 * Cordons the node and evicts the run's pods on it (only pods of `namespace`: a drain by the harness
 * never touches anything it did not create). Resolves once every eviction was accepted.
 */
export async function drainNode(client: KubeClient, namespace: string, node: string, opts: DrainOptions): Promise<string[]> {
  await cordon(client, node);
  const { body } = await client.request<{ items?: { metadata: { name: string; deletionTimestamp?: string } }[] }>('GET', `/api/v1/namespaces/${namespace}/pods`, {
    query: { fieldSelector: `spec.nodeName=${node}` },
  });
  const pods = (body.items ?? []).filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name);
  const { onRefused, ...loop } = opts;
  const evict = async (pod: string): Promise<boolean> => {
    const answer = await evictPod(client, namespace, pod);
    if (answer === true) return true;
    onRefused?.(pod, answer);
    return false;
  };
  return evictEach(node, pods, evict, { ...loop, retryMs: opts.retryMs ?? 5000 });
}
