import { describe, it } from 'vitest';
import { expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

describe('backend-sigterm-keeps-accepting', () => {
  it('passes against the reference backend', async () => {
    expectPass(await runCase('backend-sigterm-keeps-accepting', 'reference'));
  });

  it('fails against a backend that refuses new connections after SIGTERM', async () => {
    const r = await runCase('backend-sigterm-keeps-accepting', 'mutant-refuse-after-sigterm');
    expectFailedBy(r, 'acceptsNewConnectionsAfterSigterm', 'noFailedRequests');
  });

  it('fails against a backend that exits at SIGTERM', async () => {
    const r = await runCase('backend-sigterm-keeps-accepting', 'mutant-exit-on-sigterm');
    expectFailedBy(r, 'acceptsNewConnectionsAfterSigterm');
  });
});
