import { describe, expect, it } from 'vitest';
import { evaluateOne, TimelineBuilder } from './testing.ts';

const expectation = { assert: 'noIdleUpstreamAtDrain', pod: { workload: 'backend' } } as const;

function rolled(lines: Record<string, string[]>) {
  const b = new TimelineBuilder().pod('backend-1').pod('backend-2');
  b.drain('backend-1', { at: 1000, preStopMs: 1000 }).drain('backend-2', { at: 1500, preStopMs: 1000 });
  for (const [pod, output] of Object.entries(lines)) {
    b.timeline.podOutput[pod] = output.map((line, i) => ({ t: 2000 + 100 * i, stream: 'stdout', line }));
  }
  return b.build();
}
const sigterm = '{"ev":"sigterm","open":3,"mode":"graceful"}';

describe('noIdleUpstreamAtDrain', () => {
  it('passes when no drain closed a connection left idle after a request', () => {
    expect(evaluateOne(expectation, rolled({ 'backend-1': [sigterm], 'backend-2': [sigterm, 'not json'] }))).toMatchObject({
      verdict: 'pass',
      message: "backend-1's drain closed no connection left idle after a request; backend-2's drain closed no connection left idle after a request",
    });
  });

  it('fails on every pooled connection a drain closed, counted over its lines', () => {
    const r = evaluateOne(expectation, rolled({ 'backend-1': [sigterm, '{"ev":"idle-close","connections":7}', '{"ev":"idle-close","connections":2}'], 'backend-2': [sigterm] }));
    expect(r).toMatchObject({ verdict: 'fail', details: { pods: { 'backend-1': { verdict: 'fail', closed: 9 }, 'backend-2': { verdict: 'pass' } } } });
    expect(r.message).toMatch(/^backend-1's drain closed 9 connections its client had left idle after a request, first at t=2\.100 s/);
  });

  it('is inconclusive for a backend that does not report its drain', () => {
    expect(evaluateOne(expectation, rolled({ 'backend-1': [sigterm] }))).toMatchObject({
      verdict: 'inconclusive',
      message: expect.stringContaining('backend-2 reported no SIGTERM on stdout'),
    });
  });
});
