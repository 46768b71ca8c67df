// Each kind of skip once, with the words the user sees, and a pair that runs: the one decision of
// whether a scenario x profile pair runs (eligibility.ts).

import { afterEach, describe, expect, it, vi } from 'vitest';

import { ProfileCannotPlay, type Profile } from '../profiles/profile.ts';
import { referenceProfile } from '../profiles/reference.ts';
import { meshProfiles } from '../profiles/meshes.ts';
import { profiles } from '../profiles/index.ts';
import { LOCAL_CAPABILITIES } from '../providers/local/local-provider.ts';
import type { ProviderCapabilities } from '../providers/provider.ts';
import { catalog, findScenario } from '../scenarios/index.ts';
import type { ScenarioDefinition } from '../scenarios/definition.ts';
import { gatewayClassProfile } from '../scenarios/gateway-class-profile.ts';
import { eligibility, skippedAfterDeploy, type EligibilityRequest } from './eligibility.ts';

const scenario = (id: string): ScenarioDefinition => {
  const def = findScenario(id);
  if (!def) throw new Error(`catalog changed: no ${id}`);
  return def;
};
const LOCAL: EligibilityRequest['session'] = { name: 'local', capabilities: LOCAL_CAPABILITIES };
const KIND_CAPABILITIES: ProviderCapabilities = { multiNode: true, udp: true, nodeDrain: true, containerStopSignals: true, meshes: true };
const on = (session: EligibilityRequest['session'], def: ScenarioDefinition, profile: Profile = referenceProfile, extra: Partial<EligibilityRequest> = {}) =>
  eligibility(def, profile, { session, options: def.defaults, ...extra });
