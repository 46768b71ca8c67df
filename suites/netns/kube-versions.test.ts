// One `zerodrop run` on two Kubernetes releases: the selection runs on each in turn, one cluster at
// a time, each release's reports in <report-dir>/<release>/ (every report naming the release its API
// server reported), then compare.md and compare.html in <report-dir>, and nothing left behind.
// Skipped, with the reason in its title, where this machine cannot run both releases.

import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netnsMissing } from '../../src/providers/netns/prerequisites.ts';
import { controlPlanePrograms } from '../../src/providers/netns/control-plane-binary.ts';
import { entries, processesGone, startMarked, within } from '../helpers/marked-process.ts';
import { START_TIMEOUT_MS } from './context.ts';

const RELEASES = ['v1.37.2', 'v1.36.3'] as const;
const missing = (await Promise.all(RELEASES.map(async (v) => (await netnsMissing({ kubeVersion: v })).map((m) => `${v}: ${m}`)))).flat();
const skipReason = missing.length > 0 ? `netns suites skipped: ${missing.join('; ')}` : '';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zerodrop-netns-versions-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe.skipIf(skipReason !== '')(`one run on ${RELEASES.join(' and ')}${skipReason ? ` (${skipReason})` : ''}`, () => {
  // Each release built (or found) first, as the cluster suites build theirs in beforeAll: a cold
  // build takes minutes (.ci/run makes both before the suites), and the run's own limit below
  // measures the run, not a compiler.
  beforeAll(async () => {
    for (const version of RELEASES) await controlPlanePrograms({ version, log: (line) => console.log(`netns: ${line}`) });
  }, START_TIMEOUT_MS);

  it('runs the selection on each release in turn, reports each apart and compares them', async () => {
    const report = join(root, 'report');
    await using run = await startMarked(join(root, 'run'), ['src/cli/main.ts', 'run', '--provider', 'netns', '--kube-version', RELEASES.join(','), '--scenario', 'backend-delete-http', '--report-dir', report]);
    const { code } = await within(4 * 60_000, 'the run on two releases', run.exited);
    const output = run.output();
    // A pass, or inconclusive on a machine busy with other work: the verdict is not under test here.
    expect([0, 1], output).toContain(code);
    // One cluster at a time: the second starts after the first is gone.
    const ids = [...output.matchAll(/cluster ([0-9a-f]{8}): API server ready at \S+ \(Kubernetes (v[\d.]+),/g)].map((m) => [m[1], m[2]]);
    expect(ids.map(([, v]) => v), output).toEqual([...RELEASES]);
    expect(output.indexOf(`Kubernetes ${RELEASES[1]} (2 of 2)`)).toBeGreaterThan(output.indexOf(`Kubernetes ${RELEASES[0]}:`));

    expect((await readdir(report)).sort()).toEqual(['compare.html', 'compare.md', ...RELEASES].sort());
    for (const release of RELEASES) {
      const dir = join(report, release);
      const results = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')) as { kubernetesVersion?: string; scenarios: { id: string }[] };
      expect(results.kubernetesVersion).toBe(release);
      expect(results.scenarios.map((s) => s.id)).toEqual(['backend-delete-http']);
      expect(await readFile(join(dir, 'conformance.yaml'), 'utf8')).toContain(`\nprovider: netns\nkubernetesVersion: ${release}\n`);
      expect(await readFile(join(dir, 'junit.xml'), 'utf8')).toContain(`<property name="kubernetesVersion" value="${release}"/>`);
    }
    const md = await readFile(join(report, 'compare.md'), 'utf8');
    expect(md).toContain(`| scenario | profile | Kubernetes ${RELEASES[0]} | Kubernetes ${RELEASES[1]} |`);
    expect(md).toMatch(/\| backend-delete-http \| reference \| (pass|inconclusive) \| (pass|inconclusive) \|/);

    // Nothing left: processes, the clusters' namespaces, temporary directories, state records.
    expect(await processesGone(run.env.mark, run.env.tmp)).toEqual([]);
    const netns = (await execa('ip', ['netns', 'list'])).stdout.split('\n');
    expect(netns.filter((n) => ids.some(([id]) => n.startsWith(`zdk-${id}-`)))).toEqual([]);
    expect((await entries(run.env.tmp)).filter((e) => e.startsWith('zerodrop-'))).toEqual([]);
    expect(await entries(join(run.env.stateDir, 'clusters'))).toEqual([]);
  }, 5 * 60_000);
});
