// `zerodrop list --scenario ID --manifests`: what a scenario deploys on a cluster, as the kube
// providers render it for a profile (renderTopology, chartInstalls), without a cluster. The objects
// are those of one run's namespace; a run on a cluster adds only what the cluster decides (NodePort
// numbers, a LoadBalancer type, the pod address ranges a route to addresses covers) and, with --gateway-class, leaves the class's dataplane out.

import { stringify } from 'yaml';
import { profilesNamed, scenariosNamed } from '../config/args.ts';
import { UsageError } from '../config/usage-error.ts';
import { packageRoot } from '../paths.ts';
import { ProfileCannotCarry, ProfileCannotPlay, type Profile } from '../profiles/profile.ts';
import { chartInstalls } from '../providers/kube/helm-gateway.ts';
import { namespaceFor, readFixtures, renderTopology, validateManifests } from '../providers/kube/manifests.ts';
import { optionsFor } from '../runner/run-matrix.ts';

/** The run id the printed objects carry (a real run's is random). */
export const MANIFESTS_RUN_ID = 'manifests';
/** What the printed objects show for the cluster's pod address ranges, which a run reads from its Nodes. */
export const MANIFESTS_POD_CIDRS = ["<each Node's spec.podCIDRs>"];

/** Prints the scenario's objects with `profileName` (a built-in or one of `defined`) as YAML documents, in apply order. */
export async function printManifests(scenarioId: string, profileName: string, defined: readonly Profile[], out: (text: string) => void): Promise<void> {
  const [def] = scenariosNamed([scenarioId]);
  const [profile] = profilesNamed([profileName], defined);
  if (!def || !profile) throw new UsageError(`list: --scenario ${scenarioId} --profile ${profileName}: not found`);
  let topology;
  try {
    // What a cluster deploys: its own defaults where a scenario has them.
    topology = def.build(profile, optionsFor(def, {}, false, { randomBalancer: true })).topology;
  } catch (error) {
    if (error instanceof ProfileCannotPlay || error instanceof ProfileCannotCarry) throw new UsageError(`list: profile ${profile.name} does not run scenario ${def.id}: ${error.message}`);
    throw error;
  }
  const namespace = namespaceFor(MANIFESTS_RUN_ID);
  const objects = renderTopology(topology, { namespace, runId: MANIFESTS_RUN_ID, fixtures: await readFixtures(topology, packageRoot) });
  const charts = chartInstalls(topology, { namespace, runId: MANIFESTS_RUN_ID, podCidrs: MANIFESTS_POD_CIDRS });
  validateManifests([...objects, ...charts.flatMap((c) => c.objects.map((o) => o.object))]);
  out(`# zerodrop list --scenario ${def.id} --profile ${profile.name} --manifests: the objects a run creates in its namespace (run id ${MANIFESTS_RUN_ID})`);
  for (const object of objects) out(`---\n${stringify(object, { lineWidth: 0 }).trimEnd()}`);
  for (const chart of charts) {
    const values = stringify(chart.values, { lineWidth: 0 }).trimEnd().split('\n').map((line) => `#   ${line}`);
    const { chart: ref, repo, version } = chart.spec.chart;
    const install = [`helm install ${chart.release} ${ref}`, repo && `--repo ${repo}`, version && `--version ${version}`, `--namespace ${namespace}`].filter(Boolean).join(' ');
    out(`---\n# ${install}, with values:\n${values.join('\n')}`);
    for (const { object } of chart.objects) out(`---\n${stringify(object, { lineWidth: 0 }).trimEnd()}`);
  }
}
