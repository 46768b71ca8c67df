// Release names of the Helm profiles, and the helm commands a run sends: there is no cluster here, so
// a stand-in `helm` on PATH records its argv.

import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RELEASE_NAME_MAX, releaseName } from '../../profiles/helm-charts.ts';
import { HELM_PROFILE_SPECS } from '../../profiles/helm-gateways.ts';
import { chartObjectsOutside, forgetHelmVersion, helmInstall, helmMajorProblem, helmUninstall, helmUninstallArgs, runHelm, type HelmRunner } from './helm.ts';
import { namespaceFor } from './manifests.ts';

/** DNS-1035 label: a lowercase letter first, then letters, digits and '-', ending in a letter or digit. */
const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

describe('Helm release names', () => {
  it('carry the run: two runs differ, the same run always gets the same name', () => {
    for (const spec of HELM_PROFILE_SPECS) {
      const a = releaseName(spec.chart, namespaceFor('c0ffee00'));
      expect(a).toBe(`${spec.chart.release}-c0ffee00`);
      expect(releaseName(spec.chart, namespaceFor('c0ffee00'))).toBe(a);
      expect(releaseName(spec.chart, namespaceFor('c0ffee01'))).not.toBe(a);
    }
  });

  it('are DNS-1035 labels of at most 53 characters, whatever the run id', () => {
    const ids = ['c0ffee00', 'a'.repeat(60), `${'b'.repeat(50)}-${'c'.repeat(20)}`, 'Run_ID.With Spaces', '--', '', '0123456789'];
    for (const spec of HELM_PROFILE_SPECS) {
      for (const id of ids) {
        const name = releaseName(spec.chart, namespaceFor(id));
        expect(name, `${spec.name} ${JSON.stringify(id)}`).toMatch(DNS_1035);
        expect(name.length, name).toBeLessThanOrEqual(RELEASE_NAME_MAX);
      }
    }
  });

  it('long or rewritten run ids keep distinct names (a hash of the whole namespace)', () => {
    const chart = { release: 'ingress-nginx' };
    const long1 = releaseName(chart, namespaceFor(`${'a'.repeat(60)}1`));
    const long2 = releaseName(chart, namespaceFor(`${'a'.repeat(60)}2`));
    expect(long1).not.toBe(long2);
    expect(long1).toMatch(/^ingress-nginx-a+-[0-9a-f]{8}$/);
    expect(long1).toHaveLength(RELEASE_NAME_MAX);
    // Two ids that read the same once made a label ("A" vs "a") are not one release.
    expect(releaseName(chart, 'zerodrop-Abc')).not.toBe(releaseName(chart, 'zerodrop-abc'));
    expect(releaseName(chart, 'zerodrop-abc')).toBe('ingress-nginx-abc');
  });
});

/** A stand-in helm's answer to `helm version --short`, before the rest of its script. */
const HELM_3 = 'if [ "$1" = version ]; then echo v3.20.2+g8fb76d6; exit 0; fi\n';

