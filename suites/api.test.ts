// The programmatic API (`import { run } from 'zerodrop'`): the result results.json holds, reports
// only when asked, bad options refused before anything starts, an abort that tears down.

import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planRun, readResults, run, UsageError, type ScenarioResult } from '../src/index.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('run()', () => {
  it('returns the verdicts of every pair, and writes nothing unless reportDir is given', async () => {
    const seen: ScenarioResult[] = [];
    let reports: unknown;
    const result = await run({
      scenarios: ['backend-idle-exit'],
      profiles: ['reference', 'mutant-hang-until-killed'],
      // The mutant hangs until SIGKILL: a 4 s grace period instead of 8 ends its run sooner, and it
      // still fails (killed, long past exitWithinMs, 2.5 s).
      set: { graceSeconds: 4 },
      reporter: { onPairEnd: (r) => seen.push(r) },
      onReports: (w) => (reports = w),
    });
    expect(result.provider).toBe('local');
    expect(result.scenarios.map((s) => [s.id, s.profile, s.verdict])).toEqual([
      ['backend-idle-exit', 'reference', 'pass'],
      ['backend-idle-exit', 'mutant-hang-until-killed', 'fail'],
    ]);
    expect(seen.map((s) => s.profile)).toEqual(['reference', 'mutant-hang-until-killed']);
    expect(reports).toBeUndefined();
  }, 60_000);

  it('writes the reports into reportDir, and results.json holds what run() returned', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-api-'));
    dirs.push(dir);
    let written: Record<string, string> = {};
    const result = await run({ scenarios: ['backend-idle-exit'], reportDir: dir, implementation: { project: 'api-test' }, onReports: (w) => (written = w as Record<string, string>) });
    expect((await readdir(dir)).sort()).toEqual(['conformance.yaml', 'index.html', 'junit.xml', 'records', 'results.json']);
    expect(Object.keys(written).sort()).toEqual(['conformance', 'html', 'json', 'junit']);
    const saved = await readResults(dir);
    expect(saved.implementation).toEqual({ project: 'api-test' });
    expect(saved.scenarios.map(({ timeline: _t, ...s }) => s)).toEqual(result.scenarios.map(({ timeline: _t, ...s }) => s));
    // The requests went to the records file as the run went: run()'s result points at it too.
    expect(result.scenarios[0]?.records?.requests).toBe('records/01-backend-idle-exit.reference.requests.gz');
    expect(saved.scenarios.map((s) => s.timeline?.requests.toArray())).toEqual(result.scenarios.map((s) => s.timeline?.requests.toArray()));
  }, 60_000);

  it('a reporter module named in reporters hears the run in order: begin, the pair begins, its phases, its result, the end', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-api-reporter-'));
    dirs.push(dir);
    const path = join(dir, 'my-reporter.mjs');
    await writeFile(
      path,
      [
        'const heard = (globalThis.zerodropHeard = []);',
        'export default () => ({',
        '  onBegin: (run) => { heard.push(`begin ${run.pairs.map((p) => `${p.scenario} ${p.profile}`).join()}`); },',
        '  onPairBegin: (pair) => heard.push(`pair begin ${pair.scenario} ${pair.profile}`),',
        '  onProgress: (p) => heard.push(`progress ${p.phase}`),',
        '  onPairEnd: (r) => heard.push(`pair end ${r.verdict}`),',
        '  onEnd: async (run) => { heard.push(`end ${run.scenarios.length}`); },',
        '});',
      ].join('\n'),
    );
    await run({ scenarios: ['backend-idle-exit'], reporters: [path] });
    const heard = (globalThis as { zerodropHeard?: string[] }).zerodropHeard ?? [];
    const phases = [...new Set(heard.filter((h) => h.startsWith('progress ')))];
    expect(heard.filter((h) => !h.startsWith('progress '))).toEqual(['begin backend-idle-exit reference', 'pair begin backend-idle-exit reference', 'pair end pass', 'end 1']);
    expect(phases.slice(0, 2)).toEqual(['progress deploying', 'progress running']);
    expect(phases.at(-1)).toBe('progress evaluating');
    expect(heard.indexOf('progress deploying')).toBeGreaterThan(heard.indexOf('pair begin backend-idle-exit reference'));
    expect(heard.lastIndexOf('progress evaluating')).toBeLessThan(heard.indexOf('pair end pass'));
  }, 60_000);

  it('refuses bad options before anything starts, naming the field and what is allowed', async () => {
    await expect(run({ workers: 0 })).rejects.toThrow(UsageError);
    await expect(run({ workers: 0 })).rejects.toThrow(/workers = 0: must be a whole number from 1 to 64/);
    expect(() => planRun({ profiles: ['no-such-profile'] })).toThrow(/profiles\[0\] = "no-such-profile": unknown profile; allowed: reference/);
    expect(() => planRun({ scenarios: ['backend-delete-http'], set: { replicas: 2.5 } })).toThrow(/set\.replicas/);
  });

  it('an aborted signal rejects the run', async () => {
    const controller = new AbortController();
    const pending = run({ scenarios: ['backend-delete-http'], signal: controller.signal, reporter: { onPairBegin: () => controller.abort(new Error('stop here')) } });
    await expect(pending).rejects.toThrow('stop here');
  }, 60_000);
});
