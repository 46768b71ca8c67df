import { describe, it } from 'vitest';
import { expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

describe('backend-long-request', () => {
  it('passes against the reference backend', async () => {
    expectPass(await runCase('backend-long-request', 'reference', { requestMs: 3000 }));
  });

  it('fails against a backend that exits at SIGTERM', async () => {
    const r = await runCase('backend-long-request', 'mutant-exit-on-sigterm', { requestMs: 3000 });
    expectFailedBy(r, 'completesInFlight', 'noFailedRequests');
  });

  it('fails against a backend that hangs until SIGKILL after the request', async () => {
    const r = await runCase('backend-long-request', 'mutant-hang-until-killed', { requestMs: 2000, graceSeconds: 4 });
    expectFailedBy(r, 'notKilled');
  });
});
