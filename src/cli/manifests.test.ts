// `zerodrop list --scenario ID --manifests`: the objects printed are the ones the kube providers
// render for the scenario and profile, in apply order, and a charted profile's release is named.

import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../config/usage-error.ts';
import { packageRoot } from '../paths.ts';
import { findProfile } from '../profiles/index.ts';
import { chartInstalls } from '../providers/kube/helm-gateway.ts';
import { namespaceFor, readFixtures, renderTopology } from '../providers/kube/manifests.ts';
import { optionsFor } from '../runner/run-matrix.ts';
import { findScenario } from '../scenarios/index.ts';
import { MANIFESTS_POD_CIDRS, MANIFESTS_RUN_ID, printManifests } from './manifests.ts';

async function printed(scenario: string, profile: string): Promise<{ text: string; objects: unknown[] }> {
  const lines: string[] = [];
  await printManifests(scenario, profile, [], (line) => lines.push(line));
  const text = lines.join('\n');
  return { text, objects: parseAllDocuments(text).map((d) => d.toJS() as unknown).filter((o) => o !== null) };
}

describe('list --manifests', () => {
  it('prints the objects the kube providers render for backend-delete-http on the reference profile, in apply order', async () => {
    const def = findScenario('backend-delete-http')!;
    const topology = def.build(findProfile('reference')!, optionsFor(def, {}, false)).topology;
    const expected = renderTopology(topology, { namespace: namespaceFor(MANIFESTS_RUN_ID), runId: MANIFESTS_RUN_ID, fixtures: await readFixtures(topology, packageRoot) });
    const { objects } = await printed('backend-delete-http', 'reference');
    expect(objects).toEqual(JSON.parse(JSON.stringify(expected)));
  });

  it("names a charted profile's Helm release and values, then its own objects", async () => {
    const { text, objects } = await printed('gateway-delete-http', 'envoy-gateway');
    const def = findScenario('gateway-delete-http')!;
    const topology = def.build(findProfile('envoy-gateway')!, optionsFor(def, {}, false)).topology;
    const [chart] = chartInstalls(topology, { namespace: namespaceFor(MANIFESTS_RUN_ID), runId: MANIFESTS_RUN_ID, podCidrs: MANIFESTS_POD_CIDRS });
    expect(text).toContain(`# helm install ${chart!.release} ${chart!.spec.chart.chart}`);
    for (const { object } of chart!.objects) expect(objects).toContainEqual(JSON.parse(JSON.stringify(object)));
  });

  it('refuses a profile that cannot play the scenario, and an unknown scenario, as bad usage', async () => {
    await expect(printed('gateway-delete-turn', 'nginx')).rejects.toThrow(UsageError);
    await expect(printed('no-such-scenario', 'reference')).rejects.toThrow(/unknown scenario/);
  });
});
