// What a mesh profile (src/profiles/meshes.ts) does to a cluster before its run: find the mesh, or
// plan its install from the pinned charts (Gateway API CRDs first when absent), and enrol the run's
// namespace. Planning reads the cluster and changes nothing; the plan is carried out by the kube
// provider with the same helm runner as the Helm profiles (helm.ts).
//
// zerodrop installs a mesh only on a cluster it created or a throwaway one (kind, k3s): on an
// existing cluster (`--provider cluster`) it never installs cluster-wide software, and a missing mesh
// stops the run with the instruction to install it first. A mesh it finds is used as it is.

import type { ClusterProviderName } from '../kube-session.ts';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { GATEWAY_API_CRDS, type MeshChart, type MeshSpec } from '../../profiles/meshes.ts';
import { linkerdIdentity, linkerdIdentityProblems } from '../../profiles/linkerd-certs.ts';
import { parseAllDocuments } from 'yaml';
import { FIELD_MANAGER, PATCH, type KubeClient } from './client.ts';
import { helmInstallChart, type HelmRunner } from './helm.ts';
import type { KubeObject } from './list-watch.ts';

export interface MeshInstallPlan {
  /** Apply GATEWAY_API_CRDS.url before the charts. */
  gatewayApiCrds: boolean;
  /** helm upgrade --install, in this order; empty when the mesh is already there. */
  charts: MeshChart[];
  /** One line for the run's notes: what was found and what will be done. */
  note: string;
}

/** The mesh is missing where zerodrop may not install it: the run stops before anything is created. */
export class MeshUnavailable extends Error {}

const exists = async (client: KubeClient, path: string) => (await client.request('GET', path, { allow: [404] })).status !== 404;

export async function planMeshInstall(client: KubeClient, spec: MeshSpec, opts: { provider: ClusterProviderName; now?: Date }): Promise<MeshInstallPlan> {
  if (await exists(client, spec.presentWhen.path)) {
    return { gatewayApiCrds: false, charts: [], note: `${spec.mesh} found (${spec.presentWhen.what}): used as installed, left as it was` };
  }
  if (opts.provider === 'cluster') {
    throw new MeshUnavailable(`${spec.mesh} is not installed on this cluster (no ${spec.presentWhen.what}), and zerodrop installs nothing cluster-wide on a cluster it did not create; install it first (${spec.docs})`);
  }
  const identity = spec.mesh === 'linkerd' ? linkerdIdentity(opts.now) : undefined;
  const problems = identity ? linkerdIdentityProblems(identity, opts.now) : [];
  if (problems.length > 0) throw new Error(`generated Linkerd identity is unfit: ${problems.join('; ')}`);
  const gatewayApiCrds = !(await exists(client, GATEWAY_API_CRDS.probe));
  const charts = spec.charts(identity);
  const steps = [...(gatewayApiCrds ? [`Gateway API CRDs ${GATEWAY_API_CRDS.version}`] : []), ...charts.map((c) => `${c.chart.chart} ${c.chart.version}`)];
  return { gatewayApiCrds, charts, note: `${spec.mesh} not found (no ${spec.presentWhen.what}): installing ${steps.join(', then ')}` };
}

/**
 * The run's Namespace with the mesh's enrolment and the user's --namespace-labels and
 * --namespace-annotations. A user's value that contradicts the enrolment is an error, not a silent
 * override: the run would measure the backend without the mesh it names.
 */
