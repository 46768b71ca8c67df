import { describe, expect, it } from 'vitest';
import { drainScenario, evaluateOne } from '../../test-support/assert.ts';
import type { Timeline } from '../model/timeline.ts';

const pod = { step: 'delete' };

/** The drain as a cluster shows it: no stop signal (the app logs none), the delete and exit seen through the API. */
function onCluster(tl: Timeline): Timeline {
  tl.events = tl.events.filter((e) => e.kind !== 'sigterm' && e.kind !== 'prestop-start' && e.kind !== 'prestop-end');
  for (const e of tl.events) if ((e.kind === 'delete-issued' || e.kind === 'exit') && e.pod === 'backend-2') e.detail = { ...e.detail, observed: 'watch' };
  return tl;
}

describe('a stop signal the provider does not see (a cluster, an app that logs none)', () => {
  // drainScenario('correct'): deleted at t=1.000 s, exits at t=2.020 s.
  it('exitsPromptlyWhenIdle passes a pod that exited within the bound of its delete: from the signal it took no longer', () => {
    const r = evaluateOne({ assert: 'exitsPromptlyWhenIdle', pod, withinMs: 1500 }, onCluster(drainScenario('correct').build()));
    expect(r.verdict, r.message).toBe('pass');
    expect(r.message).toMatch(/went idle \((idle from its delete|idle at t=[\d.]+ s, [\d.]+ s after its delete)/);
  });

  it('exitsPromptlyWhenIdle is inconclusive, not failed, when the time from the delete exceeds the bound', () => {
    const r = evaluateOne({ assert: 'exitsPromptlyWhenIdle', pod, withinMs: 500 }, onCluster(drainScenario('correct').build()));
    expect(r.verdict, r.message).toBe('inconclusive');
    expect(r.message).toMatch(/stop signal is not on the Timeline/);
  });

  it('exitsPromptlyWhenIdle still fails a pod killed by SIGKILL', () => {
    const r = evaluateOne({ assert: 'exitsPromptlyWhenIdle', pod, withinMs: 500 }, onCluster(drainScenario('hang-until-killed').build()));
    expect(r.verdict, r.message).toBe('fail');
    expect(r.message).toContain('killed by SIGKILL');
  });

  it('podExitWithin from SIGTERM: a maximum is proven, a minimum only when missed, the rest is inconclusive', () => {
    const judge = (minMs: number, maxMs: number) => evaluateOne({ assert: 'podExitWithin', pod, from: 'sigterm', minMs, maxMs }, onCluster(drainScenario('correct').build()));
    expect(judge(0, 2000).verdict).toBe('pass');
    expect(judge(0, 500).verdict).toBe('inconclusive');
    expect(judge(500, 2000).verdict).toBe('inconclusive');
    const missed = judge(1500, 5000);
    expect(missed.verdict).toBe('fail');
    expect(missed.message).toMatch(/exited 1\.020 s after its delete .*before the 1\.500 s minimum/);
  });

  it('acceptsNewConnectionsAfterSigterm has no window to judge: inconclusive', () => {
    const r = evaluateOne({ assert: 'acceptsNewConnectionsAfterSigterm', pod, windowMs: 1000 }, onCluster(drainScenario('correct').build()));
    expect(r.verdict).toBe('inconclusive');
    expect(r.message).toMatch(/stop signal is not on the Timeline/);
  });

  it('where the harness sends the signal itself (the local provider), its absence is still a failure', () => {
    const tl = drainScenario('correct').build();
    tl.events = tl.events.filter((e) => e.kind !== 'sigterm');
    const r = evaluateOne({ assert: 'exitsPromptlyWhenIdle', pod, withinMs: 1500 }, tl);
    expect(r.verdict).toBe('fail');
    expect(r.message).toMatch(/got no SIGTERM after its delete/);
  });
});
