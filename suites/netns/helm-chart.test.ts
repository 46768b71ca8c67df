// A gateway from a team's own Helm chart on a real cluster: examples/helm-gateway's chart, from its
// directory, installed per run as a release of its own by helm built from its Go module
// (helm-binary.ts) into the run's namespace, and uninstalled after. With the chart's drain values
// it passes gateway-delete-http; with its defaults (no preStop) it fails by the requests its closing
// listener refuses while kube-proxy still sends it new connections.

import { describe, expect, it, vi } from 'vitest';
import { isBuilt } from '../../src/providers/netns/go-module-build.ts';
import { helmModule } from '../../src/providers/netns/helm-binary.ts';
import type { Profile } from '../../src/profiles/profile.ts';
import type { OptionValues } from '../../src/scenarios/definition.ts';
import { expectFailedBy, expectPass, repeatUnmeasured } from '../helpers/run-case.ts';
import { skipReason, title, useNetnsCluster } from './context.ts';

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
  // one held the deleted pod until SIGKILL, 30 s after its delete, for nothing this test judges. The
  // failures it does judge are the new connections the closing listener refuses before deprogramming.
  it('gateway-delete-http fails by noFailedRequests on nginx-gateway-naive (the chart\'s defaults)', async () => {
    expectFailedBy(await repeatUnmeasured(() => run('nginx-gateway-naive', { overlongRequests: 0 })), 'noFailedRequests');
  }, 10 * 60_000);
});
