import { describe, expect, it } from 'vitest';
import { drainScenario, evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';

const step = { step: 'delete' };

describe('podExitWithin', () => {
  it('passes a correct drain, measured from delete and from SIGTERM', () => {
    const tl = drainScenario('correct').build();
    const fromDelete = evaluateOne({ assert: 'podExitWithin', pod: step, from: 'delete', minMs: 500, maxMs: 5000 }, tl);
    expect(fromDelete.verdict).toBe('pass');
    expect(fromDelete.message).toBe(
      'backend-2 exited 1.020 s after delete (at t=2.020 s, code 0), within bounds 0.500 s..5.000 s after delete',
    );
    expect(fromDelete.details?.['pods']).toMatchObject({ 'backend-2': { durationMs: 1020, exitCode: 0 } });
    const fromSigterm = evaluateOne({ assert: 'podExitWithin', pod: step, from: 'sigterm', minMs: 0, maxMs: 100 }, tl);
    expect(fromSigterm.verdict).toBe('pass');
    expect(fromSigterm.message).toContain('exited 0.020 s after SIGTERM');
  });

  it('fails a pod that exits at SIGTERM before the minimum drain time', () => {
    const r = evaluateOne(
      { assert: 'podExitWithin', pod: step, from: 'delete', minMs: 500, maxMs: 5000 },
      drainScenario('exit-on-sigterm').build(),
    );
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe('backend-2 exited 0.000 s after delete (at t=1.000 s, code 0), 0.500 s before the 0.500 s minimum');
  });

  it('fails a pod that exits past the maximum, by how much', () => {
    const tl = drainScenario('correct', { exitAfterSigtermMs: 4000 }).build();
    const r = evaluateOne({ assert: 'podExitWithin', pod: step, from: 'delete', minMs: 0, maxMs: 3000 }, tl);
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe('backend-2 exited 5.000 s after delete (at t=6.000 s, code 0), 2.000 s past the 3.000 s maximum');
  });

  it('fails a pod killed by SIGKILL, even inside the bounds', () => {
    const r = evaluateOne(
      { assert: 'podExitWithin', pod: step, from: 'delete', minMs: 0, maxMs: 60_000 },
      drainScenario('hang-until-killed').build(),
    );
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe(
      'backend-2 was killed by SIGKILL 2.000 s after delete (at t=3.000 s) instead of exiting; bounds 0.000 s..60.000 s after delete',
    );
    expect(evaluateOne({ assert: 'podExitWithin', pod: step, from: 'sigterm', minMs: 0, maxMs: 60_000 }, drainScenario('force-delete').build()).verdict).toBe('fail');
  });

  it('fails a pod that never exited', () => {
    const b = new TimelineBuilder().pod('p');
    b.event(1000, 'chaos', { pod: 'p', detail: { step: 'delete', action: 'delete-pod' } });
    b.event(1000, 'delete-issued', { pod: 'p' }).event(1000, 'sigterm', { pod: 'p' });
    const r = evaluateOne({ assert: 'podExitWithin', pod: step, from: 'sigterm', minMs: 0, maxMs: 1000 }, b.build());
    expect(r).toMatchObject({ verdict: 'fail', message: 'p never exited (SIGTERM at t=1.000 s); bounds 0.000 s..1.000 s after SIGTERM' });
  });

  it('fails a pod deleted but never sent SIGTERM when measured from SIGTERM', () => {
    const b = new TimelineBuilder().pod('p');
    b.event(1000, 'chaos', { pod: 'p', detail: { step: 'delete', action: 'delete-pod' } });
    b.event(1000, 'delete-issued', { pod: 'p' }).event(1000, 'sigkill', { pod: 'p' });
    const r = evaluateOne({ assert: 'podExitWithin', pod: step, from: 'sigterm', minMs: 0, maxMs: 1000 }, b.build());
    expect(r).toMatchObject({ verdict: 'fail', message: 'p got no SIGTERM after its delete at t=1.000 s (killed by SIGKILL at t=1.000 s)' });
  });

  it('is inconclusive when the step never ran', () => {
    const r = evaluateOne(
      { assert: 'podExitWithin', pod: { step: 'nope' }, from: 'delete', minMs: 0, maxMs: 1 },
      drainScenario('correct').build(),
    );
    expect(r).toMatchObject({ verdict: 'inconclusive', message: 'step "nope" never ran: no pod to check' });
  });

  it('checks every deleted pod of a workload, failures first', () => {
    const b = drainScenario('correct');
    b.drain('backend-3', { at: 1500, exitAfterSigtermMs: 9000 });
    const r = evaluateOne({ assert: 'podExitWithin', pod: { workload: 'backend' }, from: 'sigterm', minMs: 0, maxMs: 1000 }, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toMatch(/^backend-3 exited 9\.000 s after SIGTERM .*8\.000 s past the 1\.000 s maximum; backend-2 exited 0\.020 s after SIGTERM/);
    expect(Object.keys(r.details?.['pods'] as object)).toEqual(['backend-2', 'backend-3']);
  });
});
