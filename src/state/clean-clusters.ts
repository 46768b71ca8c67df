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
// Helm releases: a run installs its gateway chart into its namespace as a per-run release, and charts
// make cluster-scoped objects too (ClusterRoles and their bindings, an IngressClass, webhook
// configurations). Deleting the namespace removes those of the namespace only, and with them Helm's
// own record of the release (Helm 3 keeps it as Secrets in the release's namespace), after which
// nothing could find the cluster-wide ones. So before a namespace goes, clean uninstalls each release
// found in it with `helm uninstall --wait` (the function the run's own teardown uses, helm.ts); when
// helm is missing or an uninstall fails, the namespace stays, with a problem that says so, and the
// dead run's record stays too, so that the next clean tries again. The objects the run applied
// beside a chart (its routes and Gateway, a per-run GatewayClass, STUNner's Dataplane) carry the
// run's label: they go first, by it, each checked again and awaited by deleteRunObject, routes and
// Gateway before the GatewayClass, while the chart's controller still runs to lift the finalizer it
// keeps on a GatewayClass in use; then the releases; then the namespace.
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

import { CLUSTER_SCOPED_KINDS, deleteRunNamespace, deleteRunObject, namespacedChartKinds } from '../providers/kube/apply.ts';
import { KubeClient } from '../providers/kube/client.ts';
import { helmUninstall, runHelm, type HelmRunner } from '../providers/kube/helm.ts';
import { LABELS } from '../providers/kube/manifests.ts';
import { CREATED_BY_LABEL, kindClusters } from '../providers/kind/kind.ts';
import { onPath } from '../profiles/requirements.ts';
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

/** The helm commands clean needs (a fake in tests: no helm binary, no cluster there). */
export interface HelmCli {
  /** Is helm on PATH (src/profiles/requirements.ts)? */
  installed(): boolean;
  run: HelmRunner;
}

export const helmCli: HelmCli = { installed: () => onPath('helm'), run: runHelm };

/** A namespace that clean could not delete, and why: clean.ts keeps the record of the dead run that made it. */
export interface NamespaceProblem {
  namespace: string;
  problem: string;
}

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

/** Helm 3's storage object of one release revision (its default `secret` driver). */
interface ReleaseSecret {
  type?: string;
  metadata: { name: string; labels?: Record<string, string> };
}

/**
 * The Helm releases in a namespace, one per release however many revisions it has. Helm 3 keeps each
 * revision as a Secret of type helm.sh/release.v1 in the release's namespace, labelled owner=helm and
 * name=<release> (https://helm.sh/docs/topics/advanced/#storage-backends; newSecretsObject in helm's
 * pkg/storage/driver/secrets.go).
 */
async function helmReleases(client: KubeClient, namespace: string): Promise<string[]> {
  const { body } = await client.request<{ items?: ReleaseSecret[] }>('GET', `/api/v1/namespaces/${namespace}/secrets`, { query: { labelSelector: 'owner=helm' } });
  const releases = new Set<string>();
  for (const secret of body?.items ?? []) {
    const labels = secret.metadata.labels ?? {};
    // Checked here too: a chart's own Secret may carry owner=helm, and a server may ignore the selector.
    if (secret.type === 'helm.sh/release.v1' && labels['owner'] === 'helm' && labels['name']) releases.add(labels['name']);
  }
  return [...releases].sort();
}

/**
 * Uninstalls (or lists) the Helm releases of a namespace that is about to go; returns the problems
 * that must keep the namespace (helm missing, a failed uninstall, releases that could not be listed).
 */
async function uninstallReleases(client: KubeClient, namespace: string, helm: HelmCli, opts: CleanOptions): Promise<string[]> {
  let releases: string[];
  try {
    releases = await helmReleases(client, namespace);
  } catch (error) {
    const first = (error as Error).message.split('\n')[0] ?? '';
    opts.log(`kept namespace ${namespace}: could not list its Helm releases (${first}); deleting it could leave their cluster-wide objects behind`);
    return [`namespace ${namespace}: could not list its Helm releases (${first})`];
  }
  if (releases.length === 0) return [];
  if (!helm.installed()) {
    for (const release of releases) {
      opts.log(
        `${opts.dryRun ? 'would keep' : 'kept'} namespace ${namespace}: Helm release ${release} in it cannot be uninstalled, helm is not on PATH ` +
          `(install helm and run zerodrop clean again: deleting the namespace would lose Helm's record of the release's cluster-wide objects)`,
      );
    }
    return releases.map((release) => `namespace ${namespace}: Helm release ${release} not uninstalled (helm not on PATH)`);
  }
  const problems: string[] = [];
  for (const release of releases) {
    if (!opts.dryRun) {
      try {
        await helmUninstall({ release, namespace, kubeconfig: client.config.exportConfig() }, helm.run);
      } catch (error) {
        const first = (error as Error).message.split('\n')[0] ?? '';
        problems.push(`namespace ${namespace}: Helm release ${release}: ${first}`);
        opts.log(`could not uninstall Helm release ${release} of namespace ${namespace}: ${first}; kept the namespace (fix that and run zerodrop clean again)`);
        continue;
      }
    }
    opts.log(`${opts.dryRun ? 'would uninstall' : 'uninstalled'} Helm release ${release} of namespace ${namespace}`);
  }
  return problems;
}

