import { describe, expect, it } from 'vitest';
import { describeResult, expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

describe('backend-rollout-websocket', () => {
  it('passes against the reference stream app: every old pod closes its WebSockets with 1001 and every reconnect is served', async () => {
    const r = await runCase('backend-rollout-websocket', 'reference');
    expectPass(r);
    expect(r.assertions.find((a) => a.name === 'streamsIntact')?.message, describeResult(r)).toMatch(/close 1001/);
  });

  it('fails against a backend that exits at SIGTERM: each old pod cuts its WebSockets (1006)', async () => {
    const r = await runCase('backend-rollout-websocket', 'mutant-exit-on-sigterm');
    expectFailedBy(r, 'streamsIntact');
    expect(r.assertions.find((a) => a.name === 'streamsIntact')?.message, describeResult(r)).toMatch(/close 1006/);
  });
});
