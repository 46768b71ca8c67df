import { describe, expect, it } from 'vitest';
import { eventsOf, firstEvent } from '../../src/model/timeline.ts';
import { expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

describe('backend-delete-http', () => {
  it('passes against the reference backend, with the whole deletion sequence on the Timeline', async () => {
    const r = await runCase('backend-delete-http', 'reference');
    expectPass(r);
    expect(r.counts.requests).toBeGreaterThan(100);

    const tl = r.timeline!;
    const deleted = firstEvent(tl, 'chaos')!.pod!;
    const at = (kind: Parameters<typeof firstEvent>[1]) => firstEvent(tl, kind, deleted)?.t ?? Number.NaN;
    const terminating = eventsOf(tl, 'endpoint-changed', deleted).find((e) => e.detail?.['terminating'] === true);
    const sequence = [at('delete-issued'), terminating?.t ?? Number.NaN, at('prestop-start'), at('prestop-end'), at('sigterm'), at('exit')];
    for (const t of sequence) expect(t).not.toBeNaN();
    expect([...sequence].sort((a, b) => a - b)).toEqual(sequence);
    // The balancer stopped sending it new connections, after the programming delay, before SIGTERM.
    const deprogrammed = at('lb-deprogrammed');
    expect(deprogrammed - at('delete-issued')).toBeGreaterThanOrEqual(190);
    expect(deprogrammed).toBeLessThan(at('sigterm'));
    expect(firstEvent(tl, 'exit', deleted)?.detail?.['code']).toBe(0);
  });

  it('fails against a backend that exits at SIGTERM: in-flight requests are cut', async () => {
    const r = await runCase('backend-delete-http', 'mutant-exit-on-sigterm');
    expectFailedBy(r, 'noFailedRequests');
    const failure = r.assertions.find((a) => a.name === 'noFailedRequests')!;
    expect(failure.message).toMatch(/after (SIGTERM|exit) of backend-1/);
  });

  it('fails against a backend that hangs until SIGKILL', async () => {
    const r = await runCase('backend-delete-http', 'mutant-hang-until-killed');
    expectFailedBy(r, 'notKilled', 'podExitWithin', 'noFailedRequests');
  });
});
