// The traffic every HTTP/1.1 gateway scenario carries (dense-traffic.ts), as the scenarios build it.

import { describe, expect, it } from 'vitest';
import { findProfile } from '../profiles/index.ts';
import { catalog, findScenario } from './index.ts';
import { referenceProfile } from '../profiles/reference.ts';
import { optionsFor } from '../runner/run-matrix.ts';

const nginx = findProfile('nginx')!;
const build = (id: string, set: Record<string, number> = {}) => {
  const def = findScenario(id)!;
  return def.build(nginx, { ...def.defaults, ...set });
};

describe('gateway traffic', () => {
  it("every gateway scenario's HTTP loads count only a 2xx as answered, and no backend scenario's do", () => {
    // The reference backend behind a gateway answers each request with a 2xx: a 404 is the gateway's own.
    const httpKinds = new Set(['http', 'single', 'lagging-node', 'http2']);
    let gatewayLoads = 0;
    for (const def of catalog) {
      let built;
      try {
        built = def.build(def.role === 'gateway' ? nginx : referenceProfile, def.defaults);
      } catch {
        continue;
      }
      for (const load of built.loads.filter((l) => httpKinds.has(l.spec.kind))) {
        expect((load.spec as { okStatus?: string }).okStatus, `${def.id} ${load.id}`).toBe(def.role === 'gateway' ? '2xx' : undefined);
        if (def.role === 'gateway') gatewayLoads++;
      }
    }
    expect(gatewayLoads).toBeGreaterThan(20);
  });

  it('gateway-delete-http: hey-like clients, keep-alive connections with a think time, new connections, long and overlong requests', () => {
    const s = build('gateway-delete-http');
    expect(s.loads.map((l) => l.id)).toEqual(['http', 'keepalive', 'fresh', ...Array.from({ length: 8 }, (_, i) => `long-${i + 1}`), 'lagging-node', 'overlong-1', 'overlong-2']);
    // A lagging node sends to the deleted pod until the last node has deprogrammed it: delay 200 ms plus the 1 s spread.
    expect(s.loads.find((l) => l.id === 'lagging-node')!.spec).toEqual({ kind: 'lagging-node', service: 'gateway', workload: 'gateway', path: '/', rate: 20, windowMs: 1200, timeoutMs: 2000, okStatus: '2xx' });
    const keepalive = s.loads.find((l) => l.id === 'keepalive')!.spec;
    expect(keepalive).toMatchObject({ kind: 'http', keepAlive: true, mode: 'closed', connections: 60, thinkMs: 200, heldRatePerWorker: 1000 / 300 });
    expect(s.loads.find((l) => l.id === 'fresh')!.spec).toMatchObject({ keepAlive: false, connections: 4 });
    // nginx declares a minimum drain of 3 s (programming delay, the nodes' spread, keepalive_time and a margin) and a drain timeout of 9 s from the delete: long requests end halfway, at 6 s, overlong ones past its grace period (11 s).
    const long = s.loads.find((l) => l.id === 'long-1')!;
    expect(long).toMatchObject({ startMs: 500, spec: { kind: 'single', path: '/delay?ms=6500' } });
    expect(s.loads.find((l) => l.id === 'overlong-1')!.spec).toMatchObject({ path: '/delay?ms=12500' });
    expect(s.expectations.slice(0, 2)).toEqual([
      { assert: 'noFailedRequests', exceptLoads: ['overlong-1', 'overlong-2'] },
      { assert: 'keepAliveClosedPolitely', idleTimeoutMs: 1000 },
    ]);
  });

  it('gateway-delete-http: 12 overlong requests where the Service balancer picks at random, so that all missing the deleted pod is 1 run in thousands', () => {
    const def = findScenario('gateway-delete-http')!;
    const options = optionsFor(def, {}, false, { randomBalancer: true });
    expect(options).toMatchObject({ overlongRequests: 12, gateways: 2 });
    expect(0.5 ** Number(options['overlongRequests'])).toBeLessThan(1 / 1000);
    const s = def.build(nginx, options);
    expect(s.loads.filter((l) => l.id.startsWith('overlong-'))).toHaveLength(12);
    // Round robin (the local provider) deals 2 over 2 pods: one reaches each.
    expect(optionsFor(def, {}, false)).toMatchObject({ overlongRequests: 2 });
    // The scenarios without overlong requests get none there either.
    expect(optionsFor(findScenario('gateway-delete-http-no-keepalive')!, {}, false, { randomBalancer: true })).toMatchObject({ overlongRequests: 0 });
  });

  it('gateway-rollout-http: a batch of long requests for each old gateway pod, sent as its replacement turns ready (the controller stops an old pod then), ending halfway into its drain', () => {
    const s = build('gateway-rollout-http');
    expect(s.loads.slice(3).map((l) => l.id)).toEqual([...[1, 2].flatMap((k) => Array.from({ length: 8 }, (_, i) => `long-${k}-${i + 1}`)), 'lagging-node']);
    // nginx: minimum drain 3 s, drain timeout 9 s, from the delete; the delete follows the trigger.
    expect(s.loads.find((l) => l.id === 'long-1-1')).toMatchObject({
      startOn: { newPodReady: { workload: 'gateway', afterStep: 'rollout', nth: 1 } },
      spec: { kind: 'single', path: '/delay?ms=6000' },
    });
  });

  it('every gateway drain scenario holds the stop signal to the last node of the gateway Service, delay plus spread', () => {
    for (const [id, delay] of [['gateway-delete-http', 200], ['gateway-slow-lb', 5000], ['gateway-rollout-http', 200], ['gateway-scale-down', 200]] as const) {
      const s = build(id);
      expect(s.expectations.find((e) => e.assert === 'preStopOutlastsDeprogramming'), id).toMatchObject({ programmingDelayMs: delay, spreadMs: 1000 });
      expect(s.topology.services.find((svc) => svc.name === 'gateway'), id).toMatchObject({ programmingDelayMs: delay, programmingSpreadMs: 1000 });
    }
  });

  it('a keep-alive timeout is longer than any idle gap the load makes itself', () => {
    expect(build('gateway-scale-down', { thinkMs: 2000 }).expectations).toContainEqual({ assert: 'keepAliveClosedPolitely', idleTimeoutMs: 4000 });
    expect(build('gateway-rollout-http', { ratePerClient: 0.5 }).expectations).toContainEqual({ assert: 'keepAliveClosedPolitely', idleTimeoutMs: 4000 });
  });

  it('the scenarios without keep-alive get the long requests, and no keep-alive judgement', () => {
    const s = build('gateway-delete-http-no-keepalive');
    expect(s.loads.map((l) => l.id)).toEqual(['http', ...Array.from({ length: 8 }, (_, i) => `long-${i + 1}`), 'lagging-node']);
    expect(s.expectations.map((e) => e.assert)).not.toContain('keepAliveClosedPolitely');
  });

  it('gateway-backend-rollout-http: POSTing keep-alive connections and long requests held to the backends\' drain; backends close idle connections 30 ms after SIGTERM', () => {
    const s = build('gateway-backend-rollout-http');
    expect(s.loads.map((l) => l.id)).toEqual(['keepalive', ...[1, 2, 3].flatMap((k) => Array.from({ length: 8 }, (_, i) => `long-${k}-${i + 1}`))]);
    expect(s.loads[0]!.spec).toMatchObject({ kind: 'http', keepAlive: true, connections: 120, thinkMs: 200, postBytes: 64 });
    // The backends' preStop is 2 s and their grace 8 s: halfway is 5 s after the delete, which follows the trigger.
    expect(s.loads.find((l) => l.id === 'long-2-1')).toMatchObject({
      startOn: { newPodReady: { workload: 'backend', afterStep: 'rollout', nth: 2 } },
      spec: { path: '/delay?ms=5000' },
    });
    const backend = s.topology.workloads.find((w) => w.name === 'backend')!;
    expect(backend).toMatchObject({ env: { DRAIN_IDLE_CLOSE_MS: '30' }, terminationGracePeriodSeconds: 8, strategy: { maxSurge: 1, maxUnavailable: 0 } });
    expect(s.steps).toEqual([{ id: 'rollout', when: { atMs: 1000 }, action: { kind: 'rollout-restart', workload: 'backend' } }]);
    expect(s.expectations.map((e) => e.assert)).toEqual(['noFailedRequests', 'keepAliveClosedPolitely', 'noIdleUpstreamAtDrain', 'notKilled', 'rolloutCompletesWithin']);
    expect(build('gateway-backend-rollout-http', { postBytes: 0 }).loads[0]!.spec).not.toHaveProperty('postBytes');
  });
});
