import { describe, expect, it } from 'vitest';
import { describeResult, expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

describe('backend-delete-sse', () => {
  it('passes against the reference stream app: event streams on the deleted backend end cleanly and resume from Last-Event-ID', async () => {
    const r = await runCase('backend-delete-sse', 'reference');
    expectPass(r);
    const intact = r.assertions.find((a) => a.name === 'streamsIntact');
    expect(intact?.message, describeResult(r)).toMatch(/closed gracefully by its backend \(clean end of body.*every event delivered once/);
  });

  it('fails against a backend that exits at SIGTERM: its event streams are cut short', async () => {
    const r = await runCase('backend-delete-sse', 'mutant-exit-on-sigterm');
    expectFailedBy(r, 'streamsIntact');
    const intact = r.assertions.find((a) => a.name === 'streamsIntact')?.message;
    expect(intact, describeResult(r)).toMatch(/eof \(body cut short\)/);
    expect(intact, describeResult(r)).toMatch(/after (exit|SIGTERM) of backend-/);
  });

  it('fails against a backend that hangs until SIGKILL: its event streams are cut at the kill', async () => {
    const r = await runCase('backend-delete-sse', 'mutant-hang-until-killed', { graceSeconds: 3 });
    expectFailedBy(r, 'streamsIntact', 'notKilled');
    expect(r.assertions.find((a) => a.name === 'streamsIntact')?.message, describeResult(r)).toMatch(/SIGKILL of backend-/);
  });

  it('fails against a backend that drains cleanly but ignores Last-Event-ID: the resumed streams repeat events', async () => {
    const r = await runCase('backend-delete-sse', 'mutant-sse-no-resume');
    expectFailedBy(r, 'streamsIntact');
    expect(r.assertions.find((a) => a.name === 'streamsIntact')?.message, describeResult(r)).toMatch(/duplicated events/);
  });
});
