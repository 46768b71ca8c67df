import { describe, expect, it } from 'vitest';
import { evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';

const expectation = { assert: 'preStopOutlastsDeprogramming', pod: { step: 'delete' }, programmingDelayMs: 5000, spreadMs: 1000 } as const;

/** A gateway pod deleted at 1 s whose preStop lasts `preStopMs`, deprogrammed by the last node `deprogramAfterMs` after the delete. */
function drained(preStopMs: number, deprogramAfterMs: number) {
  return new TimelineBuilder()
    .pod('gateway-1', { workload: 'gateway', service: 'gateway' })
    .drain('gateway-1', { at: 1000, step: 'delete', workload: 'gateway', service: 'gateway', preStopMs, deprogramAfterMs })
    .build();
}

describe('preStopOutlastsDeprogramming', () => {
  it('passes a preStop that covers the delay, the spread and a margin', () => {
    expect(evaluateOne(expectation, drained(7000, 5400))).toMatchObject({
      verdict: 'pass',
      message:
        "gateway-1's stop signal came 7.000 s after its delete (at t=8.000 s): a margin of 2.000 s over the 5.000 s programming delay, covering the 1.000 s past it within which each node deprograms the pod at its own sync",
      details: { pods: { 'gateway-1': { marginMs: 2000, neededMs: 1000 } } },
    });
  });

  it('fails a preStop sized to the delay exactly, even in a run where every node deprogrammed in time', () => {
    expect(evaluateOne(expectation, drained(5000, 5000))).toMatchObject({
      verdict: 'fail',
      message:
        "gateway-1's stop signal came 5.000 s after its delete (at t=6.000 s): a margin of 0.000 s over the 5.000 s programming delay, less than the 1.000 s past it within which each node deprograms the pod at its own sync (this run the last node deprogrammed it 5.000 s after the delete; another run's nodes may be later)",
      details: { pods: { 'gateway-1': { marginMs: 0, neededMs: 1000 } } },
    });
  });

  it('fails a stop signal before the last node deprogrammed the pod, naming both times', () => {
    expect(evaluateOne(expectation, drained(5000, 5700))).toMatchObject({
      verdict: 'fail',
      message:
        "gateway-1's stop signal came 5.000 s after its delete (at t=6.000 s), 0.700 s before the last node deprogrammed it (at t=6.700 s): a margin of 0.000 s over the 5.000 s programming delay, less than the 1.000 s past it within which each node deprograms the pod at its own sync",
    });
  });

  it('does not measure a pod whose preStop and stop signal the provider cannot see (a cluster, an app that logs no SIGTERM)', () => {
    const b = new TimelineBuilder().pod('gateway-1', { workload: 'gateway', service: 'gateway' });
    b.event(1000, 'chaos', { pod: 'gateway-1', detail: { step: 'delete', action: 'delete-pod' } });
    b.event(1000, 'delete-issued', { pod: 'gateway-1', workload: 'gateway' }).event(9000, 'exit', { pod: 'gateway-1', detail: { code: 0 } });
    expect(evaluateOne(expectation, b.build())).toMatchObject({ verdict: 'pass', details: { pods: { 'gateway-1': { observed: false } } } });
  });

  it('does not take a signal from the pod\'s log without a preStop on the Timeline (a cluster) for a pod without a hook', () => {
    const b = new TimelineBuilder().pod('gateway-1', { workload: 'gateway', service: 'gateway' });
    b.event(1000, 'chaos', { pod: 'gateway-1', detail: { step: 'delete', action: 'delete-pod' } });
    b.event(1000, 'delete-issued', { pod: 'gateway-1', workload: 'gateway' });
    b.event(3030, 'sigterm', { pod: 'gateway-1', detail: { signal: 'SIGTERM', observed: 'pod-log' } }).event(9000, 'exit', { pod: 'gateway-1', detail: { code: 0 } });
    const r = evaluateOne(expectation, b.build());
    expect(r).toMatchObject({ verdict: 'pass', details: { pods: { 'gateway-1': { observed: 'signal only', stopSignal: 3030 } } } });
    expect(r.message).toBe("gateway-1's stop signal came 2.030 s after its delete (at t=3.030 s, from its log); a cluster does not show a preStop, so its margin over deprogramming is not measured here");
  });

  it("measures the margin on a cluster whose node agent shows the preStop and the signal (zerodrop's own), and fails one without it", () => {
    const run = (signalAt: number) => {
      const b = new TimelineBuilder().pod('gateway-1', { workload: 'gateway', service: 'gateway' });
      b.event(1000, 'chaos', { pod: 'gateway-1', detail: { step: 'delete', action: 'delete-pod' } });
      b.event(1000, 'delete-issued', { pod: 'gateway-1', workload: 'gateway', detail: { observed: 'api-response' } });
      b.event(1010, 'prestop-start', { pod: 'gateway-1', detail: { observed: 'node-agent' } });
      b.event(signalAt - 2, 'prestop-end', { pod: 'gateway-1', detail: { observed: 'node-agent' } });
      b.event(signalAt, 'sigterm', { pod: 'gateway-1', detail: { signal: 'SIGQUIT', observed: 'node-agent' } });
      b.event(signalAt + 500, 'exit', { pod: 'gateway-1', detail: { code: 0, observed: 'watch' } });
      return evaluateOne(expectation, b.build());
    };
    expect(run(8030)).toMatchObject({ verdict: 'pass', details: { pods: { 'gateway-1': { marginMs: 2030, neededMs: 1000 } } } });
    expect(run(6030)).toMatchObject({ verdict: 'fail', details: { pods: { 'gateway-1': { marginMs: 30, neededMs: 1000 } } } });
  });

  it('does not measure a pod whose node agent shows a preStop but whose signal is unseen', () => {
    const b = new TimelineBuilder().pod('gateway-1', { workload: 'gateway', service: 'gateway' });
    b.event(1000, 'chaos', { pod: 'gateway-1', detail: { step: 'delete', action: 'delete-pod' } });
    b.event(1000, 'delete-issued', { pod: 'gateway-1', workload: 'gateway', detail: { observed: 'api-response' } });
    b.event(1010, 'prestop-start', { pod: 'gateway-1', detail: { observed: 'node-agent' } });
    b.event(9000, 'exit', { pod: 'gateway-1', detail: { code: 0, observed: 'watch' } });
    expect(evaluateOne(expectation, b.build())).toMatchObject({ verdict: 'pass', details: { pods: { 'gateway-1': { observed: false } } } });
  });

  it('measures no margin of a pod without a preStop hook: keeping to accept after the stop signal is a correct drain too', () => {
    expect(evaluateOne(expectation, drained(0, 5000))).toMatchObject({ verdict: 'pass', details: { pods: { 'gateway-1': { preStop: false } } } });
  });
});
