// What a mesh profile (src/profiles/meshes.ts) does to a cluster before its run: find the mesh, or
// plan its install from the pinned charts (Gateway API CRDs first when absent), and enrol the run's
// namespace. Planning reads the cluster and changes nothing; the plan is carried out by the kube
// provider with the same helm runner as the Helm profiles (helm.ts).
//
// zerodrop installs a mesh only on a cluster it created or a throwaway one (kind, k3s): on an
// existing cluster (`--provider cluster`) it never installs cluster-wide software, and a missing mesh
// stops the run with the instruction to install it first. A mesh it finds is used as it is.

import { Namespace } from 'kubernetes-models/v1/Namespace';
import { GATEWAY_API_CRDS, type MeshChart, type MeshSpec } from '../../profiles/meshes.ts';
import { linkerdIdentity, linkerdIdentityProblems } from '../../profiles/linkerd-certs.ts';
import type { KubeClient } from './client.ts';
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

export async function planMeshInstall(client: KubeClient, spec: MeshSpec, opts: { provider: 'kind' | 'k3s' | 'cluster'; now?: Date }): Promise<MeshInstallPlan> {
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
