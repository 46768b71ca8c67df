import { describe, expect, it } from 'vitest';
import { drainScenario, evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';

const expectation = { assert: 'notKilled', pod: { step: 'delete' } } as const;

describe('notKilled', () => {
  it('passes a pod that exits on its own, with its exit relative to SIGTERM', () => {
    expect(evaluateOne(expectation, drainScenario('correct').build())).toMatchObject({
      verdict: 'pass',
      message: 'backend-2 exited on its own at t=2.020 s, 0.020 s after SIGTERM (grace period 30 s), not killed',
    });
  });

  it('fails a pod that hangs until SIGKILL', () => {
    expect(evaluateOne(expectation, drainScenario('hang-until-killed').build())).toMatchObject({
      verdict: 'fail',
      message: 'backend-2 was killed by SIGKILL at t=3.000 s, 2.000 s after SIGTERM (grace period 2 s)',
    });
  });

  it('fails a force delete', () => {
    expect(evaluateOne(expectation, drainScenario('force-delete').build())).toMatchObject({
      verdict: 'fail',
      message: 'backend-2 was killed by SIGKILL at t=1.000 s, 0.000 s after SIGTERM (grace period 0 s)',
    });
  });

  it('is inconclusive for a pod still running at the end', () => {
    const b = new TimelineBuilder().pod('p');
    b.event(1000, 'chaos', { pod: 'p', detail: { step: 'delete', action: 'delete-pod' } });
    b.event(1000, 'delete-issued', { pod: 'p' }).event(1000, 'sigterm', { pod: 'p' });
    expect(evaluateOne(expectation, b.build())).toMatchObject({
      verdict: 'inconclusive',
      message: 'p had neither exited nor been killed when the run ended (SIGTERM at t=1.000 s)',
    });
  });

  it('is inconclusive when the step ran but deleted no pod', () => {
    const b = new TimelineBuilder().pod('p');
    b.event(1000, 'chaos', { workload: 'backend', detail: { step: 'delete', action: 'scale' } });
    expect(evaluateOne(expectation, b.build())).toMatchObject({
      verdict: 'inconclusive',
      message: 'step "delete" deleted no pod: nothing to check',
    });
  });
});
