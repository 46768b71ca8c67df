// A route moved under load on a real Gateway API implementation (gateway-route-swap-http with
// --gateway-class traefik): the HTTPRoute's backendRefs patched in place moves it with no request
// failed; the same move made by deleting the route and creating it again (routeRecreate=1, a
// pipeline that replaces objects) leaves Traefik without a route for a while, and its own 404s
// are requests dropped in front of every backend (noFailedRequests) and a route that did not hold
// (routeMoved).

import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TIMEOUTS } from '../../src/providers/cluster-system.ts';
import { isBuilt } from '../../src/providers/netns/go-module-build.ts';
import { traefikModule } from '../../src/providers/netns/traefik-binary.ts';
import { gatewayClassProfile } from '../../src/scenarios/gateway-class-profile.ts';
import { describeResult, expectFailedBy, expectPass, repeatUnmeasured } from '../helpers/run-case.ts';
import { skipReason, title, useNetnsCluster } from './context.ts';

const traefikUnbuilt = (await isBuilt(traefikModule())) ? undefined : 'Traefik is not built here (npm run traefik:build)';

describe.skipIf(skipReason !== '' || traefikUnbuilt !== undefined)(title(`a route moved under load, GatewayClass traefik on a netns cluster${traefikUnbuilt ? ` (${traefikUnbuilt})` : ''}`), () => {
  const cluster = useNetnsCluster(2);

  const run = (overrides: Record<string, number>) =>
    cluster.runPair('gateway-route-swap-http', gatewayClassProfile('traefik'), { overrides, system: { gatewayClass: { name: 'traefik', timeouts: CONFORMANCE_TIMEOUTS } } });

  it('the HTTPRoute patched: no request fails, the long ones complete, the route moves', async () => {
    const r = await repeatUnmeasured(() => run({}));
    expectPass(r);
    expect(r.assertions.find((a) => a.name === 'completesInFlight')?.message, describeResult(r)).toMatch(/in flight at a route change/);
  }, 10 * 60_000);

  it('the HTTPRoute deleted and created again fails by noFailedRequests and routeMoved: the gateway answers 404 itself while it has no route', async () => {
    const r = await repeatUnmeasured(() => run({ routeRecreate: 1 }));
    expectFailedBy(r, 'noFailedRequests', 'routeMoved');
    expect(r.assertions.find((a) => a.name === 'noFailedRequests')?.message, describeResult(r)).toMatch(/^\d+ of \d+ requests failed \((\d+ status 404)\)/);
  }, 10 * 60_000);
});
