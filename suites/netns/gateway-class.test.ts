// --gateway-class on a real cluster: Traefik, built from its Go module and installed by the netns
// cluster for the class the run names, plays the gateway of gateway-delete-http through the whole
// GatewayClass path (class Accepted, Gateway Programmed, its shared dataplane found, the delete on
// its Deployment's pod, drain bounds read from the pod). Drain-correct it passes; as packaged (no
// preStop, no keep-alive bound) it fails: SIGTERM closes its idle keep-alive connections unannounced,
// and its listener while kube-proxy may still send it new connections.

import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TIMEOUTS } from '../../src/providers/cluster-system.ts';
import { isBuilt } from '../../src/providers/netns/go-module-build.ts';
import { traefikModule } from '../../src/providers/netns/traefik-binary.ts';
import { gatewayClassProfile } from '../../src/scenarios/gateway-class-profile.ts';
import type { OptionValues } from '../../src/model/verdict.ts';
import { expectFailedBy, expectPass, repeatUnmeasured } from '../helpers/run-case.ts';
import { shutdownPhaseOf, skipReason, title, useNetnsCluster } from './context.ts';

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
  // keepAliveClosedPolitely fails every run; a failed request is a race (a request sent as its
  // connection closes, a connection refused before kube-proxy deprograms the pod, tens of
  // milliseconds after its delete on an idle cluster), so it is placed, not required.
  it('gateway-delete-http fails on traefik-naive: keep-alive connections closed unannounced, any failed request on the deleted pod', async () => {
    const result = await repeatUnmeasured(() => run('traefik-naive', { overlongRequests: 0 }));
    expectFailedBy(result, 'keepAliveClosedPolitely');
    const failed = result.assertions.find((a) => a.name === 'noFailedRequests');
    // A request cut without a response names no pod on a cluster: its phase is told against the deleted pod's shutdown.
    if (failed?.verdict === 'fail') expect(failed.message).toMatch(shutdownPhaseOf('traefik-'));
  }, 10 * 60_000);
});
