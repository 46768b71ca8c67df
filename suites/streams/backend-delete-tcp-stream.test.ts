import { describe, expect, it } from 'vitest';
import { describeResult, expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

describe('backend-delete-tcp-stream', () => {
  it('passes against the reference stream echo: streams on the deleted backend are closed gracefully, every message echoed', async () => {
    const r = await runCase('backend-delete-tcp-stream', 'reference');
    expectPass(r);
    const intact = r.assertions.find((a) => a.name === 'streamsIntact');
    expect(intact?.message, describeResult(r)).toMatch(/closed gracefully by its backend/);
  });

  it('fails against a backend that exits at SIGTERM: its streams are cut without a close announcement', async () => {
    const r = await runCase('backend-delete-tcp-stream', 'mutant-exit-on-sigterm');
    expectFailedBy(r, 'streamsIntact');
    expect(r.assertions.find((a) => a.name === 'streamsIntact')?.message, describeResult(r)).toMatch(/after (exit|SIGTERM) of backend-/);
  });

  it('fails against a backend that hangs until SIGKILL: its streams are cut at the kill', async () => {
    const r = await runCase('backend-delete-tcp-stream', 'mutant-hang-until-killed', { graceSeconds: 3 });
    expectFailedBy(r, 'streamsIntact', 'notKilled');
    expect(r.assertions.find((a) => a.name === 'streamsIntact')?.message, describeResult(r)).toMatch(/SIGKILL of backend-/);
  });
});
