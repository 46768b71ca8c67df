import { describe, expect, it } from 'vitest';

import type { Pod } from './pod-types.ts';
import { podPhase, podStatus, type ContainerRecord } from './status.ts';
import { IpPool } from './ip-pool.ts';
import { sandboxNames } from './sandbox.ts';
import { effectiveGraceSeconds, nextBackoff, shouldRestart } from './pod-worker.ts';
import { ProbeCounter } from './prober.ts';

const pod: Pod = {
  metadata: { name: 'p', namespace: 'n', uid: 'abcdef12-3456' },
  spec: { restartPolicy: 'Always' },
  status: { conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
};
const T = '2026-01-01T00:00:05Z';
const running = (name: string, ready: boolean): ContainerRecord => ({ name, image: 'node:24', imageID: 'zerodrop://node:24', state: { running: { startedAt: T } }, ready, started: true, restartCount: 0 });
const exited = (name: string, exitCode: number): ContainerRecord => ({
  name,
  image: 'node:24',
  imageID: '',
  state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: T, finishedAt: T } },
  ready: false,
  restartCount: 0,
});
const waiting = (name: string): ContainerRecord => ({ name, image: 'node:24', imageID: '', state: { waiting: { reason: 'ContainerCreating' } }, ready: false, restartCount: 0 });

describe('podPhase', () => {
  it('follows getPhase', () => {
    expect(podPhase({ pod, init: [waiting('i')], containers: [waiting('m')], terminal: false })).toBe('Pending');
    expect(podPhase({ pod, init: [exited('i', 0)], containers: [running('m', false)], terminal: false })).toBe('Running');
    expect(podPhase({ pod, init: [], containers: [exited('m', 1)], terminal: false })).toBe('Running');
    expect(podPhase({ pod, init: [], containers: [exited('m', 0)], terminal: true })).toBe('Succeeded');
    expect(podPhase({ pod, init: [], containers: [exited('m', 0), exited('s', 137)], terminal: true })).toBe('Failed');
    const never = { ...pod, spec: { restartPolicy: 'Never' } };
    expect(podPhase({ pod: never, init: [], containers: [exited('m', 2)], terminal: false })).toBe('Failed');
    expect(podPhase({ pod: never, init: [exited('i', 1)], containers: [waiting('m')], terminal: false })).toBe('Failed');
  });
});

describe('podStatus', () => {
  it('reports conditions, keeps PodScheduled and transition times', () => {
    const s = podStatus({ pod, podIP: '198.18.129.2', hostIP: '198.18.0.11', startTime: T, sandboxReady: true, init: [], containers: [running('main', false)], terminal: false, now: T });
    const conditions = s.conditions as { type: string; status: string; lastTransitionTime: string; reason?: string }[];
    expect(conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['PodReadyToStartContainers=True', 'Initialized=True', 'Ready=False', 'ContainersReady=False', 'PodScheduled=True']);
    expect(conditions.find((c) => c.type === 'PodScheduled')?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(conditions.find((c) => c.type === 'Ready')?.reason).toBe('ContainersNotReady');
    expect(s.podIPs).toEqual([{ ip: '198.18.129.2' }]);
    expect(s.hostIPs).toEqual([{ ip: '198.18.0.11' }]);
    expect(s.phase).toBe('Running');
    const later = '2026-01-01T00:00:09Z';
    const s2 = podStatus({ pod: { ...pod, status: { conditions: conditions } }, podIP: '198.18.129.2', hostIP: 'h', startTime: T, sandboxReady: true, init: [], containers: [running('main', true)], terminal: false, now: later });
    const c2 = s2.conditions as { type: string; status: string; lastTransitionTime: string }[];
    expect(c2.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: later });
    expect(c2.find((c) => c.type === 'Initialized')?.lastTransitionTime).toBe(T);
    const done = podStatus({ pod, podIP: 'x', hostIP: 'h', startTime: T, sandboxReady: true, init: [], containers: [exited('main', 0)], terminal: true, now: later });
    expect(done.phase).toBe('Succeeded');
    expect((done.conditions as { type: string; reason?: string }[]).find((c) => c.type === 'Ready')?.reason).toBe('PodCompleted');
  });
});

describe('node-agent helpers', () => {
  it('pod addresses .2 to .254, freed ones reused last', () => {
    const pool = new IpPool('198.18.129.0/24');
    const a = pool.allocate();
    expect(a).toBe('198.18.129.2');
    pool.release(a);
    expect(pool.allocate()).toBe('198.18.129.3');
    for (let i = 0; i < 251; i++) pool.allocate();
    expect(pool.allocate()).toBe('198.18.129.2');
    expect(() => pool.allocate()).toThrow(/no pod address/);
  });

  it('names the sandbox from the pod UID for the cleanup', () => {
    expect(sandboxNames('c53ab64a', '9F1C2D3E-aaaa-bbbb')).toEqual({ netns: 'zdk-c53ab64a-p9f1c2d3e', veth: 'zp9f1c2d3e' });
  });

  it('back-off: immediate, then 10 s doubling to 5 min, reset after a long run', () => {
    let d: number | undefined;
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) seen.push((d = nextBackoff(d, 1_000)));
    expect(seen).toEqual([0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
    expect(nextBackoff(300_000, 600_000)).toBe(0);
    expect(shouldRestart(undefined, 0)).toBe(true);
    expect(shouldRestart('OnFailure', 0)).toBe(false);
    expect(shouldRestart('OnFailure', 1)).toBe(true);
    expect(shouldRestart('Never', 1)).toBe(false);
  });

  it('probe thresholds as worker.go counts them', () => {
    const r = new ProbeCounter('readiness', 2, 3);
    expect(r.result).toBe(false);
    expect(r.record(true)).toBeUndefined();
    expect(r.record(true)).toBe(true);
    expect(r.record(false)).toBeUndefined();
    expect(r.record(false)).toBeUndefined();
    expect(r.record(true)).toBeUndefined();
    expect(r.record(false)).toBeUndefined();
    expect(r.record(false)).toBeUndefined();
    expect(r.record(false)).toBe(false);
    const l = new ProbeCounter('liveness', 1, 1);
    expect(l.result).toBe(true);
    expect(l.record(false)).toBe(false);
  });
});

describe('effectiveGraceSeconds', () => {
  it('a pod that vanished before its deletion was seen keeps the grace of its last known version, as the kubelet stops a pod removed from its config', () => {
    expect(effectiveGraceSeconds({ ...pod, spec: { ...pod.spec, terminationGracePeriodSeconds: 5 } })).toBe(5);
    expect(effectiveGraceSeconds(pod)).toBe(30);
    // A delete seen before the removal: its grace, not the spec's (a force delete's 0 becomes termination.ts's 1 s).
    expect(effectiveGraceSeconds({ ...pod, metadata: { ...pod.metadata, deletionTimestamp: T, deletionGracePeriodSeconds: 3 }, spec: { ...pod.spec, terminationGracePeriodSeconds: 5 } })).toBe(3);
  });
});
