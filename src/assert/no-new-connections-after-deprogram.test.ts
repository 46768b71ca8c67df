import { describe, expect, it } from 'vitest';
import { drainScenario, evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';

const expectation = { assert: 'noNewConnectionsAfterDeprogram', pod: { step: 'delete' } } as const;

describe('noNewConnectionsAfterDeprogram', () => {
  it('passes when the balancer stops routing at deprogram', () => {
    const r = evaluateOne(expectation, drainScenario('correct').build());
    expect(r).toMatchObject({
      verdict: 'pass',
      message: 'no new connection reached backend-2 after it was deprogrammed at t=1.050 s (57 connections before)',
    });
  });

  it('fails when a connection reaches the pod after deprogram', () => {
    const r = evaluateOne(expectation, drainScenario('connect-after-deprogram').build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe(
      'backend-2 got new connections after it was deprogrammed at t=1.050 s: 1 connection routed by the balancer and 1 request on new connections answered by it; first at t=1.150 s, 0.100 s after',
    );
  });

  it('fails on a new connection seen only by the client', () => {
    const b = drainScenario('correct');
    b.request({ start: 1300, end: 1305, connectionStart: 1300, pod: 'backend-2' });
    const r = evaluateOne(expectation, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('1 request on new connections answered by it; first at t=1.300 s, 0.250 s after');
  });

  it("leaves out requests sent straight to the pod (a lagging node's), which the balancer did not route", () => {
    const direct = drainScenario('correct');
    direct.request({ start: 1300, end: 1305, connectionStart: 1300, pod: 'backend-2', load: 'lagging-node', direct: true });
    expect(evaluateOne(expectation, direct.build()).verdict).toBe('pass');
    const routed = drainScenario('correct');
    routed.request({ start: 1300, end: 1305, connectionStart: 1300, pod: 'backend-2', load: 'lagging-node' });
    expect(evaluateOne(expectation, routed.build()).verdict).toBe('fail');
  });

  it('allows 1 ms between the deprogram event and the open', () => {
    const b = drainScenario('correct');
    b.connection({ pod: 'backend-2', open: 1050.9, close: 1060 });
    expect(evaluateOne(expectation, b.build()).verdict).toBe('pass');
    b.connection({ pod: 'backend-2', open: 1051.5, close: 1060 });
    expect(evaluateOne(expectation, b.build()).verdict).toBe('fail');
  });

  it('on a cluster, counts from the EndpointSlice change plus the programming bound the event states', () => {
    // kube-proxy applies a change up to its bound after the slice: a correct pod that gets a new
    // connection inside the bound passes; one past it still fails, with the bound in the message.
    const b = new TimelineBuilder().pod('backend-1');
    b.event(1000, 'chaos', { pod: 'backend-1', detail: { step: 'delete', action: 'delete-pod' } }).event(1000, 'delete-issued', { pod: 'backend-1' });
    b.event(1010, 'lb-deprogrammed', { pod: 'backend-1', service: 'backend', detail: { observed: 'endpointslice', programmingBoundMs: 1500 } });
    b.connection({ pod: 'backend-1', open: 2400, close: 2410 });
    expect(evaluateOne(expectation, b.build()).verdict).toBe('pass');
    b.connection({ pod: 'backend-1', open: 2600, close: 2610 });
    const r = evaluateOne(expectation, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe("backend-1 got new connections after it was deprogrammed at t=1.010 s (plus the balancer's programming bound, 1.500 s): 1 connection routed by the balancer; first at t=2.600 s, 1.590 s after");
  });

  it('ignores requests on connections opened before deprogram', () => {
    const b = drainScenario('correct');
    b.request({ start: 1500, end: 1505, connectionStart: 900, newConnection: false, pod: 'backend-2' });
    expect(evaluateOne(expectation, b.build()).verdict).toBe('pass');
  });

  it('is inconclusive when the pod was never deprogrammed', () => {
    const b = new TimelineBuilder().event(0, 'pod-created', { pod: 'p' });
    b.event(1000, 'chaos', { pod: 'p', detail: { step: 'delete', action: 'delete-pod' } }).event(1000, 'delete-issued', { pod: 'p' });
    expect(evaluateOne(expectation, b.build())).toMatchObject({
      verdict: 'inconclusive',
      message: 'p was never deprogrammed from the load balancer: nothing to check',
    });
  });
});
