import { describe, expect, it } from 'vitest';
import { findProfile, profiles } from '../profiles/index.ts';
import { expectedVerdict, toleration, tolerationWhy } from './expected.ts';
import { MESH_AWAITING_SCENARIO, MESH_TOLERATES } from '../profiles/meshes.ts';
import { gatewayClassProfile } from './gateway-class-profile.ts';
import { catalog, findScenario } from './index.ts';

function expected(scenarioId: string, profileName: string) {
  const scenario = findScenario(scenarioId);
  const profile = findProfile(profileName);
  if (!scenario || !profile) throw new Error(`no ${scenario ? 'profile' : 'scenario'} ${scenario ? profileName : scenarioId}`);
  return expectedVerdict(scenario, profile);
}

describe('expectedVerdict', () => {
  it('expects drain-correct profiles to pass, broken ones to fail, and the control to fail on all', () => {
    expect(expected('backend-delete-http', 'reference')).toBe('pass');
    expect(expected('gateway-delete-http', 'nginx')).toBe('pass');
    expect(expected('gateway-delete-http', 'nginx-naive')).toBe('fail');
    expect(expected('backend-delete-http', 'mutant-exit-on-sigterm')).toBe('fail');
    expect(expected('force-delete', 'reference')).toBe('fail');
  });

  it('expects a pass of a broken profile only where the scenario says why it cannot catch it', () => {
    expect(expected('backend-idle-exit', 'mutant-exit-on-sigterm')).toBe('pass');
    expect(expected('backend-idle-exit', 'mutant-hang-until-killed')).toBe('fail');
    expect(expected('backend-delete-http', 'mutant-refuse-after-sigterm')).toBe('pass');
    // The scenario built to catch it tolerates nothing.
    expect(expected('backend-sigterm-keeps-accepting', 'mutant-refuse-after-sigterm')).toBe('fail');
  });

  it('expects nothing of a broken profile where the run\'s options break the reason it passes', () => {
    const mutant = findProfile('mutant-refuse-after-sigterm')!;
    for (const id of ['backend-delete-http', 'backend-rollout-http', 'backend-delete-websocket', 'node-drain-http']) {
      const s = findScenario(id)!;
      // The preStop outlasts the last node's deprogramming (delay, 1 s spread, margin): the mutant meets no new connection after SIGTERM.
      expect(expectedVerdict(s, mutant, { ...s.defaults, preStopSeconds: 2, programmingDelayMs: 200 }), id).toBe('pass');
      // No preStop, or one the delay and spread outlast: new connections may meet its closed listener.
      expect(expectedVerdict(s, mutant, { ...s.defaults, preStopSeconds: 0 }), id).toBeUndefined();
      expect(expectedVerdict(s, mutant, { ...s.defaults, preStopSeconds: 1 }), id).toBeUndefined();
      expect(expectedVerdict(s, mutant, { ...s.defaults, preStopSeconds: 2, programmingDelayMs: 1000 }), id).toBeUndefined();
      expect(toleration(s, mutant.name, { ...s.defaults, preStopSeconds: 0 }), id).toBeUndefined();
      // What it expects of the rest does not move with the options.
      expect(expectedVerdict(s, findProfile('mutant-exit-on-sigterm')!, { ...s.defaults, preStopSeconds: 0 }), id).toBe('fail');
    }
  });

  it('names only broken profiles in tolerates, each with a reason, and every broken profile is caught somewhere', () => {
    const broken = profiles.filter((p) => p.kind === 'mutant' || p.kind === 'naive');
    for (const s of catalog) {
      for (const [name, declared] of Object.entries(s.tolerates ?? {})) {
        expect(broken.map((p) => p.name), `${s.id} tolerates ${name}`).toContain(name);
        expect(tolerationWhy(declared).length, `${s.id}: why it tolerates ${name}`).toBeGreaterThan(20);
        // A toleration that holds only for some option values holds for the scenario's defaults: the catalog as `npm test` runs it.
        expect(toleration(s, name), `${s.id} tolerates ${name} with its defaults`).toBeDefined();
      }
    }
    // A mutant every scenario tolerated would be a broken system the catalog cannot see; the mesh
    // twins that wait for their scenario are named with it, and must be caught nowhere yet.
    for (const p of broken) {
      const catching = catalog.filter((s) => !s.control && expectedVerdict(s, p) === 'fail');
      if (p.name in MESH_AWAITING_SCENARIO) expect(catching.map((s) => s.id), `${p.name}: ${MESH_AWAITING_SCENARIO[p.name]}`).toEqual([]);
      else expect(catching.length, `scenarios expected to catch ${p.name}`).toBeGreaterThan(0);
    }
  });

  it("the mesh twins: linkerd-naive is caught where a new request meets its proxy's refusal, passes where every connection predates the delete", () => {
    const caught = (name: string) => catalog.filter((s) => !s.control && s.role === 'backend' && expected(s.id, name) === 'fail').map((s) => s.id).sort();
    expect(caught('linkerd-naive')).toEqual(['backend-delete-grpc', 'backend-delete-http', 'backend-rollout-grpc', 'backend-rollout-http', 'backend-sigterm-keeps-accepting', 'node-drain-grpc', 'node-drain-http']);
    expect(toleration(findScenario('backend-long-request')!, 'linkerd-naive')).toMatch(/lets existing requests complete/);
    // Reconnects past deprogramming need the backend's preStop: without it nothing is expected of the
    // twin; a scenario with no new connection at all tolerates it whatever the preStop.
    const linkerdNaive = findProfile('linkerd-naive')!;
    const websocket = findScenario('backend-delete-websocket')!;
    expect(expectedVerdict(websocket, linkerdNaive)).toBe('pass');
    expect(expectedVerdict(websocket, linkerdNaive, { preStopSeconds: 0 })).toBeUndefined();
    expect(expectedVerdict(findScenario('backend-idle-exit')!, linkerdNaive, { preStopSeconds: 0 })).toBe('pass');
    expect(caught('istio-ambient-naive')).toEqual([]);
    expect(toleration(findScenario('backend-delete-http')!, 'istio-ambient-naive')).toMatch(/never ztunnel/);
    // A tolerated mesh twin names a scenario that exists.
    for (const [name, scenarios] of Object.entries(MESH_TOLERATES)) {
      for (const id of Object.keys(scenarios)) {
        if (id === '*') continue;
        expect(findScenario(id), `${name} tolerated by ${id}`).toBeDefined();
        expect(toleration(findScenario(id)!, name), `${id} tolerates ${name} with its defaults`).toBeDefined();
      }
    }
  });

  it("expects a real system to fail the scenario that reproduces its documented defect, and only that one", () => {
    const stunner018 = findProfile('stunner-018')!;
    expect(expectedVerdict(findScenario('backend-scale-to-zero-turn')!, stunner018)).toBe('fail');
    expect(expectedVerdict(findScenario('gateway-delete-turn')!, stunner018)).toBe('pass');
    // The same release routed to a StaticService keeps the terminating backend: expected to pass.
    expect(expectedVerdict(findScenario('backend-scale-to-zero-turn')!, findProfile('stunner-018-static')!)).toBe('pass');
    for (const s of catalog) for (const [name, why] of Object.entries(s.knownFailures ?? {})) {
      expect(findProfile(name)?.kind, `${s.id} fails ${name}`).toBe('system');
      expect(why, `${s.id} fails ${name}`).not.toBe('');
    }
  });

  it('expects nothing of an installed GatewayClass: it is what the run finds out', () => {
    expect(expectedVerdict(findScenario('gateway-delete-http')!, gatewayClassProfile('eg'))).toBeUndefined();
  });
});
