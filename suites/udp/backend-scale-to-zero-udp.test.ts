// https://github.com/l7mp/stunner/issues/138 (seed 000): long-lived UDP flows through a relay that discovers its backends;
// the backend is scaled to 0 with a preStop sleep. EndpointSlice discovery keeps the terminating,
// serving pod and loses nothing; legacy Endpoints drop it at once and the flows break.

import { describe, expect, it } from 'vitest';

import { inFlightMs, type LostPackets } from '../../src/assert/no-lost-packets.ts';
import { eventsOf, firstEvent } from '../../src/model/timeline.ts';
import { describeResult, expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

describe('backend-scale-to-zero-udp', () => {
  it('passes with the reference relay (EndpointSlices): no packet lost while the backend was alive', async () => {
    const r = await runCase('backend-scale-to-zero-udp', 'reference');
    expectPass(r);
    const tl = r.timeline!;
    const flows = tl.flows ?? [];
    expect(flows).toHaveLength(4);
    expect(flows.every((f) => f.lost === 0 && f.sent === 600), describeResult(r)).toBe(true);
    // The flows kept going through the backend's whole termination: delete, preStop, SIGTERM.
    const sigterm = firstEvent(tl, 'sigterm', 'backend-1')!.t;
    expect(flows.every((f) => f.pods.some((p) => p.pod === 'backend-1' && p.last > sigterm))).toBe(true);
    // The relay discovered the pod as terminating but kept it.
    const relay = (tl.podOutput['gateway-1'] ?? []).map((l) => l.line);
    expect(relay.some((l) => l.includes('"ready":false'))).toBe(true);
    expect(relay.some((l) => l.includes('prohibited'))).toBe(false);
    expect(eventsOf(tl, 'sigkill')).toHaveLength(0);
  });

  it('fails with the legacy Endpoints relay, naming the first lost sequence numbers and the phase "terminating, serving"', async () => {
    const r = await runCase('backend-scale-to-zero-udp', 'mutant-endpoints-api');
    expectFailedBy(r, 'noLostPackets');
    const a = r.assertions.find((x) => x.name === 'noLostPackets')!;
    expect(a.message).toMatch(/first lost: flow \d+ seq [\d,]+-[\d,]+/);
    expect(a.message).toContain('phase "terminating, serving"');
    const first = (a.details?.['firstLosses'] as LostPackets[])[0]!;
    expect(first.pod).toBe('backend-1');
    expect(first.phase).toBe('terminating, serving');
    // Lost after the delete (arriving after it: sent at most the in-flight time before), before the
    // backend exited: the relay dropped a live pod.
    const tl = r.timeline!;
    const inFlight = inFlightMs(tl.flows!.find((f) => f.flow === first.flow)!);
    expect(first.firstSentAt + inFlight).toBeGreaterThanOrEqual(firstEvent(tl, 'delete-issued', 'backend-1')!.t);
    expect(first.firstSentAt).toBeLessThan(firstEvent(tl, 'exit', 'backend-1')!.t);
    expect((tl.podOutput['gateway-1'] ?? []).some((l) => l.line.includes('administratively prohibited'))).toBe(true);
  });
});
