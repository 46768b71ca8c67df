// `zerodrop clean`, cluster part.
//
// Namespaces: every run on a cluster creates one namespace labelled `zerodrop.dev/run=<run id>`
// (kube/manifests.ts); clean deletes the namespaces of the kube context that carry that label, and
// no other, except those a still-running local run recorded. Deletion goes through the same
// deleteRunNamespace the run's own teardown uses, which checks the label again on the object itself.
//
// kind clusters: a run records a cluster in its state record before `kind create cluster` starts,
// and the cluster's nodes carry the label `zerodrop.dev/created-by=zerodrop` (kind's per-node
// `labels`, https://kind.sigs.k8s.io/docs/user/configuration/#extra-labels). A cluster is deleted
// only when a dead run's record names it AND its nodes carry that label: a cluster of the same name
// that someone created since is left alone.

import { execa } from 'execa';
import { KubeConfig } from '@kubernetes/client-node';

import { deleteRunNamespace } from '../providers/kube/apply.ts';
import { KubeClient } from '../providers/kube/client.ts';
import { LABELS } from '../providers/kube/manifests.ts';
import { CREATED_BY_LABEL, kindClusters } from '../providers/kind/kind.ts';
import type { CleanOptions, CleanedRun } from './clean.ts';
import type { RunRecord } from './run-record.ts';

/** The kind commands clean needs (a fake in tests: there is no Docker engine there). */
export interface KindCli {
  clusters(): Promise<string[]>;
  kubeconfig(name: string): Promise<string>;
  delete(name: string): Promise<void>;
}

export const kindCli: KindCli = {
  clusters: kindClusters,
  kubeconfig: async (name) => (await execa('kind', ['get', 'kubeconfig', '--name', name], { timeout: 30_000 })).stdout,
  delete: async (name) => {
    await execa('kind', ['delete', 'cluster', '--name', name], { timeout: 300_000 });
  },
};

interface NamespaceObject {
  metadata: { name: string; labels?: Record<string, string> };
  status?: { phase?: string };
}

/** Deletes (or lists) the namespaces labelled with zerodrop's run label; returns the problems met. */
export async function cleanNamespaces(
  client: KubeClient,
  opts: CleanOptions & { live: readonly RunRecord[]; timeoutMs?: number },
): Promise<string[]> {
  const verb = opts.dryRun ? 'would delete' : 'deleted';
  const { body } = await client.request<{ items?: NamespaceObject[] }>('GET', '/api/v1/namespaces', { query: { labelSelector: LABELS.run } });
  const inUse = new Set(opts.live.flatMap((r) => r.namespaces));
  const problems: string[] = [];
  for (const ns of body.items ?? []) {
    const runId = ns.metadata.labels?.[LABELS.run];
    if (!runId) continue; // a server that ignored the selector: only labelled namespaces count
    const name = ns.metadata.name;
    if (inUse.has(name)) {
      opts.log(`skipped namespace ${name}: its run is still going`);
      continue;
    }
    if (ns.status?.phase === 'Terminating') {
      opts.log(`namespace ${name} is already being deleted`);
      continue;
    }
    if (!opts.dryRun) {
      try {
        await deleteRunNamespace(client, name, runId, { timeoutMs: opts.timeoutMs ?? 30_000 });
      } catch (error) {
        problems.push(`namespace ${name}: ${(error as Error).message}`);
        opts.log(`could not delete namespace ${name}: ${(error as Error).message}`);
        continue;
      }
    }
    opts.log(`${verb} namespace ${name} (${LABELS.run}=${runId})`);
  }
  return problems;
}

/** True when the cluster's nodes carry zerodrop's created-by label. */
async function createdByZerodrop(kubeconfig: string): Promise<boolean> {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const { body } = await new KubeClient(kc).request<{ items?: { metadata?: { labels?: Record<string, string> } }[] }>('GET', '/api/v1/nodes', {
    query: { labelSelector: `${CREATED_BY_LABEL.key}=${CREATED_BY_LABEL.value}` },
  });
  return (body.items ?? []).some((n) => n.metadata?.labels?.[CREATED_BY_LABEL.key] === CREATED_BY_LABEL.value);
}

/**
 * Deletes (or lists) the kind clusters that dead runs created; a cluster that is gone already is
 * dropped from the record silently. Problems are added to the run's own, so its record stays.
 */
export async function cleanKindClusters(runs: readonly CleanedRun[], kind: KindCli, opts: CleanOptions, labelled = createdByZerodrop): Promise<void> {
  const wanted = runs.filter((r) => r.record.kindClusters.length > 0);
  if (wanted.length === 0) return;
  let existing: string[];
  try {
    existing = await kind.clusters();
  } catch (error) {
    for (const run of wanted) run.problems.push(`kind clusters ${run.record.kindClusters.join(', ')}: \`kind get clusters\` failed (${(error as Error).message.split('\n')[0]})`);
    opts.log(`could not list kind clusters: ${(error as Error).message.split('\n')[0]}`);
    return;
  }
  for (const run of wanted) {
    for (const name of run.record.kindClusters) {
      if (!existing.includes(name)) continue;
      let ours: boolean;
      try {
        ours = await labelled(await kind.kubeconfig(name));
      } catch (error) {
        run.problems.push(`kind cluster ${name}: could not read its nodes (${(error as Error).message.split('\n')[0]})`);
        opts.log(`could not check kind cluster ${name}: ${(error as Error).message.split('\n')[0]}`);
        continue;
      }
      if (!ours) {
        // Not ours any more: nothing of this run is left to find there.
        opts.log(`skipped kind cluster ${name}: its nodes do not carry ${CREATED_BY_LABEL.key}=${CREATED_BY_LABEL.value}`);
        continue;
      }
      if (!opts.dryRun) {
        try {
          await kind.delete(name);
        } catch (error) {
          run.problems.push(`kind cluster ${name}: ${(error as Error).message.split('\n')[0]}`);
          opts.log(`could not delete kind cluster ${name}: ${(error as Error).message.split('\n')[0]}`);
          continue;
        }
      }
      opts.log(`${opts.dryRun ? 'would delete' : 'deleted'} kind cluster ${name}`);
    }
  }
}
