import { describe, expect, it } from 'vitest';
import type { Expectation } from '../model/scenario.ts';
import { drainScenario, evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';
import { CUT_AT_EXIT_MS } from './drain-timing.ts';

const step = { step: 'delete' };
const bounds = (o: Partial<Extract<Expectation, { assert: 'drainTiming' }>> = {}): Expectation => ({
  assert: 'drainTiming',
  pod: step,
  minDrainMs: 500,
  drainTimeoutMs: 5000,
  idleExitMs: 300,
  ...o,
});

describe('drainTiming', () => {
  it('passes a drain that waits out its minimum and exits once idle', () => {
    // preStop 1 s, exit 20 ms after SIGTERM; its last connection closed at 1020 (traffic: 20 ms requests).
    const r = evaluateOne(bounds({ minDrainMs: 1000 }), drainScenario('correct').build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toMatch(/^backend-2 exited 1\.020 s after delete \(at t=2\.020 s\); 0 connections open at SIGTERM, 0\.020 s after it went idle/);
    expect(r.message).toContain('within min drain 1.000 s, drain timeout 5.000 s, exit within 0.300 s of idle');
  });

  it('fails a pod that exits before its minimum drain, saying how early', () => {
    const r = evaluateOne(bounds(), drainScenario('exit-on-sigterm').build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toMatch(/^backend-2 exited 0\.000 s after delete \(at t=1\.000 s\); \d+ connections? open at SIGTERM, 0\.500 s before its 0\.500 s minimum drain$/);
  });

  it('fails a pod that outlasts its drain timeout', () => {
    const r = evaluateOne(bounds({ drainTimeoutMs: 800 }), drainScenario('correct').build());
    expect(r).toMatchObject({ verdict: 'fail' });
    expect(r.message).toContain('0.220 s past its 0.800 s drain timeout');
  });

  it('fails a pod that lingers after its last connection closed', () => {
    // Exits 3 s after SIGTERM (SIGTERM at 2 s, after a 1 s preStop) although nothing has been routed to it since it was deprogrammed.
    const r = evaluateOne(bounds(), drainScenario('correct', { exitAfterSigtermMs: 3000 }).build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toMatch(/exited 4\.000 s after delete .*, 3\.500 s after it went idle \(the minimum drain ended at t=1\.500 s with no connection left\): 3\.200 s past the 0\.300 s bound \(the scenario's idleExitMs, --set idleExitMs=N; .* declares drain: \{ \.\.\., exits: 'at-timeout' \}/);
  });

  it('holds a pod that declares it exits at its own timeout to the drain timeout, not the idle bound', () => {
    // The same pod as above: idle at 1.5 s, exit at 4 s, as Traffic Server does when its shutdown timeout runs out.
    const lingering = drainScenario('correct', { exitAfterSigtermMs: 3000 }).build();
    const r = evaluateOne(bounds({ exits: 'at-timeout' }), lingering);
    expect(r.verdict).toBe('pass');
    expect(r.message).toContain('exits at its own timeout (declared drain.exits "at-timeout")');
    // Declared so, it must still leave by its drain timeout, and 'when-idle' is the default.
    expect(evaluateOne(bounds({ exits: 'at-timeout', drainTimeoutMs: 3500 }), lingering).verdict).toBe('fail');
    expect(evaluateOne(bounds({ exits: 'when-idle' }), lingering).verdict).toBe('fail');
  });

  it('counts idle from the last connection close when that is after the minimum', () => {
    const b = new TimelineBuilder().pod('gw-1', { workload: 'gateway', service: 'gateway' });
    b.drain('gw-1', { at: 1000, step: 'delete', workload: 'gateway', service: 'gateway', preStopMs: 600, exitAfterSigtermMs: 900 });
    b.connection({ service: 'gateway', pod: 'gw-1', open: 500, close: 2300 });
    const r = evaluateOne(bounds(), b.build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toBe(
      'gw-1 exited 1.500 s after delete (at t=2.500 s); 1 connection open at SIGTERM, 0.200 s after it went idle (its last connection closed at t=2.300 s); within min drain 0.500 s, drain timeout 5.000 s, exit within 0.300 s of idle',
    );
  });

  it('is inconclusive, not failed, when a connection the client gave up on names no pod (a cluster)', () => {
    const b = new TimelineBuilder().pod('gw-1', { workload: 'gateway', service: 'gateway' });
    b.drain('gw-1', { at: 1000, step: 'delete', workload: 'gateway', service: 'gateway', preStopMs: 600, exitAfterSigtermMs: 2400 });
    b.connection({ service: 'gateway', pod: 'gw-1', open: 500, close: 1800 });
    // Abandoned by the client under its request, before any response: whose it was is unknown.
    b.connection({ service: 'gateway', open: 1200, upstream: 'open' });
    // Answered by no pod but closed before the pod went idle: it holds nothing.
    b.connection({ service: 'gateway', open: 1100, close: 1300, upstream: 'error' });
    const r = evaluateOne(bounds(), b.build());
    expect(r.verdict).toBe('inconclusive');
    expect(r.message).toContain('but 1 connection without any response naming its pod was still open then');
  });

  it('takes a connection naming no pod, cut without a response as the pod exited, as the pod\'s own (a cluster\'s overlong requests)', () => {
    // A cluster: the exit is recorded from the pod's status, after the cut the client saw (here 80 ms).
    const b = new TimelineBuilder().pod('gw-1', { workload: 'gateway', service: 'gateway' });
    b.drain('gw-1', { at: 1000, step: 'delete', workload: 'gateway', service: 'gateway', preStopMs: 600, exitAfterSigtermMs: 2400 });
    b.connection({ service: 'gateway', pod: 'gw-1', open: 500, close: 1800 });
    b.connection({ service: 'gateway', open: 700, close: 3920, upstream: 'error' });
    b.connection({ service: 'gateway', open: 700, close: 3921, upstream: 'error' });
    const r = evaluateOne(bounds(), b.build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toBe(
      'gw-1 exited 3.000 s after delete (at t=4.000 s); 1 connection open at SIGTERM, 0.079 s after it went idle (its last connection closed at t=3.921 s, 2 connections without a response cut at its exit); within min drain 0.500 s, drain timeout 5.000 s, exit within 0.300 s of idle',
    );
    expect(r.details).toMatchObject({ pods: { 'gw-1': { cutAtExit: 2, lastConnectionClose: 3921 } } });
  });

  it('leaves the idle moment unknown when a connection naming no pod ended long before the exit, or never', () => {
    for (const close of [4000 - CUT_AT_EXIT_MS - 200, undefined]) {
      const b = new TimelineBuilder().pod('gw-1', { workload: 'gateway', service: 'gateway' });
      b.drain('gw-1', { at: 1000, step: 'delete', workload: 'gateway', service: 'gateway', preStopMs: 600, exitAfterSigtermMs: 2400 });
      b.connection({ service: 'gateway', pod: 'gw-1', open: 500, close: 1800 });
      b.connection({ service: 'gateway', open: 700, ...(close !== undefined ? { close, upstream: 'error' as const } : { upstream: 'open' as const }) });
      expect(evaluateOne(bounds(), b.build()).verdict, `close ${close}`).toBe('inconclusive');
    }
  });

  it('fails a pod killed by SIGKILL, and is inconclusive when the step never ran', () => {
    expect(evaluateOne(bounds({ drainTimeoutMs: 60_000 }), drainScenario('hang-until-killed').build())).toMatchObject({
      verdict: 'fail',
      message: expect.stringMatching(/^backend-2 was killed by SIGKILL 2\.000 s after delete \(at t=3\.000 s\)/),
    });
    expect(evaluateOne(bounds({ pod: { step: 'nope' } }), drainScenario('correct').build()).verdict).toBe('inconclusive');
  });
});
