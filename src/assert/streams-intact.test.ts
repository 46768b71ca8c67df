import { describe, expect, it } from 'vitest';
import type { StreamRecord } from '../model/timeline.ts';
import { countsOf } from '../report/results.ts';
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
      'all 3 streams of load "streams" stayed intact; 2 streams were open on a deleted pod (182 messages echoed): each closed gracefully by its backend (last at t=2.012 s), every message echoed',
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

  it('passes WebSocket streams the deleted pod closed with 1001 after echoing everything', () => {
    const b = drainScenario('correct');
    stream(b, { kind: 'websocket', stream: 1, pod: 'backend-2', closeCode: 1001, byeAt: 2010, end: 2010, ending: 'closed' });
    stream(b, { kind: 'websocket', stream: 2, pod: 'backend-1', closeCode: 1000, end: 4000, ending: 'stopped' });
    stream(b, { kind: 'websocket', stream: 3, pod: 'backend-1', closeCode: 1000, start: 2011, end: 4000, ending: 'stopped' });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toContain('1 stream was open on a deleted pod (91 messages echoed): each closed gracefully by its backend (close 1001, last at t=2.010 s), every message echoed');
    expect(r.message).not.toContain('crossed');
  });

  it('passes a WebSocket message the close frame crossed on the wire, and says so', () => {
    const b = drainScenario('correct');
    stream(b, { kind: 'websocket', stream: 1, pod: 'backend-2', closeCode: 1001, byeAt: 2010, end: 2010, ending: 'closed', crossed: 1 });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toMatch(/every message echoed \(but 1 message sent as the close frame crossed it, which no backend could answer\)$/);
    expect(r.details?.['crossed']).toBe(1);
  });

  it('fails a WebSocket cut without a close frame (1006), a close with another code, and a 1001 that left a message unechoed', () => {
    const b = drainScenario('exit-on-sigterm');
    stream(b, { kind: 'websocket', stream: 1, pod: 'backend-2', closeCode: 1006, end: 1000.4, ending: 'eof' });
    stream(b, { kind: 'websocket', stream: 2, pod: 'backend-2', closeCode: 1011, end: 1000.5, ending: 'error' });
    stream(b, { kind: 'websocket', stream: 3, pod: 'backend-2', closeCode: 1001, byeAt: 1000.6, end: 1000.6, ending: 'closed', unanswered: 1 });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.details?.['byFault']).toEqual({ 'close 1006 (eof, no close frame)': 1, 'close 1011': 1, unanswered: 1 });
    expect(r.message).toMatch(/^3 of 3 streams of load "streams" broke \(.*; 1 message unanswered\); first: stream 1 on backend-2 ended close 1006 \(eof, no close frame\) at t=1\.000 s/);
  });

  it('passes SSE streams ended cleanly and resumed from Last-Event-ID on another pod without a gap', () => {
    const b = drainScenario('correct');
    stream(b, { kind: 'sse', stream: 1, pod: 'backend-2', byeAt: 2010, retryMs: 200, end: 2010, ending: 'closed', lost: 0, duplicated: 0 });
    stream(b, { kind: 'sse', stream: 2, pod: 'backend-1', start: 2210, resumedFrom: '90', end: 4000, ending: 'stopped', lost: 0, duplicated: 0 });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toContain('(91 events received): each closed gracefully by its backend (clean end of body, last at t=2.010 s), every event delivered once, resuming from Last-Event-ID');
  });

  it('fails an SSE body cut short, and a resume that lost or repeated events', () => {
    const b = drainScenario('correct');
    stream(b, { kind: 'sse', stream: 1, pod: 'backend-2', end: 1900, ending: 'eof' });
    stream(b, { kind: 'sse', stream: 2, pod: 'backend-1', resumedFrom: '40', end: 4000, ending: 'stopped', lost: 3 });
    stream(b, { kind: 'sse', stream: 3, pod: 'backend-1', resumedFrom: '40', end: 4000, ending: 'stopped', duplicated: 2 });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.details?.['byFault']).toEqual({ 'eof (body cut short)': 1, 'lost events': 1, 'duplicated events': 1 });
    expect(r.message).toContain('broke (1 duplicated events, 1 eof (body cut short), 1 lost events; 3 events lost, 2 events duplicated)');
  });

  it('fails a reconnect that was refused', () => {
    const b = drainScenario('correct');
    stream(b, { kind: 'websocket', stream: 1, pod: 'backend-2', closeCode: 1001, byeAt: 2010, end: 2010, ending: 'closed' });
    stream(b, { kind: 'websocket', stream: 2, start: 2011, end: 2012, ending: 'refused', sent: 0 });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.details?.['byFault']).toEqual({ refused: 1 });
  });

  it('is inconclusive when no stream was on the deleted pod', () => {
    const b = drainScenario('correct');
    stream(b, { stream: 1, pod: 'backend-1', end: 4000, ending: 'stopped' });
    const r = evaluateOne(EXPECT, b.build());
    expect(r).toMatchObject({ verdict: 'inconclusive', message: 'no stream of load "streams" was open on backend-2 when it was deleted: nothing was tested' });
  });
});

