// --gateway-class on a real cluster: Traefik, built from its Go module and installed by the netns
// cluster for the class the run names, plays the gateway of gateway-delete-http through the whole
// GatewayClass path (class Accepted, Gateway Programmed, its shared dataplane found, the delete on
// its Deployment's pod, drain bounds read from the pod). Drain-correct it passes; as packaged (no
// preStop, no keep-alive bound) it fails by the requests its closing listener and connections drop.

import { describe, it } from 'vitest';
import { CONFORMANCE_TIMEOUTS } from '../../src/providers/cluster-system.ts';
import { isBuilt } from '../../src/providers/netns/go-module-build.ts';
import { traefikModule } from '../../src/providers/netns/traefik-binary.ts';
import { gatewayClassProfile } from '../../src/scenarios/gateway-class-profile.ts';
import type { OptionValues } from '../../src/scenarios/definition.ts';
import { expectFailedBy, expectPass, repeatUnmeasured } from '../helpers/run-case.ts';
import { skipReason, title, useNetnsCluster } from './context.ts';

const traefikUnbuilt = (await isBuilt(traefikModule())) ? undefined : 'Traefik is not built here (npm run traefik:build)';

describe.skipIf(skipReason !== '' || traefikUnbuilt !== undefined)(title(`GatewayClass traefik on a netns cluster${traefikUnbuilt ? ` (${traefikUnbuilt})` : ''}`), () => {
  const cluster = useNetnsCluster(2);

  const run = (className: string, overrides: OptionValues = {}) =>
    cluster.runPair('gateway-delete-http', gatewayClassProfile(className), { overrides, system: { gatewayClass: { name: className, timeouts: CONFORMANCE_TIMEOUTS } } });

  it('gateway-delete-http passes on traefik (drain-correct)', async () => {
    expectPass(await repeatUnmeasured(() => run('traefik')));
  }, 10 * 60_000);

  // Without the overlong requests: noFailedRequests never judges them (they outlast any drain by
  // design and are cut at its bound), and Traefik as packaged held the deleted pod for them.
  it('gateway-delete-http fails by noFailedRequests on traefik-naive', async () => {
    expectFailedBy(await repeatUnmeasured(() => run('traefik-naive', { overlongRequests: 0 })), 'noFailedRequests');
  }, 10 * 60_000);
});
