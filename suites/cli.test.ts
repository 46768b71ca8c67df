// The command line as a user runs it: a real `zerodrop` process, its exit codes and its files.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { startRunUntil } from './helpers/interrupted-run.ts';
import { leftoverProcesses, listeningAddressesOf, listeningSockets } from './helpers/leftovers.ts';

const run = promisify(execFile);
const CLI = ['src/cli/main.ts'];

async function zerodrop(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env }, timeout: 90_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-cli-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('zerodrop run', () => {
  it('exits 0 and writes a passing results.json for backend-delete-http', async () => {
    const dir = await tempDir();
    const r = await zerodrop(['run', '--scenario', 'backend-delete-http', '--report-dir', dir]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/PASS backend-delete-http \[reference\]/);
    const results = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8'));
    expect(results.tool.name).toBe('zerodrop');
    expect(results.provider).toBe('local');
    const [scenario] = results.scenarios;
    expect(scenario).toMatchObject({ id: 'backend-delete-http', profile: 'reference', verdict: 'pass' });
    expect(scenario.assertions.map((a: { name: string }) => a.name)).toContain('noFailedRequests');
    expect(scenario.counts.requests).toBeGreaterThan(0);
  });

  it('exits 1 against mutant-exit-on-sigterm and says which assertion failed', async () => {
    const dir = await tempDir();
    const r = await zerodrop(['run', '--scenario', 'backend-delete-http', '--profile', 'mutant-exit-on-sigterm', '--report-dir', dir]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/FAIL backend-delete-http \[mutant-exit-on-sigterm\]/);
    expect(r.stdout).toMatch(/fail: noFailedRequests: /);
  });

  it.each([
    [['run', '--scenario', 'no-such-scenario'], /--scenario no-such-scenario: unknown scenario; known: backend-delete-http/],
    [['run', '--profile', 'nginx-typo'], /--profile nginx-typo: unknown profile/],
    [['run', '--provider', 'minikube'], /--provider minikube: unknown provider/],
    [['run', '--set', 'graceSeconds'], /--set graceSeconds: expected key=value/],
    [['run', '--set', 'graceSeconds=soon'], /--set graceSeconds=soon: graceSeconds must be a whole number of seconds from 0 to 3600/],
    [['run', '--scenario', 'backend-idle-exit', '--set', 'connections=5'], /--set connections: no selected scenario has this option/],
    [['run', '--bogus'], /run: unknown flag --bogus; flags: --provider/],
    [['launch'], /unknown command "launch"/],
  ])('rejects %j with exit code 2, naming the problem, before starting anything', async (args, message) => {
    const dir = await tempDir();
    const r = await zerodrop([...args, '--report-dir', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(await readdir(dir)).toEqual([]);
  });

  it('ends once its verdicts are written, even when a reporter module leaves a timer running', async () => {
    const dir = await tempDir();
    const reporter = join(dir, 'leaky-reporter.mjs');
    // A user's reporter that forgets its interval: the command has done its work and must still end.
    await writeFile(reporter, 'export default () => ({ onEnd: () => { setInterval(() => {}, 1000); } });\n');
    const started = performance.now();
    const r = await zerodrop(['run', '--scenario', 'backend-idle-exit', '--reporter', 'json', '--reporter', reporter, '--report-dir', join(dir, 'reports')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/PASS backend-idle-exit \[reference\]/);
    // Well inside zerodrop()'s 90 s limit, which would otherwise end it (with no exit code of its own).
    expect(performance.now() - started).toBeLessThan(60_000);
  });

  it('leaves no process and no listening socket behind when interrupted with Ctrl-C mid-run', async () => {
    const mark = randomUUID();
    const { child, reached, exited } = startRunUntil(['run', '--scenario', 'backend-delete-http', '--report-dir', await tempDir()], { ZERODROP_TEST_MARK: mark }, 'step delete');
    await reached;
    // The harness and its pods are really running and listening (the pods inherit the mark).
    const held = await listeningAddressesOf(await leftoverProcesses(mark));
    expect(held.length).toBeGreaterThan(1);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(await leftoverProcesses(mark)).toEqual([]);
    const stillListening = new Set((await listeningSockets()).values());
    expect(held.filter((address) => stillListening.has(address))).toEqual([]);
  });
});

describe('zerodrop list', () => {
  it('prints the catalog with seeds and the profiles', async () => {
    const r = await zerodrop(['list']);
    expect(r.code).toBe(0);
    for (const id of ['backend-delete-http', 'backend-rollout-http', 'backend-sigterm-keeps-accepting', 'backend-idle-exit', 'backend-long-request', 'force-delete']) {
      expect(r.stdout).toContain(id);
    }
    for (const profile of ['reference', 'mutant-exit-on-sigterm', 'mutant-refuse-after-sigterm', 'mutant-hang-until-killed']) {
      expect(r.stdout).toContain(profile);
    }
    // Where a broken profile passes by design, the catalog says so under the scenario, with why.
    const idleExit = r.stdout.slice(r.stdout.indexOf('  backend-idle-exit'), r.stdout.indexOf('  backend-long-request'));
    expect(idleExit).toMatch(/passes mutant-exit-on-sigterm by design: an idle pod has nothing to drain/);
    expect(idleExit).not.toMatch(/passes mutant-hang-until-killed/);
    // The ablations, each with the scenarios that must catch it, or said to be a gap of the catalog.
    expect(r.stdout).toMatch(/\n {2}nginx-without-keepalive_time +fails gateway-delete-http, gateway-rollout-http, gateway-scale-down\n/);
    expect(r.stdout).toMatch(/\n {2}haproxy-without-http-server-close +fails gateway-backend-rollout-http\n/);
    expect(r.stdout).toMatch(/\n {2}reference-without-prestop +fails gateway-http2-goaway\n/);
  });
  it('--scenario ID --manifests prints what the scenario deploys on a cluster, as YAML; exits 2 without --scenario', async () => {
    const r = await zerodrop(['list', '--scenario', 'backend-delete-http', '--manifests']);
    expect(r.code, r.stderr).toBe(0);
    expect([...r.stdout.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1])).toEqual(['Namespace', 'ConfigMap', 'Role', 'RoleBinding', 'Service', 'Deployment', 'PodDisruptionBudget']);
    const bad = await zerodrop(['list', '--manifests']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--manifests needs --scenario ID/);
  });
});
