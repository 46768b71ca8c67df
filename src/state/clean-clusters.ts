// `zerodrop clean`, cluster part.
//
// Namespaces: every run on a cluster creates one namespace labelled `zerodrop.dev/run=<run id>`
// (kube/manifests.ts). A cluster is shared: a labelled namespace may belong to a run on another
// machine that is going on right now, which this machine's records know nothing of. So clean deletes
// a labelled namespace only when (a) a run recorded on this machine created it and its zerodrop
// process is gone, (b) it is older than --older-than (default 24 h, by its creationTimestamp; longer
// than any run), or (c) --all is given; never one a run still going on this machine recorded. No
// other namespace is touched. Deletion goes through the same deleteRunNamespace the run's own
// teardown uses, which checks the label again on the object itself.
//
// kind clusters: a run records a cluster in its state record before `kind create cluster` starts,
// and the cluster's nodes carry the label `zerodrop.dev/created-by=zerodrop` (kind's per-node
// `labels`, https://kind.sigs.k8s.io/docs/user/configuration/#extra-labels). A cluster is deleted
// only when a dead run's record names it AND its nodes carry that label: a cluster of the same name
// that someone created since is left alone, and so is one that a run still going on this machine
// recorded or has a namespace on (a later run reuses a cluster by name). kind clusters are local to
// this machine, so rules (b) and (c) have nothing to add: every cluster zerodrop created and did not
// delete is in a record; a labelled cluster that no record names was kept on purpose (a reused
// --cluster-name, ZERODROP_KEEP_CLUSTER of the kind suite).

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
  metadata: { name: string; labels?: Record<string, string>; creationTimestamp?: string };
  status?: { phase?: string };
}

/** Rule (b)'s default age: far longer than any run, nightly ones included. */
export const DEFAULT_OLDER_THAN = '24h';
export const DEFAULT_OLDER_THAN_MS = 24 * 3_600_000;

/** An age for a log line: 1d2h, 3h5m, 40m, 12s. */
export function formatAge(ms: number): string {
  const parts: string[] = [];
  let rest = Math.max(0, Math.floor(ms / 1000));
  for (const [unit, size] of [['d', 86_400], ['h', 3_600], ['m', 60], ['s', 1]] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 && parts.length < 2) parts.push(`${n}${unit}`);
  }
  return parts.join('') || '0s';
}

export interface NamespaceRules {
  /** Runs of this machine whose zerodrop process is still going: their namespaces are never deleted. */
  live: readonly RunRecord[];
  /** Runs of this machine whose zerodrop process is gone: rule (a). */
  dead?: readonly RunRecord[];
  /** Rule (b): delete labelled namespaces older than this (default 24 h). */
  olderThanMs?: number;
  /** Rule (c): every labelled namespace but the live runs'. */
  all?: boolean;
  /** The clock, for tests (ms since the epoch). */
  now?: number;
}

/** Why a labelled namespace may go, or undefined when it stays (the live check comes first, in cleanNamespaces). */
function deletionReason(ns: NamespaceObject, rules: NamespaceRules): string | undefined {
  const name = ns.metadata.name;
  const dead = rules.dead?.find((r) => r.namespaces.includes(name));
  if (dead) return `its run on this machine ended without tearing down (record ${dead.id})`;
  if (rules.all) return '--all';
  const age = namespaceAge(ns, rules);
  const limit = rules.olderThanMs ?? DEFAULT_OLDER_THAN_MS;
  if (age !== undefined && age > limit) return `created ${formatAge(age)} ago, older than ${formatAge(limit)}`;
  return undefined;
}

function namespaceAge(ns: NamespaceObject, rules: NamespaceRules): number | undefined {
  const created = Date.parse(ns.metadata.creationTimestamp ?? '');
  return Number.isNaN(created) ? undefined : (rules.now ?? Date.now()) - created;
}

/** Deletes (or lists) the labelled namespaces the rules above allow, saying which rule; returns the problems met. */
export async function cleanNamespaces(client: KubeClient, opts: CleanOptions & NamespaceRules & { timeoutMs?: number }): Promise<string[]> {
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
    const reason = deletionReason(ns, opts);
    if (reason === undefined) {
      const age = namespaceAge(ns, opts);
      opts.log(
        `kept namespace ${name}: no finished run of this machine made it and it is ${age === undefined ? 'of unknown age' : `${formatAge(age)} old`} ` +
          `(another machine's run may be using it; --older-than ${formatAge(opts.olderThanMs ?? DEFAULT_OLDER_THAN_MS)} or --all deletes it)`,
      );
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
    opts.log(`${verb} namespace ${name} (${LABELS.run}=${runId}): ${reason}`);
  }
  return problems;
}

/** What clean needs to know of a kind cluster: are its nodes labelled as zerodrop's, and which run namespaces are on it. */
export interface KindClusterFacts {
  createdByZerodrop: boolean;
  runNamespaces: string[];
}

async function inspectKindCluster(kubeconfig: string): Promise<KindClusterFacts> {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const client = new KubeClient(kc);
  const { body } = await client.request<{ items?: { metadata?: { labels?: Record<string, string> } }[] }>('GET', '/api/v1/nodes', {
    query: { labelSelector: `${CREATED_BY_LABEL.key}=${CREATED_BY_LABEL.value}` },
  });
  const namespaces = await client.request<{ items?: NamespaceObject[] }>('GET', '/api/v1/namespaces', { query: { labelSelector: LABELS.run } });
  return {
    createdByZerodrop: (body.items ?? []).some((n) => n.metadata?.labels?.[CREATED_BY_LABEL.key] === CREATED_BY_LABEL.value),
    runNamespaces: (namespaces.body.items ?? []).filter((n) => n.metadata.labels?.[LABELS.run]).map((n) => n.metadata.name),
  };
}

/**
 * Deletes (or lists) the kind clusters that dead runs created; a cluster that is gone already is
 * dropped from the record silently. Problems are added to the run's own, so its record stays.
 */
export async function cleanKindClusters(
  runs: readonly CleanedRun[],
  kind: KindCli,
  opts: CleanOptions & { live?: readonly RunRecord[] },
  inspect = inspectKindCluster,
): Promise<void> {
  const wanted = runs.filter((r) => r.record.kindClusters.length > 0);
  const live = opts.live ?? [];
  const liveNamespaces = new Set(live.flatMap((r) => r.namespaces));
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
      const liveRun = live.find((r) => r.kindClusters.includes(name));
      if (liveRun) {
        opts.log(`skipped kind cluster ${name}: run ${liveRun.id}, still going on this machine, created it again`);
        continue;
      }
      let facts: KindClusterFacts;
      try {
        facts = await inspect(await kind.kubeconfig(name));
      } catch (error) {
        run.problems.push(`kind cluster ${name}: could not read its nodes (${(error as Error).message.split('\n')[0]})`);
        opts.log(`could not check kind cluster ${name}: ${(error as Error).message.split('\n')[0]}`);
        continue;
      }
      if (!facts.createdByZerodrop) {
        // Not ours any more: nothing of this run is left to find there.
        opts.log(`skipped kind cluster ${name}: its nodes do not carry ${CREATED_BY_LABEL.key}=${CREATED_BY_LABEL.value}`);
        continue;
      }
      const used = facts.runNamespaces.filter((n) => liveNamespaces.has(n));
      if (used.length > 0) {
        // A run still going reused the cluster by name: not now, but the record stays for a later clean.
        run.problems.push(`kind cluster ${name}: a run still going on this machine uses it`);
        opts.log(`skipped kind cluster ${name}: a run still going on this machine uses it (namespace ${used.join(', ')})`);
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
