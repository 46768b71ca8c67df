// allocationsKeepRelaying and newAllocationsSucceed on synthetic timelines: two TURN gateway pods,
// gateway-1 deleted at t=1000 (grace 4 s), allocations joined to their pod through the gateway
// Service's UDP flow records.

import { describe, expect, it } from 'vitest';
import type { AllocationRecord, FlowRecord, LossRange } from '../model/timeline.ts';
import { lostBefore } from './allocations-keep-relaying.ts';
import { evaluateOne, TimelineBuilder, type DrainSpec } from '../../test-support/assert.ts';

const GW = { workload: 'gateway', service: 'gateway' } as const;
const KEEP = { assert: 'allocationsKeepRelaying', load: 'allocations', pod: { step: 'delete' } } as const;
const NEW = { assert: 'newAllocationsSucceed', load: 'new' } as const;

/** correct: preStop until 1 s before the grace period ends; naive: dies at SIGTERM at the delete. */
function gateways(mode: 'correct' | 'naive'): TimelineBuilder {
  const b = new TimelineBuilder().pod('gateway-1', GW).pod('gateway-2', GW);
  const drain: DrainSpec =
    mode === 'correct'
      ? { at: 1000, step: 'delete', ...GW, gracePeriodSeconds: 4, preStopMs: 3000, deprogramAfterMs: 300, exitAfterSigtermMs: 2 }
      : { at: 1000, step: 'delete', ...GW, gracePeriodSeconds: 4, deprogramAfterMs: 300, exitAfterSigtermMs: 2 };
  return b.drain('gateway-1', drain);
}

let port = 40_000;

/** One allocation of `load` on `pod`, its balancer flow record, and its packet flow (100/s from `start` to `end`). */
function allocation(
  b: TimelineBuilder,
  o: { load: string; flow: number; pod: string; start: number; end: number; outcome?: AllocationRecord['outcome']; losses?: LossRange[] },
): void {
  const localPort = port++;
  const outcome = o.outcome ?? 'ok';
  (b.timeline.allocations ??= []).push({ load: o.load, flow: o.flow, localPort, start: o.start, end: o.start + (outcome === 'ok' ? 5 : 1000), outcome });
  (b.timeline.udpFlows ??= []).push({
    id: localPort,
    service: 'gateway',
    clientAddress: '127.0.0.1',
    clientPort: localPort,
    pod: o.pod,
    open: o.start + 0.2,
    last: o.end,
    end: 'open',
    packetsIn: 0,
    packetsOut: 0,
  });
  const sent = Math.round((o.end - o.start) / 10);
  const losses = o.losses ?? [];
  const lost = losses.reduce((n, r) => n + r.to - r.from + 1, 0);
  const flow: FlowRecord = {
    load: o.load,
    flow: o.flow,
    localPort,
    start: o.start + 5,
    end: o.end,
    sent,
    received: sent - lost,
    lost,
    duplicated: 0,
    reordered: 0,
    late: 0,
    pods: [{ pod: 'backend-1', first: o.start + 5, last: o.end, count: sent - lost }],
    losses,
  };
  (b.timeline.flows ??= []).push(flow);
}