describe('streamsIntact behind a gateway', () => {
  const TO_END = { ...EXPECT, toEnd: true } as const;

  it('places a cut stream on the gateway pod it went through, not on the backend behind it', () => {
    const b = drainScenario('exit-on-sigterm');
    stream(b, { stream: 1, gateway: 'backend-2', pod: 'backend-9', end: 1000.4, ending: 'eof', closeCode: 1006 });
    const r = evaluateOne(TO_END, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('first: stream 1 through backend-2 (backend backend-9) ended close 1006 (eof, no close frame)');
    expect(r.message).toContain('phase "after exit of backend-2');
  });

  it('names the pod from the balancer when the handshake named none (a gateway that adds no header to a 101)', () => {
    const b = drainScenario('exit-on-sigterm');
    stream(b, { stream: 1, service: 'svc', localPort: 40_001, pod: 'backend-9', end: 1000.4, ending: 'eof', closeCode: 1006 });
    b.timeline.connections.push({ id: 1, service: 'svc', clientPort: 40_001, pod: 'backend-2', open: 199, close: 1000.4, upstream: 'reset', bytesIn: 10, bytesOut: 10 });
    const r = evaluateOne(TO_END, b.build());
    expect(r.message).toContain('stream 1 through backend-2 (backend backend-9)');
  });

  it('calls a stream refused when the balancer says the pod refused its connection (the client saw a reset)', () => {
    const b = drainScenario('exit-on-sigterm');
    stream(b, { stream: 1, service: 'svc', localPort: 40_002, start: 1100, end: 1101, sent: 0, ending: 'reset' });
    b.timeline.connections.push({ id: 1, service: 'svc', clientPort: 40_002, pod: 'backend-2', open: 1100, close: 1101, upstream: 'refused', bytesIn: 10, bytesOut: 0 });
    const r = evaluateOne(TO_END, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('broke (1 refused');
    expect(r.message).toContain('first: stream 1 on backend-2 ended refused');
  });

  it('with toEnd, fails a proper close before the stream ended: only the gateway can have sent it', () => {
    const b = drainScenario('correct');
    stream(b, { stream: 1, gateway: 'backend-2', pod: 'backend-9', byeAt: 2005, end: 2010, ending: 'closed', closeCode: 1001, kind: 'websocket' });
    stream(b, { stream: 2, gateway: 'backend-1', pod: 'backend-9', end: 4000, ending: 'stopped', kind: 'websocket' });
    expect(evaluateOne(EXPECT, b.build()).verdict).toBe('pass');
    const r = evaluateOne(TO_END, b.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('1 of 2 streams of load "streams" broke (1 close 1001 before its end; 0 messages unanswered)');
    expect(r.message).toContain('at t=2.005 s');
    // The run's summary counts the streams as the assertion judged them.
    expect(countsOf(b.build()).streams?.broken).toBe(0);
    expect(countsOf(b.build(), [], true).streams?.broken).toBe(1);
  });

  it('with toEnd, passes streams that each ran to their end across the drain', () => {
    const b = drainScenario('correct');
    stream(b, { stream: 1, gateway: 'backend-2', pod: 'backend-9', end: 2500, ending: 'stopped', kind: 'websocket' });
    const r = evaluateOne(TO_END, b.build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toContain('each ran to its end, every message echoed');
  });

  it('does not pass when the load stopped replacing its streams: the reconnects it held back were never tried', () => {
    // One replica, no budget: the terminating pod closes each new stream at once until the cap.
    const b = drainScenario('correct');
    stream(b, { stream: 1, pod: 'backend-2', byeAt: 2005, end: 2010, ending: 'closed' });
    stream(b, { stream: 2, pod: 'backend-2', start: 2011, byeAt: 2012, end: 2013, ending: 'closed', sent: 1 });
    b.event(2014, 'note', { message: 'load streams stopped replacing its streams: it has opened 2, its most', detail: { load: 'streams', streamCap: 2 } });
    const r = evaluateOne(EXPECT, b.build());
    expect(r.verdict).toBe('inconclusive');
    expect(r.message).toBe('load "streams" stopped replacing its streams at t=2.014 s, after opening 2 (a reconnect loop): whether the reconnects after it would have been served was not tested');
  });
});