export function enrolledNamespace(namespace: KubeObject, spec: MeshSpec | undefined, user: { labels?: Record<string, string> | undefined; annotations?: Record<string, string> | undefined }): KubeObject {
  const meta = namespace.metadata as KubeObject['metadata'] & { labels?: Record<string, string>; annotations?: Record<string, string> };
  const merge = (what: 'labels' | 'annotations', own: Record<string, string> | undefined, mesh: Record<string, string>, given: Record<string, string> | undefined) => {
    for (const [key, value] of Object.entries(given ?? {})) {
      if (key in mesh && mesh[key] !== value) throw new MeshUnavailable(`--namespace-${what} ${key}=${value} contradicts the ${spec?.mesh ?? ''} profile's enrolment ${key}=${mesh[key] ?? ''}`);
    }
    const merged = { ...(own ?? {}), ...(given ?? {}), ...mesh };
    return Object.keys(merged).length > 0 ? { [what]: merged } : {};
  };
  const result: KubeObject = {
    ...namespace,
    metadata: {
      ...meta,
      ...merge('labels', meta.labels, spec?.namespaceLabels ?? {}, user.labels),
      ...merge('annotations', meta.annotations, spec?.namespaceAnnotations ?? {}, user.annotations),
    },
  };
  new Namespace(result as never).validate();
  return result;
}

export interface CarryOutOptions {
  /** The kubeconfig's text, for helm (KubeConfig.exportConfig). */
  kubeconfig: string;
  /** helm itself (helm.ts runHelm) or a stand-in in tests. */
  helm?: HelmRunner;
  /** Reads the Gateway API release manifest (default: an HTTPS GET of GATEWAY_API_CRDS.url). */
  fetchText?: (url: string) => Promise<string>;
  timeoutMs?: number;
  pollMs?: number;
  log?: (line: string) => void;
}

async function httpsText(url: string): Promise<string> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
  return response.text();
}

/**
 * Carries out a plan: the Gateway API CRDs (server-side applied, then waited for until Established,
 * since the charts after them create objects of those kinds), then each chart with `helm upgrade
 * --install --wait` into its own namespace, created first. Nothing is uninstalled afterwards: see
 * the rules in docs/mesh.md.
 */
export async function carryOutMeshInstall(client: KubeClient, plan: MeshInstallPlan, opts: CarryOutOptions): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 300_000;
  opts.log?.(plan.note);
  if (plan.gatewayApiCrds) {
    const documents = parseAllDocuments(await (opts.fetchText ?? httpsText)(GATEWAY_API_CRDS.url))
      .map((d) => d.toJS() as KubeObject | null)
      .filter((d): d is KubeObject => d?.kind === 'CustomResourceDefinition');
    if (documents.length === 0) throw new Error(`${GATEWAY_API_CRDS.url} held no CustomResourceDefinition`);
    const paths = documents.map((crd) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
    for (const [i, crd] of documents.entries()) {
      await client.request('PATCH', paths[i] ?? '', { query: { fieldManager: FIELD_MANAGER, force: true }, contentType: PATCH.apply, body: crd });
    }
    const deadline = Date.now() + timeoutMs;
    for (const path of paths) {
      for (;;) {
        const { body } = await client.request<{ status?: { conditions?: { type?: string; status?: string }[] } }>('GET', path);
        if (body.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
        if (Date.now() > deadline) throw new Error(`${path} not Established within ${timeoutMs / 1000} s`);
        await new Promise((r) => setTimeout(r, opts.pollMs ?? 500));
      }
    }
  }
  for (const chart of plan.charts) {
    await client.request('PATCH', `/api/v1/namespaces/${chart.namespace}`, {
      query: { fieldManager: FIELD_MANAGER, force: true },
      contentType: PATCH.apply,
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: chart.namespace } },
    });
    await helmInstallChart(chart, { release: chart.chart.release, namespace: chart.namespace, kubeconfig: opts.kubeconfig, values: chart.values, timeoutSeconds: Math.ceil(timeoutMs / 1000) }, opts.helm);
  }
}

/** Plans and carries out a mesh profile's install before a run's deploy; returns the note for the Timeline. */
export async function ensureMesh(
  client: KubeClient,
  spec: MeshSpec,
  opts: { provider: ClusterProviderName; carryOut?: typeof carryOutMeshInstall },
): Promise<string> {
  const plan = await planMeshInstall(client, spec, { provider: opts.provider });
  await (opts.carryOut ?? carryOutMeshInstall)(client, plan, { kubeconfig: client.config.exportConfig() });
  return plan.note;
}
