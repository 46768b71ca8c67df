import { describe, expect, it } from 'vitest';
import { drainScenario, TimelineBuilder } from '../../test-support/assert.ts';
import { formatSeconds, phaseAt, podLifecycle, programmedAt } from './phase.ts';

describe('formatSeconds', () => {
  it('gives seconds with three decimals', () => {
    expect(formatSeconds(4812.4)).toBe('4.812');
    expect(formatSeconds(0)).toBe('0.000');
    expect(formatSeconds(30_000)).toBe('30.000');
  });
});

describe('podLifecycle', () => {
  it('collects the key times of a correct drain', () => {
    const tl = drainScenario('correct').build();
    expect(podLifecycle(tl, 'backend-2')).toEqual({
      pod: 'backend-2',
      workload: 'backend',
      created: 0,
      started: 10,
      ready: 100,
      programmed: 101,
      deleteIssued: 1000,
      gracePeriodSeconds: 30,
      deprogrammed: 1050,
      preStopStart: 1000,
      preStopEnd: 2000,
      sigterm: 2000,
      sigtermSource: 'harness',
      exit: 2020,
      exitCode: 0,
      removed: 2021,
    });
  });

  it('records SIGKILL from the sigkill event', () => {
    const lc = podLifecycle(drainScenario('hang-until-killed').build(), 'backend-2');
    expect(lc.killed).toBe(3000);
    expect(lc.exit).toBe(3000);
    expect(lc.exitSignal).toBe('SIGKILL');
    expect(lc.exitCode).toBeNull();
  });

  it('treats an exit by SIGKILL as killed even without a sigkill event', () => {
    const tl = new TimelineBuilder().pod('p').event(500, 'exit', { pod: 'p', detail: { code: null, signal: 'SIGKILL' } }).build();
    expect(podLifecycle(tl, 'p').killed).toBe(500);
  });

  it('takes an exit by SIGTERM as its stop signal when no sigterm event was recorded (a cluster that does not see the signal)', () => {
    const tl = new TimelineBuilder().pod('p').event(400, 'delete-issued', { pod: 'p' }).event(500, 'exit', { pod: 'p', detail: { code: 143, signal: 'SIGTERM' } }).build();
    expect(podLifecycle(tl, 'p').sigterm).toBe(500);
    const logged = new TimelineBuilder().pod('q').event(420, 'sigterm', { pod: 'q' }).event(500, 'exit', { pod: 'q', detail: { code: 143, signal: 'SIGTERM' } }).build();
    expect(podLifecycle(logged, 'q').sigterm).toBe(420);
    const clean = new TimelineBuilder().pod('r').event(500, 'exit', { pod: 'r', detail: { code: 0 } }).build();
    expect(podLifecycle(clean, 'r').sigterm).toBeUndefined();
    expect([podLifecycle(tl, 'p').sigtermSource, podLifecycle(logged, 'q').sigtermSource, podLifecycle(clean, 'r').sigtermSource]).toEqual(['exit', 'harness', undefined]);
  });

  it('says where the stop signal comes from: a logged one, or none seen on a cluster', () => {
    const logged = new TimelineBuilder().pod('p').event(400, 'delete-issued', { pod: 'p', detail: { observed: 'api' } }).event(420, 'sigterm', { pod: 'p', detail: { observed: 'log' } }).build();
    expect(podLifecycle(logged, 'p').sigtermSource).toBe('pod-log');
    const unseen = new TimelineBuilder().pod('q').event(400, 'delete-issued', { pod: 'q', detail: { observed: 'api' } }).event(900, 'exit', { pod: 'q', detail: { code: 0, observed: 'watch' } }).build();
    expect(podLifecycle(unseen, 'q')).toMatchObject({ sigtermSource: 'unseen' });
    expect(podLifecycle(unseen, 'q').sigterm).toBeUndefined();
    // zerodrop's node agent says when it sent the signal; the app's log line beside it only that the app saw it.
    const sent = new TimelineBuilder().pod('s').event(400, 'delete-issued', { pod: 's', detail: { observed: 'api' } }).event(410, 'sigterm', { pod: 's', detail: { observed: 'pod-log' } }).event(415, 'sigterm', { pod: 's', detail: { observed: 'node-agent' } }).build();
    expect(podLifecycle(sent, 's')).toMatchObject({ sigterm: 415, sigtermSource: 'node-agent' });
    // On the local provider, which sends the signal itself, a pod that got none has no source at all.
    const unsent = new TimelineBuilder().pod('r').event(400, 'delete-issued', { pod: 'r' }).event(900, 'exit', { pod: 'r', detail: { code: 0 } }).build();
    expect(podLifecycle(unsent, 'r').sigtermSource).toBeUndefined();
  });

  it('leaves out steps that did not happen', () => {
    const lc = podLifecycle(drainScenario('correct').build(), 'backend-1');
    expect(lc.deleteIssued).toBeUndefined();
    expect(lc.deprogrammed).toBeUndefined();
    expect(Object.keys(lc)).not.toContain('sigterm');
  });

  it('takes the final deprogram, once every Service has let the pod go', () => {
    const b = new TimelineBuilder().pod('p', { service: 'a' });
    b.event(102, 'lb-programmed', { pod: 'p', service: 'b' });
    b.event(300, 'lb-deprogrammed', { pod: 'p', service: 'a' }); // readiness flap
    b.event(400, 'lb-programmed', { pod: 'p', service: 'a' });
    b.event(1000, 'lb-deprogrammed', { pod: 'p', service: 'a' });
    b.event(1200, 'lb-deprogrammed', { pod: 'p', service: 'b' });
    const tl = b.build();
    expect(podLifecycle(tl, 'p').deprogrammed).toBe(1200);
    expect(programmedAt(tl, 'p', 1100)).toBe(true);
    expect(programmedAt(tl, 'p', 1200)).toBe(false);
  });

  it('has no deprogram while a balancer still has the pod', () => {
    const b = new TimelineBuilder().pod('p');
    b.event(300, 'lb-deprogrammed', { pod: 'p', service: 'backend' });
    b.event(400, 'lb-programmed', { pod: 'p', service: 'backend' });
    expect(podLifecycle(b.build(), 'p').deprogrammed).toBeUndefined();
  });

  it('sees events appended after a first call', () => {
    const b = new TimelineBuilder().pod('p');
    expect(podLifecycle(b.timeline, 'p').sigterm).toBeUndefined();
    b.event(900, 'sigterm', { pod: 'p' });
    expect(podLifecycle(b.timeline, 'p').sigterm).toBe(900);
  });
});

