import { describe, it } from 'vitest';
import { expectFailedBy, runCase } from '../helpers/run-case.ts';
import { expectClosedProperly, expectCut } from './backend-stream-cases.ts';

describe('backend-rollout-sse', () => {
  it('passes against the reference stream app: every old pod ends its event streams cleanly and each resumes from Last-Event-ID', async () => {
    expectClosedProperly(await runCase('backend-rollout-sse', 'reference'), /closed gracefully by its backend \(clean end of body.*every event delivered once, resuming from Last-Event-ID/);
  });

  it('fails against a backend that exits at SIGTERM: each old pod cuts its event streams short', async () => {
    expectCut(await runCase('backend-rollout-sse', 'mutant-exit-on-sigterm'), /eof \(body cut short\)/);
  });

  it('fails against a backend that hangs until SIGKILL: its event streams are cut at the kill', async () => {
    const r = await runCase('backend-rollout-sse', 'mutant-hang-until-killed', { graceSeconds: 3 });
    expectFailedBy(r, 'streamsIntact', 'notKilled');
    expectCut(r, /SIGKILL of backend-/);
  });
});