describe('helm commands of a run', () => {
  let dir = '';
  const savedPath = process.env['PATH'];
  beforeEach(() => forgetHelmVersion());
  afterEach(() => {
    process.env['PATH'] = savedPath;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installs and uninstalls the same per-run release in the run namespace', async () => {
    dir = mkdtempSync(join(tmpdir(), 'zerodrop-helm-test-'));
    const log = join(dir, 'argv.log');
    writeFileSync(join(dir, 'helm'), `#!/bin/sh\n${HELM_3}printf '%s\\n' "$*" >> '${log}'\n`);
    chmodSync(join(dir, 'helm'), 0o755);
    process.env['PATH'] = `${dir}:${savedPath ?? ''}`;

    const spec = HELM_PROFILE_SPECS.find((s) => s.name === 'envoy-gateway');
    if (!spec) throw new Error('catalog changed');
    const namespace = namespaceFor('c0ffee00');
    const release = releaseName(spec.chart, namespace);
    const uninstall = await helmInstall(spec, { release, namespace, kubeconfig: 'apiVersion: v1\n', values: {} });
    await uninstall();
    const [install, remove, ...more] = readFileSync(log, 'utf8').trimEnd().split('\n').map((line) => line.split(' '));
    expect(more).toEqual([]);
    expect(install?.slice(0, 4)).toEqual(['upgrade', '--install', 'eg-c0ffee00', spec.chart.chart]);
    expect(install?.[install.indexOf('--namespace') + 1]).toBe(namespace);
    expect(remove?.slice(0, 4)).toEqual(['uninstall', 'eg-c0ffee00', '--namespace', namespace]);
    expect(helmUninstallArgs({ release, namespace, kubeconfigFile: '/k' })).toEqual(['uninstall', 'eg-c0ffee00', '--namespace', namespace, '--kubeconfig', '/k', '--wait']);
  });

  it('a run\'s teardown and zerodrop clean uninstall with one command, each through a kubeconfig file that lives only for its call', async () => {
    const calls: { argv: string[]; kubeconfig: string | undefined }[] = [];
    const run: HelmRunner = async (argv) => {
      const file = argv[argv.indexOf('--kubeconfig') + 1] ?? '';
      calls.push({ argv, kubeconfig: existsSync(file) ? readFileSync(file, 'utf8') : undefined });
    };
    const spec = HELM_PROFILE_SPECS[0];
    if (!spec) throw new Error('catalog changed');
    const opts = { release: 'eg-c0ffee00', namespace: namespaceFor('c0ffee00'), kubeconfig: 'apiVersion: v1\nkind: Config\n' };
    const uninstall = await helmInstall(spec, { ...opts, values: {} }, run);
    await uninstall();
    await helmUninstall(opts, run);
    const files = calls.map((c) => c.argv[c.argv.indexOf('--kubeconfig') + 1] ?? '');
    expect(calls.map((c) => c.kubeconfig)).toEqual([opts.kubeconfig, opts.kubeconfig, opts.kubeconfig]);
    expect(files.filter((f) => existsSync(f))).toEqual([]);
    const [, teardown, clean] = calls;
    expect(teardown?.argv).toEqual(helmUninstallArgs({ ...opts, kubeconfigFile: files[1] ?? '' }));
    expect(clean?.argv).toEqual(helmUninstallArgs({ ...opts, kubeconfigFile: files[2] ?? '' }));
  });

  it('runs helm with its Secret storage, where zerodrop clean looks for releases, and fails with helm\'s own first line', async () => {
    dir = mkdtempSync(join(tmpdir(), 'zerodrop-helm-test-'));
    const log = join(dir, 'driver.log');
    writeFileSync(join(dir, 'helm'), `#!/bin/sh\n${HELM_3}printf '%s\\n' "$HELM_DRIVER" >> '${log}'\necho 'Error: uninstall: Release not loaded: eg-c0ffee00: release: not found' >&2\nexit 1\n`);
    chmodSync(join(dir, 'helm'), 0o755);
    process.env['PATH'] = `${dir}:${savedPath ?? ''}`;
    const savedDriver = process.env['HELM_DRIVER'];
    process.env['HELM_DRIVER'] = 'configmap';
    try {
      const failed = helmUninstall({ release: 'eg-c0ffee00', namespace: namespaceFor('c0ffee00'), kubeconfig: 'apiVersion: v1\n' });
      await expect(failed).rejects.toThrow(/^helm uninstall: Error: uninstall: Release not loaded: eg-c0ffee00: release: not found$/);
    } finally {
      if (savedDriver === undefined) delete process.env['HELM_DRIVER'];
      else process.env['HELM_DRIVER'] = savedDriver;
    }
    expect(readFileSync(log, 'utf8')).toBe('secret\n');
  });

  it('refuses a Helm that is not 3 before it changes anything, with the install hint, and says so once per call', async () => {
    expect(helmMajorProblem('v3.20.2+g8fb76d6')).toBeUndefined();
    expect(helmMajorProblem('v4.1.1+g5caf004')).toMatch(/zerodrop drives Helm 3, and `helm version --short` says "v4\.1\.1\+g5caf004": install Helm 3 \(https:\/\/helm\.sh/);
    expect(helmMajorProblem('')).toMatch(/drives Helm 3/);
    dir = mkdtempSync(join(tmpdir(), 'zerodrop-helm-test-'));
    const log = join(dir, 'argv.log');
    writeFileSync(join(dir, 'helm'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nif [ "$1" = version ]; then echo v4.1.1+g5caf004; fi\n`);
    chmodSync(join(dir, 'helm'), 0o755);
    process.env['PATH'] = `${dir}:${savedPath ?? ''}`;
    await expect(runHelm(['uninstall', 'eg-c0ffee00'], { timeoutMs: 10_000 })).rejects.toThrow(/drives Helm 3.*v4\.1\.1/);
    await expect(runHelm(['upgrade', '--install', 'eg-c0ffee00'], { timeoutMs: 10_000 })).rejects.toThrow(/drives Helm 3/);
    // Asked once; nothing else was run.
    expect(readFileSync(log, 'utf8')).toBe('version --short\n');
    // No helm at all: the same hint, not a bare ENOENT.
    forgetHelmVersion();
    process.env['PATH'] = join(dir, 'nothing-here');
    await expect(runHelm(['uninstall', 'eg-c0ffee00'], { timeoutMs: 10_000 })).rejects.toThrow(/^`helm version --short` failed \(.*ENOENT.*\): install Helm 3/);
  });

  it('renders a chart with the run\'s values (helm template, CRDs included) and names what it would create outside the namespace', async () => {
    const spec = HELM_PROFILE_SPECS.find((p) => p.name === 'ingress-nginx');
    if (!spec) throw new Error('catalog changed');
    const namespace = namespaceFor('c0ffee00');
    let argv: string[] = [];
    let values = '';
    const rendered = [
      'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ingress-nginx\n  namespace: zerodrop-c0ffee00',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: ingress-nginx-c0ffee00',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: ingress-nginx-c0ffee00',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: ingress-nginx\n  namespace: zerodrop-c0ffee00',
      'apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: zerodrop-c0ffee00',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: elsewhere\n  namespace: kube-system',
      '# an empty document\n',
    ].join('\n---\n');
    const outside = await chartObjectsOutside(spec, { release: 'ingress-nginx-c0ffee00', namespace, values: { controller: { scope: { enabled: true } } } }, async (args) => {
      argv = args;
      values = readFileSync(args[args.indexOf('--values') + 1] ?? '', 'utf8');
      return rendered;
    });
    expect(outside).toEqual(['ClusterRole ingress-nginx-c0ffee00', 'ClusterRoleBinding ingress-nginx-c0ffee00', 'IngressClass zerodrop-c0ffee00', 'ConfigMap kube-system/elsewhere']);
    expect(argv.slice(0, 3)).toEqual(['template', 'ingress-nginx-c0ffee00', 'ingress-nginx']);
    expect(argv).toEqual(expect.arrayContaining(['--repo', spec.chart.repo, '--version', spec.chart.version, '--namespace', namespace, '--include-crds']));
    expect(values).toMatch(/scope:\n\s+enabled: true/);
    // The values file lived only for the call.
    expect(existsSync(argv[argv.indexOf('--values') + 1] ?? '')).toBe(false);
  });
});
