import { describe, expect, it } from 'vitest';
import type { StreamRecord } from '../model/timeline.ts';
import { drainScenario, evaluateOne, SCENARIO, type TimelineBuilder } from '../../test-support/assert.ts';

const EXPECT = { assert: 'grpcStreamsComplete', load: 'grpc', pod: { step: SCENARIO.step } } as const;

/** A server stream asking for 50 messages; `sent` is what it received, all in sequence unless said. */
function grpcStream(b: TimelineBuilder, fields: Partial<StreamRecord> & Pick<StreamRecord, 'stream' | 'start' | 'end' | 'ending' | 'sent'>): void {
  (b.timeline.streams ??= []).push({ load: 'grpc', echoed: fields.sent, unanswered: 0, mismatched: 0, expected: 50, status: 'OK', ...fields });
}

/**
 * Two streams through the deleted pod (standing for a gateway pod) to backends behind it, both open
 * at its delete, judged with toEnd: one ran to its end, the other received `sent` of its 50 messages.
 */
function behindGateway(sent: number) {
  const b = drainScenario('correct');
  grpcStream(b, { stream: 1, gateway: 'backend-2', pod: 'app-1', start: 200, end: 1500, ending: 'closed', sent: 50 });
  grpcStream(b, { stream: 2, gateway: 'backend-2', pod: 'app-2', start: 900, end: 2010, ending: 'closed', sent });
  return evaluateOne({ ...EXPECT, toEnd: true }, b.build());
}

describe('grpcStreamsComplete', () => {
  it('passes streams that ran to their end, were ended early with OK by the deleted pod, or were cancelled by the load', () => {
    // correct drain: preStop 1 s, SIGTERM at 2000, exit at 2020
    const b = drainScenario('correct');
    grpcStream(b, { stream: 1, pod: 'backend-2', start: 200, end: 1500, ending: 'closed', sent: 50 });
    grpcStream(b, { stream: 2, pod: 'backend-2', start: 900, end: 2010, ending: 'closed', sent: 30, byeAt: 2001 });
    grpcStream(b, { stream: 3, pod: 'backend-1', start: 3000, end: 4000, ending: 'stopped', sent: 20, status: 'CANCELLED' });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toBe(
      'all 3 streams of load "grpc" completed, every message in sequence; 2 streams were open on backend-2 when it was deleted (1 ran to their end); 1 stream was ended early by the draining pod with OK at a message boundary',
    );
  });

  it('fails a stream cut with UNAVAILABLE when the pod exits at SIGTERM, naming the phase and the messages it was owed', () => {
    const b = drainScenario('exit-on-sigterm');
    grpcStream(b, { stream: 1, pod: 'backend-2', start: 200, end: 1000.4, ending: 'reset', sent: 40, unanswered: 10, status: 'UNAVAILABLE', error: 'UNAVAILABLE: Connection dropped' });
    grpcStream(b, { stream: 2, pod: 'backend-1', start: 200, end: 1200, ending: 'closed', sent: 50 });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe(
      '1 of 2 streams of load "grpc" did not complete (1 UNAVAILABLE; 10 messages owed); first: stream 1 on backend-2 ended UNAVAILABLE at t=1.000 s after 40 messages (UNAVAILABLE: Connection dropped), phase "after exit of backend-2, before load balancer deprogrammed"',
    );
  });

  it('fails a stream cut at SIGKILL', () => {
    const b = drainScenario('hang-until-killed');
    grpcStream(b, { stream: 1, pod: 'backend-2', start: 2500, end: 3000.2, ending: 'reset', sent: 25, unanswered: 25, status: 'UNAVAILABLE' });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('did not complete (1 UNAVAILABLE; 25 messages owed)');
    expect(r.message).toContain('phase "after SIGKILL of backend-2, after load balancer deprogrammed"');
  });

  it('fails an early end by a pod that is not being deleted, and a lost or duplicated message even under OK', () => {
    const b = drainScenario('correct');
    grpcStream(b, { stream: 1, pod: 'backend-2', start: 200, end: 1500, ending: 'closed', sent: 50 });
    grpcStream(b, { stream: 2, pod: 'backend-1', start: 200, end: 800, ending: 'closed', sent: 30 });
    grpcStream(b, { stream: 3, pod: 'backend-2', start: 300, end: 1300, ending: 'closed', sent: 50, echoed: 49, mismatched: 1 });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.details?.['byFault']).toEqual({ 'ended early by a pod not being deleted': 1, 'messages out of sequence': 1 });
  });

  it('with toEnd (behind a gateway): passes streams that ran to their end, placed on the gateway pod they went through', () => {
    const r = behindGateway(50);
    expect(r.verdict).toBe('pass');
    expect(r.message).toContain('2 streams were open on backend-2 when it was deleted (2 ran to their end); no stream was ended early');
  });

  it('with toEnd: fails a stream ended early with OK even by the deleted pod, since only the gateway can have ended it', () => {
    const r = behindGateway(30);
    expect(r.verdict).toBe('fail');
    expect(r.details?.['byFault']).toEqual({ 'ended early with OK': 1 });
    expect(r.message).toContain('first: stream 2 through backend-2 (backend app-2) ended ended early with OK at t=2.010 s after 30 messages');
  });

  it('is inconclusive when no stream was open on the deleted pod', () => {
    const b = drainScenario('correct');
    grpcStream(b, { stream: 1, pod: 'backend-1', start: 200, end: 4000, ending: 'stopped', sent: 40, status: 'CANCELLED' });
    const r = evaluateOne(EXPECT, b.build());
    expect(r).toMatchObject({ verdict: 'inconclusive', message: 'no stream of load "grpc" was open on backend-2 when it was deleted: nothing was tested' });
  });
});
