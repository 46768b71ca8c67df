// The model-timings bench on one release with one sample of each measurement (`npm run bench --
// --only model` takes more, on every release): what the model and the kubelet agree on holds on the
// netns cluster. A rolling update (maxSurge 1, maxUnavailable 0) never deletes an old pod before a
// new one is Ready; the Eviction API refuses what the budget forbids with 429 and the cause
// `DisruptionBudget`; a force delete removes the object at once, and the node agent sends SIGTERM
// then SIGKILL no sooner than the kubelet's minimumGracePeriodInSeconds (2 s) after it.

import { describe, expect, it } from 'vitest';
import { measureRelease } from '../../src/bench/model-timings.ts';
import { pinnedVersion } from '../../src/providers/netns/control-plane-binary.ts';
import { skipReason, title } from './context.ts';

const kubeVersion = process.env['ZERODROP_KUBE_VERSION'] || undefined;

describe.skipIf(skipReason !== '')(title('the local model\'s assumptions on a netns cluster'), () => {
  it('rolls out in order, refuses an eviction by its budget, force deletes as the kubelet does, and shows when traffic leaves a deleted pod', async () => {
    const signal = AbortSignal.timeout(170_000);
    const r = await measureRelease(kubeVersion ?? pinnedVersion(), { deletes: 1, rollouts: 1, evictions: 1, forceDeletes: 1, deprograms: 1 }, { signal, log: (line) => console.log(`netns: ${line}`) });
    expect(r.toTerminating).toHaveLength(1);
    expect(r.rollouts[0]?.orderViolations).toBe(0);
    expect(r.rollouts[0]?.readyToOldDeleted.length).toBe(2);
    expect(r.evictions[0]?.refused).toEqual({ status: 429, causes: ['DisruptionBudget'] });
    expect(r.evictions[0]?.readyToAcceptedMs).toBeDefined();
    const forced = r.forceDeletes[0]!;
    expect(forced.objectGoneMs).toBeDefined();
    expect(forced.sigtermMs).toBeLessThan(1_000);
    // Timed from the request, so never sooner than 2 s; a busy machine may make it later.
    expect(forced.killedMs).toBeGreaterThanOrEqual(1_990);
    expect(forced.killedMs).toBeLessThan(4_000);
    expect(r.programming.count).toBeGreaterThan(0);
    // Deprogramming by traffic: the probe reached each deleted pod (one quiet delete, the rollout's two old pods).
    expect(r.quietDeprogram).toHaveLength(1);
    expect(r.rolloutDeprogram).toHaveLength(2);
  }, 180_000);
});
