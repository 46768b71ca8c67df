import { describe, expect, it } from 'vitest';

import type { FlowRecord, LossRange } from '../model/timeline.ts';
import { noLostPackets, packetPhase, type LostPackets } from './no-lost-packets.ts';
import { evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';

/** A flow sending one packet every 10 ms from t=200 (seq k at 200 + 10 k), served by `pod`; packets sent in `lostWhen` windows are lost. */
function flow(index: number, pod: string | undefined, packets: number, lostWhen: [number, number][] = []): FlowRecord {
  const sentAt = (seq: number) => 200 + 10 * seq;
  const lost = (seq: number) => lostWhen.some(([a, b]) => sentAt(seq) >= a && sentAt(seq) < b);
  const losses: LossRange[] = [];
  let received = 0;
  let first: number | undefined;
  let last = 0;
  for (let seq = 0; seq < packets; seq++) {
    const t = sentAt(seq);
    if (!lost(seq)) {
      received++;
      first ??= t;
      last = t;
      continue;
    }
    const prev = losses.at(-1);
    if (prev && prev.to === seq - 1) {
      prev.to = seq;
      prev.lastSentAt = t;
    } else losses.push({ from: seq, to: seq, firstSentAt: t, lastSentAt: t });
  }
  return {
    load: 'udp',
    flow: index,
    start: sentAt(0),
    end: sentAt(packets - 1),
    sent: packets,
    received,
    lost: packets - received,
    duplicated: 0,
    reordered: 0,
    late: 0,
    rttMs: { p50: 0.2, p90: 0.3, p99: 0.5, max: 1 },
    pods: pod !== undefined && first !== undefined ? [{ pod, first, last, count: received }] : [],
    losses,
  };
}

/** backend-1 deleted at 1000, preStop until 2000, exits at 2020 (grace 30 s). */
function drained(flows: FlowRecord[]) {
  const b = new TimelineBuilder().pod('backend-1');
  b.drain('backend-1', { at: 1000, step: 'scale', preStopMs: 1000, exitAfterSigtermMs: 20 });
  const tl = b.build();
  tl.flows = flows;
  return tl;
}

describe('noLostPackets', () => {
  it('passes when every packet sent while the pod was alive was echoed, counting after-exit packets apart', () => {
    // Packets keep flowing after backend-1 exited at 2020: lost, but not a drain loss.
    const tl = drained([flow(0, 'backend-1', 250, [[2020, 99_999]]), flow(1, 'backend-1', 150)]);
    const r = evaluateOne({ assert: 'noLostPackets', load: 'udp' }, tl);
    expect(r.verdict).toBe('pass');
    expect(r.message).toBe(
      "no packet of load \"udp\" was lost while its pod was alive: 332 of 400 packets across 2 flows echoed (0 duplicated, 0 reordered, RTT p99 at most 0.5 ms); 68 packets sent after the serving pod's process exited are counted separately",
    );
    expect(r.details).toMatchObject({ sent: 400, lost: 0, lostAfterExit: 68, byPhase: { 'after exit of backend-1': 68 } });
  });

  it('fails a relay that drops the terminating pod at once, naming the first lost sequence numbers and the phase', () => {
    // The legacy Endpoints bug: from the delete (plus a watch delay) nothing is relayed.
    const tl = drained([flow(0, 'backend-1', 250, [[1010, 99_999]]), flow(1, 'backend-1', 250, [[1020, 99_999]])]);
    const r = evaluateOne({ assert: 'noLostPackets', load: 'udp' }, tl);
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe(
      '201 of 500 packets of load "udp" lost while the serving pod was alive, in 2 flows (201 terminating, serving of backend-1); first lost: flow 0 seq 81-181, flow 1 seq 82-181, sent at t=1.010 s to backend-1, phase "terminating, serving" (terminating (preStop) of backend-1, before load balancer deprogrammed); 136 packets sent after the serving pod\'s process exited are counted separately',
    );
    const first = (r.details?.['firstLosses'] as LostPackets[])[0];
    expect(first).toMatchObject({ flow: 0, from: 81, to: 181, pod: 'backend-1', phase: 'terminating, serving' });
    // The range that crossed the exit was split there: its tail is after exit.
    expect(r.details?.['byPhase']).toEqual({ 'terminating, serving of backend-1': 201, 'after exit of backend-1': 136 });
  });

  it('is inconclusive, not failed, when the kernel dropped at least as many datagrams at full buffers', () => {
    const tl = drained([flow(0, 'backend-1', 50, [[300, 330]])]);
    tl.events.push({ t: 800, kind: 'note', detail: { load: 'udp', udpSocketDrops: 3 } });
    const r = evaluateOne({ assert: 'noLostPackets', load: 'udp' }, tl);
    expect(r.verdict).toBe('inconclusive');
    expect(r.message).toContain('the kernel dropped 3 datagrams at full socket receive buffers');
    tl.events.push({ t: 900, kind: 'note', detail: { load: 'other', udpSocketDrops: 1 } });
    (tl.events.find((e) => e.detail?.['udpSocketDrops'] === 3)!.detail as Record<string, number>)['udpSocketDrops'] = 2;
    const fewer = evaluateOne({ assert: 'noLostPackets', load: 'udp' }, tl);
    expect(fewer.verdict).toBe('fail');
    expect(fewer.message).toContain('the kernel dropped 2 datagrams at full socket buffers, fewer than the losses');
    tl.flows![0]!.lateEchoes = 1;
    const late = evaluateOne({ assert: 'noLostPackets', load: 'udp' }, tl);
    expect(late.verdict).toBe('inconclusive');
    expect(late.message).toContain('but 1 echo arrived after the reply timeout and the kernel dropped 2 datagrams at full socket buffers');
  });

  it('attributes a packet still in flight at the delete (sent less than the p99 RTT before it) to the terminating phase', () => {
    const f = { ...flow(0, 'backend-1', 120, [[990, 99_999]]), rttMs: { p50: 5, p90: 8, p99: 12, max: 20 } };
    const r = evaluateOne({ assert: 'noLostPackets' }, drained([f]));
    expect(r.verdict).toBe('fail');
    const first = (r.details?.['firstLosses'] as LostPackets[])[0];
    expect(first).toMatchObject({ from: 79, firstSentAt: 990, phase: 'terminating, serving' });
    expect(Object.keys(r.details?.['byPhase'] as object)).toEqual(['terminating, serving of backend-1']);
  });

  it('fails losses before any delete: a balancer or generator that loses packets with no chaos at all', () => {
    const tl = drained([flow(0, 'backend-1', 50, [[300, 330]])]);
    const r = evaluateOne({ assert: 'noLostPackets' }, tl);
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('first lost: flow 0 seq 10-12, sent at t=0.300 s to backend-1, phase "before delete"');
  });

  it('fails a flow that never got an echo, with no pod known', () => {
    const tl = drained([flow(0, undefined, 20, [[0, 99_999]])]);
    const r = evaluateOne({ assert: 'noLostPackets' }, tl);
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('20 of 20 packets lost');
    expect(r.message).toContain('phase "no pod known"');
  });

  it('falls back to the pod the balancer pinned a never-echoed flow to', () => {
    const f = { ...flow(0, undefined, 20, [[0, 99_999]]), localPort: 40_001 };
    const tl = drained([f]);
    tl.udpFlows = [{ id: 1, service: 'backend', clientAddress: '127.0.0.1', clientPort: 40_001, pod: 'backend-1', open: 199, last: 390, end: 'open', packetsIn: 20, packetsOut: 0 }];
    const r = evaluateOne({ assert: 'noLostPackets' }, tl);
    expect(r.message).toContain('sent at t=0.200 s to backend-1, phase "before delete"');
  });

  it('is inconclusive when no packet was sent', () => {
    const r = evaluateOne({ assert: 'noLostPackets', load: 'udp' }, drained([]));
    expect(r.verdict).toBe('inconclusive');
    expect(r.message).toBe('no packets of load "udp" were sent: nothing was tested');
  });

  it('labels the phase of a pod whose readiness failed while terminating', () => {
    const tl = drained([]);
    tl.events.push({ t: 1500, kind: 'endpoint-changed', pod: 'backend-1', service: 'backend', detail: { ready: false, serving: false, terminating: true } });
    tl.events.sort((a, b) => a.t - b.t);
    expect(packetPhase(tl, 'backend-1', 500)).toBe('before delete');
    expect(packetPhase(tl, 'backend-1', 1200)).toBe('terminating, serving');
    expect(packetPhase(tl, 'backend-1', 1600)).toBe('terminating, not serving');
    expect(packetPhase(tl, 'backend-1', 2020)).toBe('after exit');
    expect(noLostPackets({ assert: 'noLostPackets' }, { timeline: tl }).verdict).toBe('inconclusive');
  });
});
