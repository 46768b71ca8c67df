import { describe, expect, it } from 'vitest';
import { describeResult, expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

describe('backend-delete-websocket', () => {
  it('passes against the reference stream app: WebSockets on the deleted backend are closed with 1001, every message echoed', async () => {
    const r = await runCase('backend-delete-websocket', 'reference');
    expectPass(r);
    const intact = r.assertions.find((a) => a.name === 'streamsIntact');
    expect(intact?.message, describeResult(r)).toMatch(/closed gracefully by its backend \(close 1001/);
  });

  it('fails against a backend that exits at SIGTERM: its WebSockets are cut without a close frame (1006)', async () => {
    const r = await runCase('backend-delete-websocket', 'mutant-exit-on-sigterm');
    expectFailedBy(r, 'streamsIntact');
    const intact = r.assertions.find((a) => a.name === 'streamsIntact')?.message;
    expect(intact, describeResult(r)).toMatch(/close 1006/);
    expect(intact, describeResult(r)).toMatch(/after (exit|SIGTERM) of backend-/);
  });

  it('fails against a backend that hangs until SIGKILL: its WebSockets are cut at the kill', async () => {
    const r = await runCase('backend-delete-websocket', 'mutant-hang-until-killed', { graceSeconds: 3 });
    expectFailedBy(r, 'streamsIntact', 'notKilled');
    const intact = r.assertions.find((a) => a.name === 'streamsIntact')?.message;
    expect(intact, describeResult(r)).toMatch(/close 1006/);
    expect(intact, describeResult(r)).toMatch(/SIGKILL of backend-/);
  });
});
