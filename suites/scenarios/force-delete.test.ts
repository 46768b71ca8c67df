import { describe, expect, it } from 'vitest';
import { expectFailedBy, runCase } from '../helpers/run-case.ts';

describe('force-delete (control)', () => {
  it('is reported failing even against the reference backend, with the phase of each failure', async () => {
    const r = await runCase('force-delete', 'reference');
    expectFailedBy(r, 'noFailedRequests', 'notKilled');
    const failure = r.assertions.find((a) => a.name === 'noFailedRequests')!;
    const first = (failure.details?.['firstFailures'] ?? []) as { phase: string; pod?: string }[];
    expect(first.length).toBeGreaterThan(0);
    for (const f of first) expect(f.phase).toMatch(/SIGKILL of backend-1|no pod/);
  });
});