describe('phaseAt', () => {
  const correct = drainScenario('correct').build();

  it.each([
    [50, 'starting', false, 'before ready of backend-2'],
    [500, 'ready', true, 'before delete of backend-2'],
    [1010, 'terminating (preStop)', true, 'terminating (preStop) of backend-2, before load balancer deprogrammed'],
    [1500, 'terminating (preStop)', false, 'terminating (preStop) of backend-2, after load balancer deprogrammed'],
    [2010, 'after SIGTERM', false, 'after SIGTERM of backend-2, after load balancer deprogrammed'],
    [2500, 'after exit', false, 'after exit of backend-2, after load balancer deprogrammed'],
  ] as const)('at %d ms of a correct drain: %s', (t, lifecycle, programmed, label) => {
    const phase = phaseAt(correct, 'backend-2', t);
    expect(phase.lifecycle).toBe(lifecycle);
    expect(phase.label).toBe(label);
    expect(phase.programmed).toBe(programmed);
    expect(phase.pod).toBe('backend-2');
  });

  it('knows whether the balancer still had the pod', () => {
    expect(phaseAt(correct, 'backend-2', 50).programmed).toBe(false);
    expect(phaseAt(correct, 'backend-2', 1010).programmed).toBe(true);
    expect(phaseAt(correct, 'backend-2', 1500).programmed).toBe(false);
  });

  it("tells a request sent straight to the pod (a lagging node's) without the balancer, which did not route it", () => {
    expect(phaseAt(correct, 'backend-2', 2010, undefined, true).label).toBe('after SIGTERM of backend-2, sent straight to the pod (a node not yet deprogrammed)');
    expect(phaseAt(correct, 'backend-2', 1010, undefined, true).label).toBe('terminating (preStop) of backend-2, sent straight to the pod (a node not yet deprogrammed)');
    expect(phaseAt(correct, 'backend-2', 500, undefined, true).label).toBe('before delete of backend-2');
  });

  it('places a refusal after SIGTERM before the slow deprogram', () => {
    const tl = drainScenario('refuse-after-sigterm').build();
    expect(phaseAt(tl, 'backend-2', 1200).label).toBe('after SIGTERM of backend-2, before load balancer deprogrammed');
  });

  it('says after SIGKILL for a killed pod', () => {
    const tl = drainScenario('hang-until-killed').build();
    const phase = phaseAt(tl, 'backend-2', 3500);
    expect(phase.lifecycle).toBe('after SIGKILL');
    expect(phase.label).toBe('after SIGKILL of backend-2, after load balancer deprogrammed');
  });

  it('distinguishes after delete and after preStop, before SIGTERM', () => {
    const b = new TimelineBuilder().pod('a').pod('b');
    b.event(1000, 'delete-issued', { pod: 'a' }).event(1300, 'sigterm', { pod: 'a' });
    b.event(1000, 'delete-issued', { pod: 'b' }).event(1000, 'prestop-start', { pod: 'b' });
    b.event(1200, 'prestop-end', { pod: 'b' }).event(1300, 'sigterm', { pod: 'b' });
    const tl = b.build();
    expect(phaseAt(tl, 'a', 1100)).toMatchObject({ lifecycle: 'terminating', label: 'after delete of a, before load balancer deprogrammed' });
    expect(phaseAt(tl, 'b', 1250)).toMatchObject({ lifecycle: 'terminating', label: 'after preStop of b, before load balancer deprogrammed' });
  });

  it('says nothing about the balancer when it never reported on the pod', () => {
    const tl = new TimelineBuilder()
      .event(0, 'pod-created', { pod: 'x' })
      .event(100, 'pod-ready', { pod: 'x' })
      .event(1000, 'delete-issued', { pod: 'x' })
      .event(1000, 'sigterm', { pod: 'x' })
      .build();
    expect(phaseAt(tl, 'x', 1001)).toEqual({ pod: 'x', lifecycle: 'after SIGTERM', programmed: undefined, label: 'after SIGTERM of x' });
  });

  it('handles unknown pods and moments before creation', () => {
    expect(phaseAt(correct, 'ghost', 100)).toMatchObject({ lifecycle: 'unknown', label: 'ghost (no lifecycle events)' });
    const late = new TimelineBuilder().pod('late', { created: 500, ready: 600 }).build();
    expect(phaseAt(late, 'late', 100)).toMatchObject({ lifecycle: 'unknown', label: 'before creation of late' });
  });

  it('attributes a moment with no pod to the pod most recently deleted', () => {
    const b = drainScenario('correct');
    b.drain('backend-3', { at: 1500 });
    const tl = b.build();
    const phase = phaseAt(tl, undefined, 1812, 'no pod (balancer had no endpoint)');
    expect(phase.label).toBe('no pod (balancer had no endpoint); 0.312 s after delete of backend-3');
    expect(phase.pod).toBeUndefined();
    expect(phase.attributedTo).toBe('backend-3');
    expect(phase.lifecycle).toBe('after exit');
    expect(phaseAt(tl, undefined, 1400).label).toBe('no pod known; 0.400 s after delete of backend-2');
  });

  it('gives only the reason when nothing was deleted before', () => {
    const phase = phaseAt(correct, undefined, 500, 'no pod (balancer had no endpoint)');
    expect(phase).toEqual({ pod: undefined, lifecycle: 'unknown', programmed: undefined, label: 'no pod (balancer had no endpoint)' });
  });
});
