// A gateway from a team's own Helm chart on a real cluster: examples/helm-gateway's chart, from its
// directory, installed per run as a release of its own by helm built from its Go module
// (helm-binary.ts) into the run's namespace, and uninstalled after. With the chart's drain values
// it passes gateway-delete-http; with its defaults (no preStop) it fails: SIGQUIT closes every idle
// keep-alive connection unannounced, and the listener with them while kube-proxy may still send it
// new connections.

import { describe, expect, it, vi } from 'vitest';
import { isBuilt } from '../../src/providers/netns/go-module-build.ts';
import { helmModule } from '../../src/providers/netns/helm-binary.ts';
import type { Profile } from '../../src/profiles/profile.ts';
import type { OptionValues } from '../../src/model/verdict.ts';
import { expectFailedBy, expectPass, repeatUnmeasured } from '../helpers/run-case.ts';
import { shutdownPhaseOf, skipReason, title, useNetnsCluster } from './context.ts';

// The example imports 'zerodrop' as a team's config does: here, this checkout's source. Imported by
// URL, so that the typecheck of the suites leaves it to the installed package it is written for.
vi.mock('zerodrop', () => import('../../src/index.ts'));
const EXAMPLE = new URL('../../examples/helm-gateway/zerodrop.config.ts', import.meta.url).href;
const { default: config } = (await import(EXAMPLE)) as { default: { profiles: Profile[] } };

const helmUnbuilt = (await isBuilt(helmModule())) ? undefined : 'helm is not built here (npm run helm:build)';

describe.skipIf(skipReason !== '' || helmUnbuilt !== undefined)(title(`a gateway from a chart directory (examples/helm-gateway) on a netns cluster${helmUnbuilt ? ` (${helmUnbuilt})` : ''}`), () => {
  const cluster = useNetnsCluster(2);

  async function run(name: string, overrides: OptionValues = {}) {
    const profile = config.profiles.find((p) => p.name === name)!;
    const result = await cluster.runPair('gateway-delete-http', profile, { overrides });
    // The release was the run's own: nothing of it is left in the cluster.
    expect(await cluster.kubectl(['get', 'secrets', '--all-namespaces', '-l', 'owner=helm', '-o', 'name'])).toBe('');
    return result;
  }

  it('gateway-delete-http passes on nginx-gateway (the chart with ci/drain-values.yaml)', async () => {
    expectPass(await repeatUnmeasured(() => run('nginx-gateway')));
  }, 10 * 60_000);

  // Without the overlong requests: noFailedRequests never judges them (they outlast any drain by
  // design and are cut at its bound), and the chart's defaults put no bound on its graceful stop, so
  // one held the deleted pod until SIGKILL, 30 s after its delete, for nothing this test judges.
  // What fails every run is keepAliveClosedPolitely: SIGQUIT closes the idle keep-alive connections
  // (about 30) without a Connection: close. Whether a request fails too is a race on an idle two-node
  // cluster: kube-proxy deprograms the pod within tens of milliseconds of the delete, about when the
  // agent delivers SIGQUIT: measured, 10, 8, 0 and 12 connections refused in four runs, all 20 to 40 ms
  // after the delete, and none (nor a request cut) in one CI run. Any request that does fail is the
  // deleted pod's, before its deprogramming.
  it('gateway-delete-http fails on nginx-gateway-naive (the chart\'s defaults): keep-alive connections closed unannounced, any failed request on the deleted pod', async () => {
    const result = await repeatUnmeasured(() => run('nginx-gateway-naive', { overlongRequests: 0 }));
    expectFailedBy(result, 'keepAliveClosedPolitely');
    const failed = result.assertions.find((a) => a.name === 'noFailedRequests');
    // A request cut without a response names no pod on a cluster: its phase is told against the deleted pod's shutdown.
    if (failed?.verdict === 'fail') expect(failed.message).toMatch(shutdownPhaseOf('nginx-gateway-'));
  }, 10 * 60_000);
});
