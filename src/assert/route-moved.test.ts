import { describe, expect, it } from 'vitest';
import { evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';

describe('routeMoved', () => {
  const expectation = { assert: 'routeMoved', step: 'swap', from: 'backend', to: 'backend-b', withinMs: 500 } as const;
  /** Requests through gateway-1 answered by `a` before the swap at t=1000 and by `b` after it. */
  function swap(answer: (start: number) => { backendPod?: string; status?: number }): TimelineBuilder {
    const b = new TimelineBuilder().pod('gateway-1', { workload: 'gateway', service: 'gateway' }).pod('backend-1').pod('backend-b-1', { workload: 'backend-b', service: 'backend-b' });
    b.event(1000, 'chaos', { workload: 'gateway', detail: { step: 'swap', action: 'reload-pod' } });
    b.reload('gateway-1', 1000);
    for (let start = 200; start < 2500; start += 100) b.request({ start, end: start + 20, pod: 'gateway-1', gateway: 'gateway-1', path: '/', ...answer(start) });
    return b;
  }

  it('passes when requests before the swap reached the old set and those after it the new one', () => {
    const r = evaluateOne(expectation, swap((t) => ({ backendPod: t < 1200 ? 'backend-1' : 'backend-b-1' })).build());
    expect(r).toMatchObject({ verdict: 'pass', message: expect.stringMatching(/all 8 requests before it answered by backend, all 10 from 0\.500 s after it by backend-b; the first answered by backend-b was sent 0\.200 s after the change, the last answered by backend 0\.100 s after it$/) });
  });

  it('fails a route that never moved, and one detached before it moved (the gateway answering 404 itself)', () => {
    expect(evaluateOne(expectation, swap(() => ({ backendPod: 'backend-1' })).build())).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/10 of 10 requests sent 0\.500 s or more after it were answered by backend \(10\), not backend-b/) });
    const detached = swap((t) => (t >= 1000 && t < 1300 ? { status: 404 } : { backendPod: t < 1000 ? 'backend-1' : 'backend-b-1' }));
    expect(evaluateOne(expectation, detached.build())).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/3 of 23 requests were answered by the gateway with no backend behind it \(3 status 404\), the first sent at t=1\.000 s, 0\.000 s after the change, 0\.000 s after reload of gateway-1/) });
    // The same 404s where the load counts only a 2xx (a gateway scenario's): failed requests, and still no route.
    const failed = swap((t) => (t >= 1000 && t < 1300 ? { status: 404, outcome: 'status' as const } : { backendPod: t < 1000 ? 'backend-1' : 'backend-b-1' }));
    expect(evaluateOne(expectation, failed.build())).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/3 of 23 requests were answered by the gateway with no backend behind it \(3 status 404\)/) });
  });
});
