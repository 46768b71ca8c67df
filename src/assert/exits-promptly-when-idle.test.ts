import { describe, expect, it } from 'vitest';
import { drainScenario, evaluateOne } from '../../test-support/assert.ts';

const pod = { step: 'delete' };

describe('exitsPromptlyWhenIdle', () => {
  it('passes a pod that exits right after SIGTERM once it has no connections', () => {
    const r = evaluateOne({ assert: 'exitsPromptlyWhenIdle', pod, withinMs: 100 }, drainScenario('correct').build());
    expect(r).toMatchObject({
      verdict: 'pass',
      message: 'backend-2 exited 0.020 s after it went idle (idle from SIGTERM at t=2.000 s), within 0.100 s',
    });
  });

  it('measures from the last close when a connection outlives SIGTERM', () => {
    const b = drainScenario('correct', { exitAfterSigtermMs: 550 });
    b.connection({ pod: 'backend-2', open: 900, close: 2500 });
    const r = evaluateOne({ assert: 'exitsPromptlyWhenIdle', pod, withinMs: 100 }, b.build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toMatch(/^backend-2 exited 0\.050 s after it went idle \(idle at t=2\.500 s, 0\.500 s after SIGTERM, when the last of its \d+ connections closed\)/);
  });

  it('passes a pod that died of SIGTERM where the signal itself was not seen (a cluster shows it only where the app logs it)', () => {
    const tl = drainScenario('exit-on-sigterm').build();
    tl.events = tl.events.filter((e) => e.kind !== 'sigterm');
    const exit = tl.events.find((e) => e.kind === 'exit' && e.pod === 'backend-2');
    if (exit) exit.detail = { code: 143, signal: 'SIGTERM', observed: 'watch' };
    const r = evaluateOne({ assert: 'exitsPromptlyWhenIdle', pod, withinMs: 100 }, tl);
    expect(r.verdict, r.message).toBe('pass');
    expect(r.message).toMatch(/^backend-2 exited 0\.000 s after it went idle/);
  });

  it('fails a pod that lingers after going idle', () => {
    const b = drainScenario('correct', { exitAfterSigtermMs: 1600 });
    b.connection({ pod: 'backend-2', open: 900, close: 2500 });
    const r = evaluateOne({ assert: 'exitsPromptlyWhenIdle', pod, withinMs: 500 }, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toMatch(/^backend-2 exited 1\.100 s after it went idle .*, 0\.600 s past the 0\.500 s bound$/);
  });

  it('fails a pod that hangs until SIGKILL', () => {
    const r = evaluateOne({ assert: 'exitsPromptlyWhenIdle', pod, withinMs: 500 }, drainScenario('hang-until-killed').build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toMatch(/^backend-2 was killed by SIGKILL at t=3\.000 s, 1\.935 s after it went idle \(idle at t=1\.065 s/);
  });

  it('fails a force-deleted pod', () => {
    const r = evaluateOne({ assert: 'exitsPromptlyWhenIdle', pod, withinMs: 500 }, drainScenario('force-delete').build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('killed by SIGKILL');
  });

  it('is inconclusive when no pod of the workload was deleted', () => {
    const r = evaluateOne({ assert: 'exitsPromptlyWhenIdle', pod: { workload: 'gateway' }, withinMs: 500 }, drainScenario('correct').build());
    expect(r).toMatchObject({ verdict: 'inconclusive', message: 'no pod of workload "gateway" was deleted: nothing to check' });
  });
});
