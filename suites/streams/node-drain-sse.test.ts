// node-drain-sse on the local provider's modelled nodes, as node-drain-websocket: both backends
// start on the drained node, the budget holds the second eviction back until a replacement is
// ready, and every evicted pod ends its event streams cleanly while they resume elsewhere.

import { describe, expect, it } from 'vitest';
import { eventsOf } from '../../src/model/timeline.ts';
import { describeResult, runCase } from '../helpers/run-case.ts';
import { expectClosedProperly, expectCut } from './backend-stream-cases.ts';

describe('node-drain-sse', () => {
  it('passes with the budget: both evicted pods end their event streams cleanly and each resumes from Last-Event-ID', async () => {
    const r = await runCase('node-drain-sse', 'reference');
    expectClosedProperly(r, /closed gracefully by its backend \(clean end of body.*every event delivered once, resuming from Last-Event-ID/);
    expect(eventsOf(r.timeline!, 'delete-issued').map((e) => e.pod).sort(), describeResult(r)).toEqual(['backend-1', 'backend-2']);
  });

  it('fails against a backend that exits at SIGTERM: each evicted pod cuts its event streams short', async () => {
    // The slow start is what the budget is tested against, not the mutant: a quick one keeps the case short.
    expectCut(await runCase('node-drain-sse', 'mutant-exit-on-sigterm', { startupSeconds: 1 }), /eof \(body cut short\)/);
  });
});
