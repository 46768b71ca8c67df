// node-drain-websocket on the local provider's modelled nodes, as node-drain-http
// (suites/scenarios/node-drain-http.test.ts): both backends start on the drained node, the budget
// holds the second eviction back until a replacement is ready, and every evicted pod closes its
// WebSockets with 1001 while the streams reconnect to a pod that serves them.

import { describe, expect, it } from 'vitest';
import { eventsOf } from '../../src/model/timeline.ts';
import { describeResult, runCase } from '../helpers/run-case.ts';
import { expectClosedProperly, expectCut } from './backend-stream-cases.ts';

describe('node-drain-websocket', () => {
  it('passes with the budget: both evicted pods close their WebSockets with 1001 and every reconnect is served', async () => {
    const r = await runCase('node-drain-websocket', 'reference');
    expectClosedProperly(r, /close 1001/);
    const notes = eventsOf(r.timeline!, 'note').map((e) => e.message ?? '');
    expect(notes.some((m) => /^eviction of backend-\d+ refused by its PodDisruptionBudget \(429\)$/.test(m)), describeResult(r)).toBe(true);
    expect(eventsOf(r.timeline!, 'delete-issued').map((e) => e.pod).sort()).toEqual(['backend-1', 'backend-2']);
  });

  it('fails against a backend that exits at SIGTERM: each evicted pod cuts its WebSockets (1006)', async () => {
    // The slow start is what the budget is tested against, not the mutant: a quick one keeps the case short.
    expectCut(await runCase('node-drain-websocket', 'mutant-exit-on-sigterm', { startupSeconds: 1 }), /close 1006/);
  });

  it('does not pass with a single replica and no budget: the evicted pod closes each reconnect at once until the load stops replacing streams', async () => {
    // The reconnects after that, into the gap before the replacement is ready, are never tried.
    const r = await runCase('node-drain-websocket', 'reference', { replicas: 1, minAvailable: 0 });
    const intact = r.assertions.find((a) => a.name === 'streamsIntact');
    expect(intact?.verdict, describeResult(r)).toBe('inconclusive');
    expect(intact?.message, describeResult(r)).toMatch(/stopped replacing its streams at t=.*after opening 80 \(a reconnect loop\)/);
    expect(r.verdict, describeResult(r)).not.toBe('pass');
  });
});
