import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../provider.ts';
import { evictionAllowed, LocalNodes, LOCAL_NODES } from './nodes.ts';

const pod = (name: string, extra: Partial<PodInfo> = {}): PodInfo => ({ name, workload: 'backend', ip: '127.0.0.1', phase: 'Running', ready: true, createdAt: 0, ...extra });

describe('modelled nodes', () => {
  it('schedules onto the first node that is not cordoned', () => {
    const nodes = new LocalNodes();
    expect([nodes.schedule('a'), nodes.schedule('b')]).toEqual([LOCAL_NODES[0], LOCAL_NODES[0]]);
    nodes.cordon(LOCAL_NODES[0]);
    expect(nodes.schedule('c')).toBe(LOCAL_NODES[1]);
    expect(nodes.podsOn(LOCAL_NODES[0], [pod('a'), pod('b'), pod('c')]).map((p) => p.name)).toEqual(['a', 'b']);
    expect(() => nodes.cordon('elsewhere')).toThrow(/node elsewhere not found/);
  });
});

describe('the Eviction API against a PodDisruptionBudget', () => {
  const two = [pod('a'), pod('b')];
  it('minAvailable: allowed while more healthy pods than the minimum remain, refused (429) at the minimum', () => {
    expect(evictionAllowed(pod('a'), two, 2, { workload: 'backend', minAvailable: 1 })).toBe(true);
    const oneLeft = [pod('a', { phase: 'Terminating', ready: false }), pod('b'), pod('c', { ready: false })];
    expect(evictionAllowed(pod('b'), oneLeft, 2, { workload: 'backend', minAvailable: 1 })).toBe(false);
    // The replacement became ready: the next eviction goes through.
    expect(evictionAllowed(pod('b'), [oneLeft[0] as PodInfo, pod('b'), pod('c')], 2, { workload: 'backend', minAvailable: 1 })).toBe(true);
  });

  it('maxUnavailable counts from the desired replicas; no budget or an unready pod never blocks', () => {
    expect(evictionAllowed(pod('a'), two, 2, { workload: 'backend', maxUnavailable: 1 })).toBe(true);
    expect(evictionAllowed(pod('b'), [pod('a', { phase: 'Terminating' }), pod('b')], 2, { workload: 'backend', maxUnavailable: 1 })).toBe(false);
    expect(evictionAllowed(pod('a'), [pod('a')], 1, undefined)).toBe(true);
    expect(evictionAllowed(pod('a', { ready: false }), [pod('a', { ready: false })], 1, { workload: 'backend', minAvailable: 1 })).toBe(true);
  });
});
