// The dense traffic of the backend scenarios (dense-traffic.ts), as the scenarios build it.

import { describe, expect, it } from 'vitest';
import { referenceProfile } from '../profiles/reference.ts';
import { findScenario } from './index.ts';

const build = (id: string, set: Record<string, number> = {}) => {
  const def = findScenario(id)!;
  return def.build(referenceProfile, { ...def.defaults, ...set });
};
const longs = Array.from({ length: 8 }, (_, i) => `long-${i + 1}`);

describe('backend traffic', () => {
  it('backend-delete-http and backend-rollout-http: the busy load, keep-alive connections with a think time, new connections, long requests', () => {
    for (const id of ['backend-delete-http', 'backend-rollout-http']) {
      const s = build(id);
      expect(s.loads.slice(0, 3).map((l) => l.id)).toEqual(['http', 'keepalive', 'fresh']);
      expect(s.loads.find((l) => l.id === 'keepalive')!.spec).toMatchObject({ service: 'backend', keepAlive: true, connections: 60, thinkMs: 200 });
      expect(s.loads.find((l) => l.id === 'fresh')!.spec).toMatchObject({ service: 'backend', keepAlive: false, connections: 4, ratePerWorker: 10 });
      expect(s.expectations.slice(0, 2)).toEqual([{ assert: 'noFailedRequests' }, { assert: 'keepAliveClosedPolitely', idleTimeoutMs: 1000 }]);
    }
    // preStop 2 s, grace 6 s less 2 s: halfway from 2 s to 4 s after the stop, plus the 0.5 s lead.
    const deleted = build('backend-delete-http');
    expect(deleted.loads.slice(3).map((l) => l.id)).toEqual([...longs, 'lagging-node']);
    expect(deleted.loads.find((l) => l.id === 'lagging-node')!.spec).toMatchObject({ kind: 'lagging-node', service: 'backend', workload: 'backend', windowMs: 1200 });
    expect(deleted.loads.find((l) => l.id === 'long-1')).toMatchObject({ startMs: 500, spec: { kind: 'single', path: '/delay?ms=3500' } });
  });

  it('backend-rollout-http: a batch of long requests for each of the three old pods, sent as its replacement turns ready, held halfway into its drain', () => {
    const s = build('backend-rollout-http');
    const batches = [1, 2, 3].map((k) => Array.from({ length: 8 }, (_, i) => `long-${k}-${i + 1}`));
    expect(s.loads.slice(3).map((l) => l.id)).toEqual([...batches.flat(), 'lagging-node']);
    expect(s.loads.find((l) => l.id === 'long-3-8')).toMatchObject({
      startOn: { newPodReady: { workload: 'backend', afterStep: 'restart', nth: 3 } },
      spec: { kind: 'single', path: '/delay?ms=3000' },
    });
  });

  it('backend-sigterm-keeps-accepting: beside its open loop of new connections; no preStop, so the long requests end halfway to the grace period less 2 s', () => {
    const s = build('backend-sigterm-keeps-accepting');
    expect(s.loads.map((l) => l.id)).toEqual(['http', 'keepalive', 'fresh', ...longs, 'lagging-node']);
    expect(s.loads.find((l) => l.id === 'long-1')!.spec).toMatchObject({ path: '/delay?ms=2500' });
    // Its balancer lags 2 s, and each node up to 1 s more.
    expect(s.loads.find((l) => l.id === 'lagging-node')!.spec).toMatchObject({ windowMs: 3000 });
    expect(s.expectations.map((e) => e.assert)).toContain('keepAliveClosedPolitely');
  });

  it('can be turned off: no keep-alive connections, no keep-alive judgement beside the busy load', () => {
    const s = build('backend-sigterm-keeps-accepting', { keepAliveConnections: 0, freshClients: 0, longRequests: 0 });
    expect(s.loads.map((l) => l.id)).toEqual(['http', 'lagging-node']);
    expect(s.expectations.map((e) => e.assert)).not.toContain('keepAliveClosedPolitely');
  });
});
