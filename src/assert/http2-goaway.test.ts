import { describe, expect, it } from 'vitest';
import type { Expectation } from '../model/scenario.ts';
import { RequestTable } from '../model/request-table.ts';
import { evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';

const expectation: Expectation = { assert: 'http2Goaway', pod: { step: 'delete' }, load: 'h2' };

/**
 * gw-1 and gw-2 behind Service `gateway`; two pooled connections (ports 41001, 41002) to gw-1 and
 * one (41003) to gw-2, a stream on each every 100 ms from 0 to 3000; gw-1 deleted at 1000 and sent
 * SIGTERM at 1500. `goaway`: gw-1 says GOAWAY at 1500 and its clients move to gw-2 on fresh
 * connections (41011, 41012); `close`: gw-1 closes its connections at 1500 without a word and the
 * clients reconnect to gw-2 after their streams fail.
 */
function pooled(mode: 'goaway' | 'close'): TimelineBuilder {
  const b = new TimelineBuilder();
  b.pod('gw-1', { workload: 'gateway', service: 'gateway' }).pod('gw-2', { workload: 'gateway', service: 'gateway' });
  b.drain('gw-1', { at: 1000, step: 'delete', workload: 'gateway', service: 'gateway', preStopMs: 500, exitAfterSigtermMs: 600 });
  const move = 1500;
  const route: [number, string, number?][] = [
    [41001, 'gw-1', 41011],
    [41002, 'gw-1', 41012],
    [41003, 'gw-2'],
  ];
  for (const [port, pod, next] of route) {
    b.connection({ service: 'gateway', clientPort: port, pod, open: 0, close: next !== undefined ? move + 2 : 3000 });
    if (next !== undefined) b.connection({ service: 'gateway', clientPort: next, pod: 'gw-2', open: move + 3, close: 3000 });
    if (next !== undefined && mode === 'goaway') {
      b.event(move, 'goaway', { pod, detail: { load: 'h2', localPort: port, lastStreamId: 2 ** 31 - 1, errorCode: 0 } });
    }
    for (let t = 0; t < 3000; t += 100) {
      const moved = next !== undefined && t >= move;
      b.request({
        load: 'h2',
        start: t,
        end: t + 5,
        service: 'gateway',
        localPort: moved ? next : port,
        pod: moved ? 'gw-2' : pod,
        newConnection: t === 0 || (moved && t === move),
      });
    }
    if (next !== undefined && mode === 'close') {
      b.request({ load: 'h2', start: move - 1, end: move, service: 'gateway', localPort: port, pod, outcome: 'reset', newConnection: false });
    }
  }
  return b;
}

describe('http2Goaway', () => {
  it('passes when the drained pod said GOAWAY and the clients moved to another replica', () => {
    const r = evaluateOne(expectation, pooled('goaway').build());
    expect(r.verdict).toBe('pass');
    expect(r.message).toBe(
      '2 GOAWAY from gw-1 (first at t=1.500 s, last stream id 2147483647); the client moved on: 42 later streams served by gw-2',
    );
  });

  it('fails a pod that closes its connections without GOAWAY', () => {
    const r = evaluateOne(expectation, pooled('close').build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe('gw-1 served 32 streams on 2 connections of load "h2" and sent no GOAWAY before they ended');
  });

  it('with announced: passes connections whose first GOAWAY names the largest stream id, fails one that names the last stream taken', () => {
    const announced: Expectation = { assert: 'http2Goaway', pod: { step: 'delete' }, load: 'h2', announced: true };
    const b = pooled('goaway');
    // The final GOAWAY after the notice is as it should be.
    b.event(1600, 'goaway', { pod: 'gw-1', detail: { load: 'h2', localPort: 41001, lastStreamId: 29, errorCode: 0 } });
    expect(evaluateOne(announced, b.build()).verdict).toBe('pass');
    const single = pooled('goaway');
    const second = single.timeline.events.filter((e) => e.kind === 'goaway')[1]!;
    second.detail = { ...second.detail, lastStreamId: 31 };
    const r = evaluateOne(announced, single.build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe(
      'gw-1 ended 1 of 2 connections of load "h2" with a GOAWAY naming the last stream it took (first at t=1.500 s, last stream id 31) and no notice before it (RFC 9113 section 6.8: last stream id 2^31-1 first): every stream its client sent before it arrived is refused',
    );
    // Without the option the same GOAWAY passes: the clients moved.
    expect(evaluateOne(expectation, single.build()).verdict).toBe('pass');
  });

  it('attributes a GOAWAY without a pod through the balancer record of its client port', () => {
    const b = pooled('goaway');
    for (const e of b.timeline.events) if (e.kind === 'goaway') delete e.pod;
    expect(evaluateOne(expectation, b.build()).verdict).toBe('pass');
  });

  it('fails when no later stream was served elsewhere, and is inconclusive when the pod served nothing', () => {
    const b = pooled('goaway');
    b.timeline.requests.scan((r) => {
      if (r.start >= 1500) b.timeline.requests.refine(r.i, { pod: 'gw-1' });
    });
    expect(evaluateOne(expectation, b.build()).message).toMatch(/yet none of the 42 streams sent after it was served by another pod$/);
    const idle = pooled('goaway');
    idle.timeline.requests = new RequestTable();
    expect(evaluateOne(expectation, idle.build())).toMatchObject({ verdict: 'inconclusive', message: 'no stream of load "h2" was served by gw-1: nothing to drain' });
  });
});
