// node-drain-http on the local provider's modelled nodes (src/providers/local/nodes.ts): the backends
// start on one node and take 6 s to become ready, longer than their 4 s grace period; the drain of
// that node must not leave the Service without a backend. The PodDisruptionBudget is what holds one
// up: without it (or with a single replica) every pod of the node is evicted at once, serves while
// terminating until its grace period ends, and requests fail until a replacement is ready.

import { describe, expect, it } from 'vitest';
import { eventsOf } from '../../src/model/timeline.ts';
import { expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

describe('node-drain-http', () => {
  it('passes with the budget: the second eviction is refused (429) until a replacement is ready on the other node', async () => {
    const r = await runCase('node-drain-http', 'reference');
    expectPass(r);
    const tl = r.timeline!;
    const notes = eventsOf(tl, 'note').map((e) => e.message ?? '');
    expect(notes).toContain('cordon and drain node local-node-1');
    expect(notes.some((m) => /^eviction of backend-\d+ refused by its PodDisruptionBudget \(429\)$/.test(m))).toBe(true);
    expect(notes.filter((m) => /^eviction of backend-\d+ accepted$/.test(m))).toHaveLength(2);
    // Both original pods were evicted and are gone; two replacements serve.
    expect(eventsOf(tl, 'delete-issued').map((e) => e.pod).sort()).toEqual(['backend-1', 'backend-2']);
  });

  it('fails without a budget: both pods of the node are evicted at once', async () => {
    const r = await runCase('node-drain-http', 'reference', { minAvailable: 0 });
    expectFailedBy(r, 'noFailedRequests', 'notKilled');
  });

  it('fails with a single replica and no budget (the failing twin on a cluster too)', async () => {
    const r = await runCase('node-drain-http', 'reference', { replicas: 1, minAvailable: 0 });
    expectFailedBy(r, 'noFailedRequests');
  });

  it('fails against a backend that exits at SIGTERM, budget or not', async () => {
    const r = await runCase('node-drain-http', 'mutant-exit-on-sigterm');
    expectFailedBy(r, 'noFailedRequests');
  });
});