describe('allocationsKeepRelaying', () => {
  it('passes when the deleted pod relays its allocations until their flows end', () => {
    const b = gateways('correct');
    allocation(b, { load: 'allocations', flow: 0, pod: 'gateway-1', start: 100, end: 3100 });
    allocation(b, { load: 'allocations', flow: 1, pod: 'gateway-2', start: 100, end: 3100 });
    const r = evaluateOne(KEEP, b.build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toBe(
      'all 2 allocations of load "allocations" relayed every packet (600 packets); 1 allocation was held by a deleted gateway pod through its drain until their flows ended (last at t=3.100 s, 1.900 s before the grace period expired)',
    );
  });

  it('fails when the pod dies at SIGTERM under its allocations, naming the phase', () => {
    const b = gateways('naive');
    allocation(b, { load: 'allocations', flow: 0, pod: 'gateway-1', start: 100, end: 3100, losses: [{ from: 90, to: 299, firstSentAt: 1005, lastSentAt: 3095 }] });
    allocation(b, { load: 'allocations', flow: 1, pod: 'gateway-2', start: 100, end: 3100 });
    const r = evaluateOne(KEEP, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe(
      '1 of 2 allocations of load "allocations" lost 210 packets before their flow ended or the grace period expired (1 gateway-1); first lost packet sent at t=1.005 s on allocation 0 held by gateway-1, phase "after exit of gateway-1, before load balancer deprogrammed"',
    );
  });

  it('excuses packets sent after the grace period expired', () => {
    const b = gateways('correct');
    // Flow outlives the grace period (delete 1000 + 4 s): only what was sent before 5000 counts.
    allocation(b, { load: 'allocations', flow: 0, pod: 'gateway-1', start: 100, end: 6000, losses: [{ from: 400, to: 589, firstSentAt: 4100, lastSentAt: 6000 }] });
    const r = evaluateOne(KEEP, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('lost 90 packets');
    const late = gateways('correct');
    allocation(late, { load: 'allocations', flow: 0, pod: 'gateway-1', start: 100, end: 6000, losses: [{ from: 490, to: 589, firstSentAt: 5000, lastSentAt: 6000 }] });
    expect(evaluateOne(KEEP, late.build()).verdict).toBe('pass');
  });

  it('is inconclusive when no allocation was held by the deleted pod across its delete', () => {
    const b = gateways('correct');
    allocation(b, { load: 'allocations', flow: 0, pod: 'gateway-2', start: 100, end: 3100 });
    expect(evaluateOne(KEEP, b.build())).toMatchObject({
      verdict: 'inconclusive',
      message: 'no allocation of load "allocations" was held by gateway-1 across its delete: nothing was tested',
    });
  });

  it('interpolates send times inside a loss range', () => {
    expect(lostBefore({ from: 0, to: 99, firstSentAt: 0, lastSentAt: 990 }, 500)).toBe(51);
    expect(lostBefore({ from: 0, to: 99, firstSentAt: 0, lastSentAt: 990 }, 0)).toBe(0);
    expect(lostBefore({ from: 0, to: 0, firstSentAt: 10, lastSentAt: 10 }, 11)).toBe(1);
  });
});

describe('newAllocationsSucceed', () => {
  it('passes when allocations made during the drain succeed, on the terminating pod too', () => {
    const b = gateways('correct');
    allocation(b, { load: 'new', flow: 0, pod: 'gateway-1', start: 1050, end: 2550 });
    allocation(b, { load: 'new', flow: 1, pod: 'gateway-2', start: 1050, end: 2550 });
    expect(evaluateOne(NEW, b.build())).toMatchObject({
      verdict: 'pass',
      message: 'all 2 allocations of load "new" succeeded; 2 were made during a drain (routed to 1 gateway-1, 1 gateway-2)',
    });
  });

  it('fails allocations routed to a pod that died at SIGTERM', () => {
    const b = gateways('naive');
    allocation(b, { load: 'new', flow: 0, pod: 'gateway-1', start: 1050, end: 2550, outcome: 'timeout' });
    allocation(b, { load: 'new', flow: 1, pod: 'gateway-2', start: 1050, end: 2550 });
    const r = evaluateOne(NEW, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe(
      '1 of 2 allocations of load "new" failed (1 timeout); first sent at t=1.050 s to gateway-1, phase "after exit of gateway-1, before load balancer deprogrammed"',
    );
  });

  it('is inconclusive when no allocation was made during a drain', () => {
    const b = gateways('correct');
    allocation(b, { load: 'new', flow: 0, pod: 'gateway-2', start: 100, end: 900 });
    expect(evaluateOne(NEW, b.build()).verdict).toBe('inconclusive');
  });
});
