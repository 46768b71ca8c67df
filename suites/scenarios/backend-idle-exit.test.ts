import { describe, it } from 'vitest';
import { expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

describe('backend-idle-exit', () => {
  it('passes against the reference backend', async () => {
    expectPass(await runCase('backend-idle-exit', 'reference'));
  });

  it('fails against a backend that hangs until SIGKILL', async () => {
    const r = await runCase('backend-idle-exit', 'mutant-hang-until-killed');
    expectFailedBy(r, 'exitsPromptlyWhenIdle', 'notKilled', 'podExitWithin');
  });
});
