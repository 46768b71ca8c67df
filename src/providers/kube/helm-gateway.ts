// The workloads of a topology that a Helm chart's dataplane plays (Workload.installedBy): which
// chart to install with which values, the objects that route the dataplane to the scenario's
// backend, and the container port the scenario's Service must target. The Services and the
// PodDisruptionBudget stay zerodrop's own (manifests.ts), so that the harness reaches every profile
// the same way: kind's extraPortMappings -> NodePort -> the pods labelled with the workload's name.

import type { Topology, Workload } from '../../model/workload.ts';
import { releaseName, type ChartContext, type HelmProfileSpec } from '../../profiles/helm-charts.ts';
import type { KubeObject } from './list-watch.ts';
import { chartSpecOf, LABELS, ManifestError } from './manifests.ts';

export interface ChartInstall {
  spec: HelmProfileSpec;
  workload: Workload;
  context: ChartContext;
  /** The run's own release of the chart (releaseName): installed and uninstalled under this name. */
  release: string;
  /** The chart's values for this run (`helm --values`). */
  values: Record<string, unknown>;
  /** Applied after the chart (its CRDs exist then), in this order. */
  objects: { clusterScoped: boolean; object: KubeObject }[];
}

/** The listener port of a charted workload: the target port of the first Service that selects it. */
function listenerPort(topology: Topology, workload: Workload): number {
  const port = topology.services.find((s) => s.selector === workload.name)?.ports[0]?.targetPort;
  if (port === undefined) throw new ManifestError(`no Service selects the charted workload ${workload.name}`);
  return port;
}

/** One chart install per charted workload of the topology, with the run's labels on every object. */
export function chartInstalls(topology: Topology, opts: { namespace: string; runId: string; podCidrs: readonly string[] }): ChartInstall[] {
  return topology.workloads.flatMap((workload) => {
    const dataplane = workload.installedBy;
    if (!dataplane) return [];
    const spec = chartSpecOf(workload);
    const context: ChartContext = { namespace: opts.namespace, workload: workload.name, replicas: workload.replicas, port: listenerPort(topology, workload), dataplane, podCidrs: opts.podCidrs };
    const objects = spec.objects(context).map(({ clusterScoped, object }) => {
      const o = structuredClone(object) as unknown as KubeObject & { metadata: { labels?: Record<string, string> } };
      o.metadata.labels = { ...(o.metadata.labels ?? {}), [LABELS.run]: opts.runId, [LABELS.managedBy]: 'zerodrop' };
      return { clusterScoped, object: o as KubeObject };
    });
    return [{ spec, workload, context, release: releaseName(spec.chart, opts.namespace), values: spec.values(context), objects }];
  });
}
