import { describe, expect, it } from 'vitest';
import { drainScenario, evaluateOne, TimelineBuilder } from '../../test-support/assert.ts';
import { RequestTable } from '../model/request-table.ts';
import type { FailureRow } from './common.ts';

describe('noFailedRequests', () => {
  it('passes a correct drain and says how many requests it saw', () => {
    const tl = drainScenario('correct').build();
    const r = evaluateOne({ assert: 'noFailedRequests' }, tl);
    expect(r.verdict).toBe('pass');
    expect(tl.requests.length).toBe(760);
    expect(r.message).toBe('all 760 requests succeeded');
  });

  it('leaves the loads it is told to out, and says so (requests built to outlast the drain)', () => {
    const tl = drainScenario('exit-on-sigterm').build();
    tl.requests = RequestTable.from(tl.requests.toArray().map((r) => (r.outcome !== 'ok' ? { ...r, load: 'overlong-1' } : r)));
    const kept = evaluateOne({ assert: 'noFailedRequests', exceptLoads: ['overlong-1'] }, tl);
    expect(kept).toMatchObject({ verdict: 'pass', message: 'all 755 requests (not judged here: load "overlong-1") succeeded' });
    expect(evaluateOne({ assert: 'noFailedRequests' }, tl).verdict).toBe('fail');
  });

  it('fails exit-on-SIGTERM with the outcomes and the phase of the first failure', () => {
    const r = evaluateOne({ assert: 'noFailedRequests' }, drainScenario('exit-on-sigterm').build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toBe(
      '5 of 760 requests failed (4 refused, 1 eof); first at t=1.000 s on backend-2, phase "after exit of backend-2, before load balancer deprogrammed"',
    );
    expect(r.details?.['byOutcome']).toEqual({ refused: 4, eof: 1 });
    expect(r.details?.['byPhase']).toEqual({ 'after exit of backend-2': 5 });
    const rows = r.details?.['firstFailures'] as FailureRow[];
    expect(rows).toHaveLength(5);
    expect(rows[0]).toMatchObject({ pod: 'backend-2', outcome: 'eof', t: 1000, phase: 'after exit of backend-2, before load balancer deprogrammed' });
  });

  it('fails refuse-after-SIGTERM and keeps only the first 20 failures, in time order', () => {
    const r = evaluateOne({ assert: 'noFailedRequests' }, drainScenario('refuse-after-sigterm').build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toMatch(/^34 of 760 requests failed \(34 refused\); first at t=1\.000 s on backend-2, phase "after SIGTERM of backend-2, before load balancer deprogrammed"$/);
    const rows = r.details?.['firstFailures'] as FailureRow[];
    expect(rows).toHaveLength(20);
    const times = rows.map((row) => row.t);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('fails a force delete, phase after SIGKILL', () => {
    const r = evaluateOne({ assert: 'noFailedRequests' }, drainScenario('force-delete').build());
    expect(r.verdict).toBe('fail');
    expect(r.message).toContain('phase "after SIGKILL of backend-2, before load balancer deprogrammed"');
  });

  it('writes large counts with separators and names no-pod failures by the deleted pod', () => {
    const b = new TimelineBuilder().pod('backend-1');
    b.drain('backend-1', { at: 1000, deprogramAfterMs: 0 });
    for (let i = 0; i < 48_207; i++) b.request({ start: i / 100, end: i / 100 + 1, pod: 'backend-1' });
    b.traffic({ load: 'http', from: 1811.5, to: 1812, everyMs: 5, durationMs: 20 }); // no endpoint left: fails at 1812
    b.request({ start: 1900, end: 1900.4, outcome: 'refused', localPort: 1, pod: 'backend-1' });
    b.request({ start: 2000, end: 2000.4, outcome: 'reset' });
    const r = evaluateOne({ assert: 'noFailedRequests' }, b.build());
    expect(r.message).toBe(
      '3 of 48,210 requests failed (2 refused, 1 reset); first at t=1.812 s, phase "no pod (balancer had no endpoint); 0.812 s after delete of backend-1"',
    );
    const rows = r.details?.['firstFailures'] as FailureRow[];
    expect(rows.map((row) => row.phase)).toEqual([
      'no pod (balancer had no endpoint); 0.812 s after delete of backend-1',
      'after exit of backend-1, after load balancer deprogrammed',
      'no pod known; 1.000 s after delete of backend-1',
    ]);
  });

  it('dates a timeout by when it was sent', () => {
    const b = drainScenario('correct');
    b.request({ start: 1500, end: 6500, outcome: 'timeout', pod: 'backend-1' });
    const r = evaluateOne({ assert: 'noFailedRequests' }, b.build());
    expect(r.message).toContain('first at t=1.500 s on backend-1, phase "before delete of backend-1"');
  });

  it('counts only the named load', () => {
    const b = drainScenario('exit-on-sigterm');
    b.request({ load: 'long', start: 500, end: 5500, pod: 'backend-1' });
    const tl = b.build();
    expect(evaluateOne({ assert: 'noFailedRequests', load: 'long' }, tl)).toMatchObject({
      verdict: 'pass',
      message: 'the one request of load "long" succeeded',
    });
    expect(evaluateOne({ assert: 'noFailedRequests', load: 'http' }, tl).verdict).toBe('fail');
  });

  it('is inconclusive when no request was sent', () => {
    const tl = drainScenario('correct').build();
    expect(evaluateOne({ assert: 'noFailedRequests', load: 'other' }, tl)).toMatchObject({
      verdict: 'inconclusive',
      message: 'no requests of load "other" were sent: nothing was tested',
    });
    expect(evaluateOne({ assert: 'noFailedRequests' }, new TimelineBuilder().build()).verdict).toBe('inconclusive');
  });
});
