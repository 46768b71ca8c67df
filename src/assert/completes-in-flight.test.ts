import { describe, expect, it } from 'vitest';
import { drainScenario, evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';

describe('completesInFlight', () => {
  it('passes a long request that completes across the delete', () => {
    const b = drainScenario('correct', { preStopMs: 5000 });
    b.request({ load: 'long', start: 500, end: 5500, pod: 'backend-2' });
    const r = evaluateOne({ assert: 'completesInFlight', load: 'long' }, b.build());
    expect(r).toMatchObject({
      verdict: 'pass',
      message: 'the one request of load "long" in flight at a delete (t=1.000 s) completed ok; the longest took 5.000 s',
    });
  });

  it('passes the in-flight part of steady load on a correct drain', () => {
    const r = evaluateOne({ assert: 'completesInFlight', load: 'http' }, drainScenario('correct').build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toMatch(/^all 4 requests of load "http" in flight at a delete/);
  });

  it('fails when the pod exits at SIGTERM under an in-flight request', () => {
    const b = drainScenario('exit-on-sigterm');
    b.connection({ clientPort: 45_000, pod: 'backend-2', open: 500, close: 1000, upstream: 'reset' });
    b.request({ load: 'long', start: 499.8, end: 1000, localPort: 45_000, connectionStart: 499.8, outcome: 'eof' });
    const r = evaluateOne({ assert: 'completesInFlight', load: 'long' }, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe(
      '1 of 1 requests of load "long" in flight at a delete (t=1.000 s) failed (1 eof); first at t=1.000 s on backend-2, phase "after exit of backend-2, before load balancer deprogrammed"',
    );
  });

  it('fails when the pod is killed under it', () => {
    const b = drainScenario('hang-until-killed');
    b.request({ load: 'long', start: 500, end: 3000, pod: 'backend-2', outcome: 'reset' });
    const r = evaluateOne({ assert: 'completesInFlight', load: 'long' }, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('phase "after SIGKILL of backend-2, after load balancer deprogrammed"');
  });

  it('is inconclusive when nothing was in flight or nothing was deleted', () => {
    const b = drainScenario('correct');
    b.request({ load: 'long', start: 100, end: 900, pod: 'backend-1' });
    expect(evaluateOne({ assert: 'completesInFlight', load: 'long' }, b.build()).verdict).toBe('inconclusive');
    const none = new TimelineBuilder().pod('p');
    none.request({ load: 'long', start: 100, end: 900, pod: 'p' });
    expect(evaluateOne({ assert: 'completesInFlight', load: 'long' }, none.build())).toMatchObject({
      verdict: 'inconclusive',
      message: 'no pod was deleted or reloaded and no route changed: no request of load "long" was in flight at a delete, reload or route change',
    });
  });

  it('judges the requests in flight at a reload when no pod was deleted: a reload retires what served them', () => {
    const b = new TimelineBuilder().pod('gateway-1').reload('gateway-1', 1000);
    b.request({ load: 'long', start: 500, end: 2000, pod: 'gateway-1' });
    expect(evaluateOne({ assert: 'completesInFlight', load: 'long' }, b.build())).toMatchObject({ verdict: 'pass', message: expect.stringMatching(/in flight at a reload \(t=1\.000 s\)/) });
    b.request({ load: 'long', start: 600, end: 1100, pod: 'gateway-1', outcome: 'reset' });
    expect(evaluateOne({ assert: 'completesInFlight', load: 'long' }, b.build()).verdict).toBe('fail');
  });

  it("judges the requests in flight at a route change when nothing was deleted or reloaded: a class's dataplane reprogrammed from its HTTPRoute", () => {
    const b = new TimelineBuilder().pod('gateway-1').event(1000, 'chaos', { workload: 'gateway', detail: { step: 'swap', action: 'move-route' } });
    b.request({ load: 'long', start: 500, end: 2000, pod: 'gateway-1' });
    expect(evaluateOne({ assert: 'completesInFlight', load: 'long' }, b.build())).toMatchObject({ verdict: 'pass', message: expect.stringMatching(/in flight at a route change \(t=1\.000 s\)/) });
    // The gateway's own 404 while it had no route (HttpLoadSpec.okStatus 2xx makes it a failure of class status).
    b.request({ load: 'long', start: 600, end: 1100, pod: 'gateway-1', outcome: 'status', status: 404 });
    expect(evaluateOne({ assert: 'completesInFlight', load: 'long' }, b.build()).verdict).toBe('fail');
  });
});
