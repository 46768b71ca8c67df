// runMatrix's concurrency: lanes take the next scenario x profile as they free up, each on a
// provider of its own, and the results keep catalog order whatever order they finish in.

import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { readRecordsFile } from '../report/records-file.ts';
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
      reporter: { onPairBegin: (s) => events.push(`start ${s.scenario}`), onPairEnd: (r) => events.push(`result ${r.id}`) },
    });
    // Both started before either finished: they ran at the same time.
    expect(events.slice(0, 2).sort()).toEqual(['start backend-delete-http', 'start backend-idle-exit']);
    expect(run.scenarios.map((s) => s.id)).toEqual(['backend-delete-http', 'backend-idle-exit']);
    // Separate providers: neither saw the other's traffic or pods, so each verdict is its own.
    for (const s of run.scenarios) expect(['pass', 'inconclusive'], `${s.id}: ${s.reason ?? ''}`).toContain(s.verdict);
  }, 90_000);

  it('runs one at a time by default, each result with the option values it ran with', async () => {
    const events: string[] = [];
    const run = await runMatrix({
      provider: 'local',
      scenarios: [idleExit, idleExit],
      profiles: [referenceProfile],
      overrides: { exitWithinMs: 3000 },
      nightly: false,
      signal: AbortSignal.timeout(60_000),
      keepTimeline: false,
      reporter: { onPairBegin: (s) => events.push(`start ${s.scenario}`), onPairEnd: (r) => events.push(`result ${r.id}`) },
    });
    expect(events).toEqual(['start backend-idle-exit', 'result backend-idle-exit', 'start backend-idle-exit', 'result backend-idle-exit']);
    // What the pair must do can depend on them (src/scenarios/expected.ts): the defaults, with --set's over them.
    for (const s of run.scenarios) expect(s.options).toEqual({ ...idleExit.defaults, exitWithinMs: 3000 });
  }, 90_000);

  it('writes each pair\'s requests to its records file while it runs, and a stopped pair leaves none', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-matrix-records-'));
    try {
      let partialWhileRunning: string[] = [];
      const run = await runMatrix({
        provider: 'local',
        scenarios: [idleExit],
        profiles: [referenceProfile],
        overrides: {},
        nightly: false,
        signal: AbortSignal.timeout(60_000),
        recordsDir: dir,
        reporter: {
          onProgress: () => {
            if (partialWhileRunning.length === 0 && existsSync(join(dir, 'records'))) {
              void readdir(join(dir, 'records')).then((files) => (partialWhileRunning = files.filter((f) => f.endsWith('.partial'))));
            }
          },
        },
      });
      const s = run.scenarios[0]!;
      expect(partialWhileRunning).toEqual([expect.stringMatching(/^01-backend-idle-exit\.reference\.requests\.gz\.\d+\.partial$/)]);
      expect(s.records).toMatchObject({ requests: 'records/01-backend-idle-exit.reference.requests.gz', count: s.timeline?.requests.length });
      expect((await readRecordsFile(join(dir, s.records!.requests))).toArray()).toEqual(s.timeline?.requests.toArray());
      expect((await readdir(join(dir, 'records'))).sort()).toEqual(['01-backend-idle-exit.reference.connections.gz', '01-backend-idle-exit.reference.requests.gz']);

      const stopped = new AbortController();
      const aborted = runMatrix({
        provider: 'local',
        scenarios: [deleteHttp],
        profiles: [referenceProfile],
        overrides: {},
        nightly: false,
        signal: stopped.signal,
        recordsDir: join(dir, 'stopped'),
        reporter: { onPairBegin: () => setTimeout(() => stopped.abort(new Error('stopped by the test')), 1500) },
      });
      await expect(aborted).rejects.toThrow();
      expect(await readdir(join(dir, 'stopped', 'records'))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