const reason = (decided: ReturnType<typeof eligibility>) => (decided.runs ? 'runs' : decided.reason);

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('eligibility', () => {
  it('runs a pair nothing refuses, with the scenario built for it', () => {
    const decided = on(LOCAL, scenario('backend-idle-exit'));
    expect(decided.runs && decided.scenario.id).toBe('backend-idle-exit');
  });

  it("skips a profile whose binary is not on PATH, with its install command, unless the session does the binary's work", () => {
    const needsNginx: Profile = { ...referenceProfile, name: 'needs-nginx', requires: [{ binary: 'zerodrop-no-such-binary', install: 'apt-get install it' }] };
    expect(reason(on(LOCAL, scenario('backend-idle-exit'), needsNginx))).toBe('zerodrop-no-such-binary not found on PATH (install: apt-get install it)');
    expect(reason(on({ ...LOCAL, fulfils: () => true }, scenario('backend-idle-exit'), needsNginx))).toBe('runs');
  });

  it('skips when the load driver is not on PATH', () => {
    vi.stubEnv('PATH', '');
    expect(reason(on(LOCAL, scenario('backend-idle-exit'), referenceProfile, { driver: 'hey' }))).toMatch(/^--driver hey: hey not found on PATH \(install: /);
  });

  it('skips a profile that cannot play the role (its build throws ProfileCannotPlay)', () => {
    const backendOnly: Profile = { name: 'backend-only', kind: 'system', description: '', requires: [], ...(referenceProfile.backend ? { backend: referenceProfile.backend } : {}) };
    expect(reason(on(LOCAL, scenario('gateway-delete-http'), backendOnly))).toBe('profile backend-only provides no gateway');
  });

  it("skips a scenario whose features the provider does not claim: node-drain, reload, udp", () => {
    const cluster = { name: 'cluster' as const, capabilities: { ...KIND_CAPABILITIES, nodeDrain: false } };
    expect(reason(on(cluster, scenario('node-drain-http')))).toBe('provider cluster may not cordon and drain nodes here (single node, or a cluster zerodrop did not create)');
    expect(reason(on({ name: 'kind', capabilities: KIND_CAPABILITIES }, scenario('node-drain-http')))).toBe('runs');
    const haproxy: Profile = { ...referenceProfile, name: 'reloading', gateway: (r) => ({ ...referenceProfile.gateway!(r), reload: { signal: 'SIGHUP' } }) };
    expect(reason(on({ name: 'kind', capabilities: KIND_CAPABILITIES }, scenario('gateway-reload-http'), haproxy))).toBe(
      "provider kind cannot reload a pod's configuration in place (the reload scenarios run on the local provider)",
    );
    expect(reason(on({ name: 'k3s', capabilities: { ...KIND_CAPABILITIES, udp: false } }, scenario('backend-scale-to-zero-udp')))).toBe(
      'provider k3s does not carry UDP to its Services (its published ports are TCP only)',
    );
  });

  it("runs the route move where the provider can change a route (a class's HTTPRoute, a local reload), and says how to get one where it cannot", () => {
    const classProfile = gatewayClassProfile('traefik');
    const kind = { name: 'kind' as const, capabilities: KIND_CAPABILITIES };
    expect(reason(on(kind, scenario('gateway-route-swap-http'), classProfile))).toBe(
      "provider kind cannot move a gateway's route under load: on a cluster the route is a GatewayClass's HTTPRoute (run with --gateway-class), on the local provider a reload of the gateway's configuration",
    );
    expect(reason(on({ ...kind, capabilities: { ...KIND_CAPABILITIES, routeChanges: 'gateway-api' } }, scenario('gateway-route-swap-http'), classProfile))).toBe('runs');
    const haproxy: Profile = { ...referenceProfile, name: 'reloading', gateway: (r) => ({ ...referenceProfile.gateway!(r), reload: { signal: 'SIGHUP' } }) };
    expect(reason(on(LOCAL, scenario('gateway-route-swap-http'), haproxy))).toBe('runs');
    // Deleting and creating the route again is a Gateway API operation: locally there is no route object.
    const recreate = { options: { ...scenario('gateway-route-swap-http').defaults, routeRecreate: 1 } };
    expect(reason(on(LOCAL, scenario('gateway-route-swap-http'), haproxy, recreate))).toMatch(/^the route of gateway is deleted and created again, a Gateway API operation: provider local moves a route by reloading/);
    expect(reason(on({ ...kind, capabilities: { ...KIND_CAPABILITIES, routeChanges: 'gateway-api' } }, scenario('gateway-route-swap-http'), classProfile, recreate))).toBe('runs');
  });

  it('skips what the provider cannot carry out of the built scenario (providers/support.ts)', () => {
    const nginxNaive = profiles.find((p) => p.name === 'nginx-naive');
    if (!nginxNaive) throw new Error('catalog changed: no nginx-naive');
    expect(reason(on({ name: 'kind', capabilities: { ...KIND_CAPABILITIES, containerStopSignals: false } }, scenario('gateway-delete-http'), nginxNaive))).toMatch(
      /^the gateway workload must stop on SIGTERM, not on its image's own signal, and provider kind cannot say so here/,
    );
    expect(reason(on({ name: 'kind', capabilities: KIND_CAPABILITIES }, scenario('gateway-delete-http'), nginxNaive))).toBe('runs');
    // The gRPC app's npm packages reach a cluster in its bundle (providers/kube/app-bundle.ts).
    expect(reason(on({ name: 'kind', capabilities: KIND_CAPABILITIES }, scenario('backend-delete-grpc')))).toBe('runs');
  });

  it('skips a mesh profile off a cluster', () => {
    const helmDone = { ...LOCAL, fulfils: () => true };
    expect(reason(on(helmDone, scenario('backend-delete-http'), meshProfiles[0]))).toMatch(/enrols the run's namespace in a mesh: it runs only on a cluster provider/);
  });

  it("skips what the session refuses, in the session's words", () => {
    expect(reason(on({ ...LOCAL, unsupported: () => 'not on this session' }, scenario('backend-idle-exit')))).toBe('not on this session');
  });

  it('lets any other error of a build through: a bug, not a skip', () => {
    const broken = { ...scenario('backend-idle-exit'), build: () => { throw new TypeError('bug'); } };
    expect(() => on(LOCAL, broken)).toThrow(TypeError);
  });

  it('after deploy (the one exception): a deploy that throws ProfileCannotPlay, or a provider that cannot run what it deployed', () => {
    const decided = on(LOCAL, scenario('backend-idle-exit'));
    if (!decided.runs) throw new Error(decided.reason);
    const built = decided.scenario;
    expect(skippedAfterDeploy({}, built, new ProfileCannotPlay('GatewayClass eg does not list UDPRoute'))).toBe('GatewayClass eg does not list UDPRoute');
    expect(skippedAfterDeploy({}, built, new Error('timeout'))).toBeUndefined();
    expect(skippedAfterDeploy({ cannotRun: () => 'the controller owns its replicas' }, built)).toBe('the controller owns its replicas');
    expect(skippedAfterDeploy({ cannotRun: () => undefined }, built)).toBeUndefined();
  });

  it("every catalog scenario lists the features its steps and loads need, so that the features decide", () => {
    for (const def of catalog) {
      const built = profiles.flatMap((p) => {
        try {
          return [def.build(p, def.defaults)];
        } catch {
          return [];
        }
      })[0];
      if (!built) throw new Error(`no profile builds ${def.id}`);
      const needs = [
        ...(built.steps.some((s) => s.action.kind === 'drain-node') ? ['node-drain'] : []),
        ...(built.steps.some((s) => s.action.kind === 'reload-pod') ? ['reload'] : []),
        ...(built.steps.some((s) => s.action.kind === 'move-route') ? ['route-change'] : []),
        ...(built.loads.some((l) => l.spec.kind === 'udp' || l.spec.kind === 'turn') ? ['udp'] : []),
      ];
      for (const feature of needs) expect(def.features, def.id).toContain(feature);
    }
  });
});
