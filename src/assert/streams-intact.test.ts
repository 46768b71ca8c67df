import { describe, expect, it } from 'vitest';
import type { StreamRecord } from '../model/timeline.ts';
import { drainScenario, evaluateOne, SCENARIO, type TimelineBuilder } from '../../test-support/assert.ts';

const EXPECT = { assert: 'streamsIntact', load: 'streams', pod: { step: SCENARIO.step } } as const;

function stream(b: TimelineBuilder, fields: Partial<StreamRecord> & Pick<StreamRecord, 'stream' | 'end' | 'ending'>): void {
  const sent = fields.sent ?? Math.round((fields.end - 200) / 20);
  (b.timeline.streams ??= []).push({
    load: 'streams',
    start: 200,
    sent,
    echoed: sent - (fields.unanswered ?? 0),
    unanswered: 0,
    mismatched: 0,
    ...fields,
  });
}

describe('streamsIntact', () => {
  it('passes when the deleted pod announces its drain and closes each stream after echoing everything', () => {
    // correct drain: preStop 1 s, SIGTERM at 2000, exit at 2020
    const b = drainScenario('correct');
    stream(b, { stream: 1, pod: 'backend-2', byeAt: 2005, end: 2010, ending: 'closed' });
    stream(b, { stream: 2, pod: 'backend-2', byeAt: 2005, end: 2012, ending: 'closed' });
    stream(b, { stream: 3, pod: 'backend-1', end: 4000, ending: 'stopped' });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toBe(
      'all 3 streams of load "streams" stayed intact; 2 streams were open on a deleted pod (182 messages echoed): each closed gracefully by its backend (last at t=2.012 s) after echoing every message',
    );
  });

  it('fails a stream cut when the pod exits at SIGTERM, naming the phase', () => {
    const b = drainScenario('exit-on-sigterm');
    stream(b, { stream: 1, pod: 'backend-2', end: 1000.4, ending: 'eof' });
    stream(b, { stream: 2, pod: 'backend-1', end: 4000, ending: 'stopped' });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe(
      '1 of 2 streams of load "streams" broke (1 eof (unannounced close); 0 messages unanswered); first: stream 1 on backend-2 ended eof (unannounced close) at t=1.000 s after 40 echoed messages, phase "after exit of backend-2, before load balancer deprogrammed"',
    );
  });

  it('fails a stream reset at SIGKILL with messages unanswered', () => {
    const b = drainScenario('hang-until-killed');
    stream(b, { stream: 1, pod: 'backend-2', end: 3000.2, ending: 'reset', unanswered: 1 });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('broke (1 reset; 1 message unanswered)');
    expect(r.message).toContain('phase "after SIGKILL of backend-2, after load balancer deprogrammed"');
  });

  it('fails a stall, and a graceful close that left a message unanswered', () => {
    const b = drainScenario('correct');
    stream(b, { stream: 1, pod: 'backend-2', end: 1900, ending: 'stall' });
    stream(b, { stream: 2, pod: 'backend-2', byeAt: 2005, end: 2010, ending: 'closed', unanswered: 1 });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.details?.['byFault']).toEqual({ stall: 1, unanswered: 1 });
  });

  it('is inconclusive when no stream was on the deleted pod', () => {
    const b = drainScenario('correct');
    stream(b, { stream: 1, pod: 'backend-1', end: 4000, ending: 'stopped' });
    const r = evaluateOne(EXPECT, b.build());
    expect(r).toMatchObject({ verdict: 'inconclusive', message: 'no stream of load "streams" was open on backend-2 when it was deleted: nothing was tested' });
  });
});
