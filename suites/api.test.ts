// The programmatic API (`import { run } from 'zerodrop'`): the result results.json holds, reports
// only when asked, bad options refused before anything starts, an abort that tears down.

import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openRun, planRun, readResults, run, runVersionsPlan, UsageError, type ScenarioResult } from '../src/index.ts';

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

describe('runVersionsPlan(): the selection once per Kubernetes version', () => {
  it('runs each version in turn into reportDir/<version>/ and compares them in reportDir', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-api-versions-'));
    dirs.push(dir);
    // Two "versions" on the local provider, which ignores them: what is under test is the order, the
    // report directories and the comparison (the netns suite runs it on two real control planes).
    const plan = { ...planRun({ scenarios: ['backend-idle-exit'], profiles: ['reference', 'mutant-hang-until-killed'], reportDir: dir }), kubeVersions: ['one', 'two'] };
    const heard: string[] = [];
    const result = await runVersionsPlan(plan, {
      onVersionBegin: (v, i, total) => heard.push(`begin ${v} ${i + 1}/${total}`),
      onVersionEnd: (v) => heard.push(`end ${v.kubeVersion} ${v.result.scenarios.map((s) => s.verdict).join()}`),
      reporter: { onBegin: () => void heard.push('run begin') },
    });
    expect(heard).toEqual(['begin one 1/2', 'run begin', 'end one pass,fail', 'begin two 2/2', 'run begin', 'end two pass,fail']);
    expect(result.versions.map((v) => [v.kubeVersion, v.reportDir])).toEqual([
      ['one', join(dir, 'one')],
      ['two', join(dir, 'two')],
    ]);
    expect((await readdir(dir)).sort()).toEqual(['compare.html', 'compare.md', 'one', 'two']);
    expect(await readdir(join(dir, 'one'))).toContain('results.json');
    expect(result.comparison).toEqual({ html: join(dir, 'compare.html'), markdown: join(dir, 'compare.md') });
    const md = await readFile(join(dir, 'compare.md'), 'utf8');
    expect(md).toContain('| scenario | profile | local (one) | local (two) |');
    expect(md).toContain('| backend-idle-exit | mutant-hang-until-killed | fail (expected to fail) | fail (expected to fail) |');
  }, 90_000);

  it('a harness error in one version stops not the next: the others run and are compared, then the error is thrown', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-api-versions-error-'));
    dirs.push(dir);
    const plan = { ...planRun({ scenarios: ['backend-idle-exit'], reportDir: dir, reporters: ['json'] }), kubeVersions: ['one', 'two'] };
    const lines: string[] = [];
    let begins = 0;
    const pending = runVersionsPlan(plan, {
      log: (line) => lines.push(line),
      reporter: {
        onBegin: () => {
          if (++begins === 1) throw new Error('the first cluster broke');
        },
      },
    });
    await expect(pending).rejects.toThrow('the first cluster broke');
    expect(lines).toContain('zerodrop: Kubernetes one: the run stopped: the first cluster broke');
    expect((await readdir(dir)).sort()).toEqual(['compare.html', 'compare.md', 'two']);
    expect(await readFile(join(dir, 'compare.md'), 'utf8')).toContain('| scenario | profile | local (two) |');
  }, 60_000);

  it('an abort between two versions starts no further cluster', async () => {
    const controller = new AbortController();
    const plan = { ...planRun({ scenarios: ['backend-idle-exit'] }), kubeVersions: ['one', 'two'] };
    const begun: string[] = [];
    const pending = runVersionsPlan(plan, { signal: controller.signal, onVersionBegin: (v) => begun.push(v), onVersionEnd: () => controller.abort(new Error('interrupted')) });
    await expect(pending).rejects.toThrow('interrupted');
    expect(begun).toEqual(['one']);
  }, 60_000);

  it('a run held open has one cluster: openRun refuses several versions', async () => {
    const plan = { ...planRun({ scenarios: ['backend-idle-exit'] }), kubeVersions: ['v1.37.2', 'v1.36.3'] };
    await expect(openRun(plan)).rejects.toThrow(/^--kube-version v1\.37\.2,v1\.36\.3: a run held open has one cluster, so one version; run\(\) and `zerodrop run` run several in turn$/);
  });
});
