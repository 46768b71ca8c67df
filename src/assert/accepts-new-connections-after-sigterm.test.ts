import { describe, expect, it } from 'vitest';
import { drainScenario, evaluateOne } from '../../test-support/assert.ts';

const pod = { step: 'delete' };
const expectation = { assert: 'acceptsNewConnectionsAfterSigterm', pod, windowMs: 400 } as const;
/** A correct pod behind a slow load balancer: SIGTERM at delete, deprogrammed 500 ms later, exits after 1 s. */
const slowLb = { preStopMs: 0, deprogramAfterMs: 500, exitAfterSigtermMs: 1000 };

describe('acceptsNewConnectionsAfterSigterm', () => {
  it('passes a pod that keeps accepting while the balancer still sends to it', () => {
    const r = evaluateOne(expectation, drainScenario('correct', slowLb).build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toBe(
      'backend-2 accepted all 27 new connections routed to it in the 0.400 s after SIGTERM (t=1.000..1.400 s); 27 requests on new connections succeeded',
    );
  });

  it('fails a pod that refuses new connections after SIGTERM', () => {
    const r = evaluateOne(expectation, drainScenario('refuse-after-sigterm').build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe(
      '27 of 27 new connections routed to backend-2 in the 0.400 s after SIGTERM (t=1.000..1.400 s) failed (27 refused); ' +
        '27 of 27 requests on them failed (27 refused); ' +
        'first at t=1.000 s, 0.000 s after SIGTERM, phase "after SIGTERM of backend-2, before load balancer deprogrammed"',
    );
    expect(r.details?.['pods']).toMatchObject({ 'backend-2': { connections: 27, failedConnections: 27 } });
  });

  it('fails a pod that exits at SIGTERM and a force-deleted one', () => {
    for (const mode of ['exit-on-sigterm', 'force-delete'] as const) {
      const r = evaluateOne(expectation, drainScenario(mode).build());
      expect(r.verdict, mode).toBe('fail');
      expect(r.message, mode).toMatch(/^4 of 4 new connections routed to backend-2 .* failed \(4 refused\)/);
    }
  });

  it('counts connections the pod reset or that errored', () => {
    const b = drainScenario('correct', slowLb);
    b.connection({ pod: 'backend-2', open: 1100, close: 1101, upstream: 'reset' });
    b.connection({ pod: 'backend-2', open: 1200, close: 1201, upstream: 'error' });
    const r = evaluateOne(expectation, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toMatch(/^2 of 29 new connections routed to backend-2 .* failed \(1 error, 1 reset\); first at t=1\.100 s, 0\.100 s after SIGTERM/);
  });

  it('fails on a client-side failure the balancer did not record', () => {
    const b = drainScenario('correct', slowLb);
    b.request({ start: 1300, end: 2300, connectionStart: 1300, pod: 'backend-2', outcome: 'timeout' });
    const r = evaluateOne(expectation, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toMatch(/^1 of 28 requests on new connections to backend-2 in the 0\.400 s after SIGTERM \(t=1\.000\.\.1\.400 s\) failed \(1 timeout\); first at t=1\.300 s/);
  });

  it("tells a lagging node's refused request by where it went, not by the balancer's state", () => {
    const b = drainScenario('correct');
    b.request({ start: 2100, end: 2101, connectionStart: 2100, pod: 'backend-2', outcome: 'refused', load: 'lagging-node', direct: true, newConnection: true });
    const r = evaluateOne(expectation, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toMatch(/first at t=2\.100 s, 0\.100 s after SIGTERM, phase "after exit of backend-2, sent straight to the pod \(a node not yet deprogrammed\)"$/);
  });

  it('is inconclusive when nothing reached the pod in the window', () => {
    const r = evaluateOne(expectation, drainScenario('correct').build());
    expect(r).toMatchObject({
      verdict: 'inconclusive',
      message: 'no new connection reached backend-2 in the 0.400 s after SIGTERM (t=2.000..2.400 s): nothing was tested',
    });
  });
});
