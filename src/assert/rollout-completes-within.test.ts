import { describe, expect, it } from 'vitest';
import { TimelineBuilder } from '../../test-support/assert.ts';
import { evaluateOne } from '../../test-support/assert.ts';

function rollout(complete?: number) {
  const b = new TimelineBuilder().pod('backend-1');
  b.event(1000, 'rollout-start', { workload: 'backend' });
  b.event(1500, 'rollout-complete', { workload: 'gateway' });
  if (complete !== undefined) b.event(complete, 'rollout-complete', { workload: 'backend' });
  b.event(9000, 'load-stop');
  return b.build();
}

describe('rolloutCompletesWithin', () => {
  it('passes a rollout inside the bound', () => {
    expect(evaluateOne({ assert: 'rolloutCompletesWithin', workload: 'backend', maxMs: 5000 }, rollout(4000))).toMatchObject({
      verdict: 'pass',
      message: 'the rollout of backend completed in 3.000 s (t=1.000 s..4.000 s), within 5.000 s',
    });
  });

  it('fails a slow rollout by how much', () => {
    expect(evaluateOne({ assert: 'rolloutCompletesWithin', workload: 'backend', maxMs: 2000 }, rollout(4000))).toMatchObject({
      verdict: 'fail',
      message: 'the rollout of backend completed in 3.000 s (t=1.000 s..4.000 s), 1.000 s past the 2.000 s bound',
    });
  });

  it('fails a rollout that never completed, ignoring other workloads', () => {
    expect(evaluateOne({ assert: 'rolloutCompletesWithin', workload: 'backend', maxMs: 2000 }, rollout())).toMatchObject({
      verdict: 'fail',
      message: 'the rollout of backend started at t=1.000 s never completed (run ended 8.000 s later; bound 2.000 s)',
    });
  });

  it('is inconclusive with no rollout', () => {
    const r = evaluateOne({ assert: 'rolloutCompletesWithin', workload: 'gateway', maxMs: 2000 }, rollout(4000));
    expect(r).toMatchObject({ verdict: 'inconclusive', message: 'no rollout of gateway started: nothing to measure' });
  });
});
