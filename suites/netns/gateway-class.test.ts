// --gateway-class on a real cluster: Traefik, built from its Go module and installed by the netns
// cluster for the class the run names, plays the gateway of gateway-delete-http through the whole
// GatewayClass path (class Accepted, Gateway Programmed, its shared dataplane found, the delete on
// its Deployment's pod, drain bounds read from the pod). Drain-correct it passes; as packaged (no
// preStop, no keep-alive bound) it fails by the requests its closing listener and connections drop.

import { describe, inject, it } from 'vitest';
import { CONFORMANCE_TIMEOUTS } from '../../src/providers/cluster-system.ts';
import { isBuilt } from '../../src/providers/netns/go-module-build.ts';
import { traefikModule } from '../../src/providers/netns/traefik-binary.ts';
import { dropResult } from '../../src/report/collect.ts';
import { runMatrix } from '../../src/runner/run-matrix.ts';
import { gatewayClassProfile } from '../../src/scenarios/gateway-class-profile.ts';
import { catalog } from '../../src/scenarios/index.ts';
import type { OptionValues } from '../../src/scenarios/definition.ts';
import { expectFailedBy, expectPass, repeatUnmeasured } from '../helpers/run-case.ts';
import { skipReason, title, useNetnsCluster } from './context.ts';

const traefikUnbuilt = (await isBuilt(traefikModule())) ? undefined : 'Traefik is not built here (npm run traefik:build)';

describe.skipIf(skipReason !== '' || traefikUnbuilt !== undefined)(title(`GatewayClass traefik on a netns cluster${traefikUnbuilt ? ` (${traefikUnbuilt})` : ''}`), () => {
  const cluster = useNetnsCluster(2);

  async function run(className: string, overrides: OptionValues = {}) {
    const def = catalog.find((d) => d.id === 'gateway-delete-http')!;
    await using session = await cluster.session({ gatewayClass: { name: className, timeouts: CONFORMANCE_TIMEOUTS } });
    const matrix = await runMatrix({ provider: 'netns', session, scenarios: [def], profiles: [gatewayClassProfile(className)], overrides, nightly: false, signal: AbortSignal.timeout(8 * 60_000) });
    const [result] = matrix.scenarios;
    if (!result) throw new Error('no result');
    await dropResult(inject('zerodropCollectDir'), result, 'netns');
    return result;
  }

  it('gateway-delete-http passes on traefik (drain-correct)', async () => {
    expectPass(await repeatUnmeasured(() => run('traefik')));
  }, 10 * 60_000);

  // Without the overlong requests: noFailedRequests never judges them (they outlast any drain by
  // design and are cut at its bound), and Traefik as packaged held the deleted pod for them.
  it('gateway-delete-http fails by noFailedRequests on traefik-naive', async () => {
    expectFailedBy(await repeatUnmeasured(() => run('traefik-naive', { overlongRequests: 0 })), 'noFailedRequests');
  }, 10 * 60_000);
});
