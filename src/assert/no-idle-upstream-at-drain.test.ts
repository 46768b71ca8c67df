import { describe, expect, it } from 'vitest';
import { evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';

const expectation = { assert: 'noIdleUpstreamAtDrain', pod: { workload: 'backend' }, usedWithinMs: 900 } as const;

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
      message: "backend-1's drain closed no connection still in use after its deprogramming; backend-2's drain closed no connection still in use after its deprogramming",
    });
  });

  it('fails on every connection still in use after the deprogramming that a drain closed, counted over its lines', () => {
    const lines = [sigterm, '{"ev":"idle-close","connections":3,"idleMs":[40,120,900]}', '{"ev":"idle-close","connections":2,"idleMs":[35,2000]}'];
    const r = evaluateOne(expectation, rolled({ 'backend-1': lines, 'backend-2': [sigterm] }));
    expect(r).toMatchObject({ verdict: 'fail', details: { pods: { 'backend-1': { verdict: 'fail', closed: 4, older: 1 }, 'backend-2': { verdict: 'pass' } } } });
    expect(r.message).toMatch(/^backend-1's drain closed 4 connections its client had left idle between requests after its deprogramming, first at t=2\.100 s: .* \(1 connection idle longer than 900 ms, last used before the deprogramming, let through\)/);
  });

  it('lets through connections last used before the deprogramming: a gateway balancing over endpoints no longer sends on them', () => {
    const r = evaluateOne(expectation, rolled({ 'backend-1': [sigterm, '{"ev":"idle-close","connections":2,"idleMs":[950,4000]}'], 'backend-2': [sigterm] }));
    expect(r).toMatchObject({ verdict: 'pass', details: { pods: { 'backend-1': { closed: 0, older: 2 } } } });
  });

  it('is inconclusive for a backend that does not report its drain', () => {
    expect(evaluateOne(expectation, rolled({ 'backend-1': [sigterm] }))).toMatchObject({
      verdict: 'inconclusive',
      message: expect.stringContaining('backend-2 reported no SIGTERM on stdout'),
    });
  });
});
