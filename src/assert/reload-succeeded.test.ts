import { describe, expect, it } from 'vitest';
import { phaseAt } from '../observe/phase.ts';
import { evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';

const expectation = { assert: 'reloadSucceeded', retireWithinMs: 2000 } as const;

/** nginx's reload as the process watch records it: the old worker retires, a new one starts. */
function workerReload(oldExit: number | undefined): TimelineBuilder {
  return new TimelineBuilder()
    .pod('gateway-1', { workload: 'gateway', service: 'gateway' })
    .process('gateway-1', 101, 'nginx: worker process', 50, oldExit)
    .reload('gateway-1', 1000)
    .process('gateway-1', 202, 'nginx: worker process', 1030);
}

describe('reloadSucceeded', () => {
  it('passes a reload that took, telling which processes it retired and started, when', () => {
    expect(evaluateOne(expectation, workerReload(1600).build())).toMatchObject({
      verdict: 'pass',
      message: 'gateway-1 reloaded at t=1.000 s in 0.010 s: 101 left after 0.600 s, 202 up after 0.030 s',
    });
  });

  it('fails a reload whose old process outlives its bound, or never leaves', () => {
    expect(evaluateOne(expectation, workerReload(3500).build())).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/old 101 still there 2\.000 s after it/) });
    expect(evaluateOne(expectation, workerReload(undefined).build())).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/old 101 never left/) });
  });

  it('fails a reload whose command failed: the old configuration kept serving', () => {
    const b = new TimelineBuilder().pod('gateway-1').reload('gateway-1', 1000, 200, { exitCode: 1 });
    expect(evaluateOne(expectation, b.build())).toMatchObject({ verdict: 'fail', message: 'gateway-1 reloaded at t=1.000 s: the reload failed (exit code 1)' });
  });

  it('is inconclusive when nothing was reloaded', () => {
    expect(evaluateOne(expectation, new TimelineBuilder().pod('gateway-1').build()).verdict).toBe('inconclusive');
  });

  it("places a moment of a reloaded pod on the reload and its processes, not on the pod's shutdown", () => {
    const t = workerReload(1600).build();
    expect(phaseAt(t, 'gateway-1', 1010).label).toBe('0.010 s after reload of gateway-1 (old 101 (nginx: worker process) retiring; no new process up yet)');
    expect(phaseAt(t, 'gateway-1', 1700).label).toBe('0.700 s after reload of gateway-1 (old 101 (nginx: worker process) gone; new 202 (nginx: worker process) up)');
    expect(phaseAt(t, undefined, 1010, 'no pod known').label).toMatch(/^no pod known; 0\.010 s after reload of gateway-1/);
    expect(phaseAt(t, 'gateway-1', 900).label).toBe('before delete of gateway-1');
  });
});
