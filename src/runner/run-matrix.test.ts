// runMatrix's concurrency: lanes take the next scenario x profile as they free up, each on a
// provider of its own, and the results keep catalog order whatever order they finish in.

import { describe, expect, it } from 'vitest';

import { referenceProfile } from '../profiles/reference.ts';
import { findScenario } from '../scenarios/index.ts';
import { runMatrix } from './run-matrix.ts';

const idleExit = findScenario('backend-idle-exit')!;
const deleteHttp = findScenario('backend-delete-http')!;

describe('runMatrix concurrency', () => {
  it('runs scenarios at once on separate providers, results in catalog order', async () => {
    const events: string[] = [];
    const run = await runMatrix({
      provider: 'local',
      scenarios: [deleteHttp, idleExit],
      profiles: [referenceProfile],
      overrides: {},
      nightly: false,
      signal: AbortSignal.timeout(60_000),
      keepTimeline: false,
      concurrency: 2,
      onStart: (s) => events.push(`start ${s.scenario}`),
      onResult: (r) => events.push(`result ${r.id}`),
    });
    // Both started before either finished: they ran at the same time.
    expect(events.slice(0, 2).sort()).toEqual(['start backend-delete-http', 'start backend-idle-exit']);
    expect(run.scenarios.map((s) => s.id)).toEqual(['backend-delete-http', 'backend-idle-exit']);
    // Separate providers: neither saw the other's traffic or pods, so each verdict is its own.
    for (const s of run.scenarios) expect(['pass', 'inconclusive'], `${s.id}: ${s.reason ?? ''}`).toContain(s.verdict);
  }, 90_000);

  it('runs one at a time by default', async () => {
    const events: string[] = [];
    await runMatrix({
      provider: 'local',
      scenarios: [idleExit, idleExit],
      profiles: [referenceProfile],
      overrides: {},
      nightly: false,
      signal: AbortSignal.timeout(60_000),
      keepTimeline: false,
      onStart: (s) => events.push(`start ${s.scenario}`),
      onResult: (r) => events.push(`result ${r.id}`),
    });
    expect(events).toEqual(['start backend-idle-exit', 'result backend-idle-exit', 'start backend-idle-exit', 'result backend-idle-exit']);
  }, 90_000);
});