/**
 * Deletes (or lists) the objects of `kinds` labelled with the run (its routes and Gateway in its
 * namespace; its GatewayClass, a STUNner Dataplane), each awaited until gone (deleteRunObject);
 * returns the problems, which keep the namespace (and with it the run id that finds them) for the
 * next clean.
 */
async function deleteRunObjects(
  client: KubeClient,
  runId: string,
  kinds: readonly { apiVersion: string; kind: string; collection: string }[],
  namespace: string | undefined,
  opts: CleanOptions & { waitMs: number },
): Promise<string[]> {
  const problems: string[] = [];
  for (const { apiVersion, kind, collection } of kinds) {
    let items: { metadata: { name: string; labels?: Record<string, string> } }[];
    try {
      const { status, body } = await client.request<{ items?: typeof items }>('GET', collection, { query: { labelSelector: `${LABELS.run}=${runId}` }, allow: [404] });
      if (status === 404) continue; // the kind's CRD is not installed: nothing of it to find
      items = body.items ?? [];
    } catch (error) {
      const first = (error as Error).message.split('\n')[0] ?? '';
      problems.push(`${kind} objects of run ${runId}: could not list them (${first})`);
      opts.log(`could not list the ${kind} objects of run ${runId}: ${first}`);
      continue;
    }
    for (const item of items) {
      const name = item.metadata.name;
      // Checked here too: a server may ignore the selector.
      if (item.metadata.labels?.[LABELS.run] !== runId) continue;
      if (!opts.dryRun) {
        try {
          await deleteRunObject(client, { apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) } }, runId, { waitMs: opts.waitMs });
        } catch (error) {
          const first = (error as Error).message.split('\n')[0] ?? '';
          problems.push(`${kind} ${name}: ${first}`);
          opts.log(`could not delete ${kind} ${name}: ${first}`);
          continue;
        }
      }
      opts.log(`${opts.dryRun ? 'would delete' : 'deleted'} ${kind} ${name} (${LABELS.run}=${runId})`);
    }
  }
  return problems;
}

/**
 * Deletes (or lists) the labelled namespaces the rules above allow, saying which rule, after
 * uninstalling the Helm releases in each; returns the problems met, by namespace.
 */
export async function cleanNamespaces(
  client: KubeClient,
  opts: CleanOptions & NamespaceRules & { timeoutMs?: number; helm?: HelmCli },
): Promise<NamespaceProblem[]> {
  const verb = opts.dryRun ? 'would delete' : 'deleted';
  const { body } = await client.request<{ items?: NamespaceObject[] }>('GET', '/api/v1/namespaces', { query: { labelSelector: LABELS.run } });
  const inUse = new Set(opts.live.flatMap((r) => r.namespaces));
  const problems: NamespaceProblem[] = [];
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
    // Dependency order, as a run's own teardown (KubeProvider): the run's routes and Gateway, then
    // its GatewayClass, each gone before the next, while the charts' controllers still run to lift
    // their finalizers; the charts after; the namespace last.
    const waitMs = opts.timeoutMs ?? 30_000;
    const kept = await deleteRunObjects(client, runId, namespacedChartKinds(name), name, { ...opts, waitMs });
    if (kept.length === 0) kept.push(...(await deleteRunObjects(client, runId, CLUSTER_SCOPED_KINDS, undefined, { ...opts, waitMs })));
    if (kept.length === 0) kept.push(...(await uninstallReleases(client, name, opts.helm ?? helmCli, opts)));
    if (kept.length > 0) {
      problems.push(...kept.map((problem) => ({ namespace: name, problem })));
      continue;
    }
    if (!opts.dryRun) {
      try {
        await deleteRunNamespace(client, name, runId, { timeoutMs: opts.timeoutMs ?? 30_000 });
      } catch (error) {
        problems.push({ namespace: name, problem: `namespace ${name}: ${(error as Error).message}` });
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
