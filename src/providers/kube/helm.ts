// Installs a Helm profile's chart into the run's namespace with the helm CLI (execa), and removes
// it. The values go through a file, not --set, so that nested drain settings arrive exactly as
// written in src/profiles/helm-charts.ts.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { stringify } from 'yaml';
import type { HelmProfileSpec } from '../../profiles/helm-charts.ts';

/**
 * argv of `helm upgrade --install` for a profile; `--wait` returns once the release's pods are ready.
 * `release` is the run's own (releaseName in src/profiles/helm-charts.ts).
 */
export function helmInstallArgs(spec: Pick<HelmProfileSpec, 'chart'>, opts: { release: string; namespace: string; kubeconfigFile: string; valuesFile: string; timeoutSeconds?: number }): string[] {
  return [
    'upgrade',
    '--install',
    opts.release,
    spec.chart.chart,
    ...(spec.chart.repo ? ['--repo', spec.chart.repo] : []),
    '--version',
    spec.chart.version,
    '--namespace',
    opts.namespace,
    '--kubeconfig',
    opts.kubeconfigFile,
    '--values',
    opts.valuesFile,
    '--wait',
    '--timeout',
    `${opts.timeoutSeconds ?? 600}s`,
  ];
}

export function helmUninstallArgs(opts: { release: string; namespace: string; kubeconfigFile: string }): string[] {
  return ['uninstall', opts.release, '--namespace', opts.namespace, '--kubeconfig', opts.kubeconfigFile, '--wait'];
}

/**
 * Runs the helm CLI with `args`; rejects with an error whose first line is helm's own. A stand-in in
 * tests (no helm binary, no cluster there).
 */
export type HelmRunner = (args: string[], opts: { timeoutMs: number }) => Promise<void>;

/**
 * The helm CLI. HELM_DRIVER is pinned to `secret`, Helm 3's default storage, because that is where
 * `zerodrop clean` looks for the releases of a crashed run (src/state/clean-clusters.ts): a user's
 * HELM_DRIVER=configmap would otherwise hide them from it.
 */
export const runHelm: HelmRunner = async (args, { timeoutMs }) => {
  try {
    await execa('helm', args, { timeout: timeoutMs, env: { HELM_DRIVER: 'secret' } });
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr;
    const said = typeof stderr === 'string' ? stderr.trim() : '';
    throw new Error(`helm ${args[0] ?? ''}: ${said || (error as Error).message}`, { cause: error });
  }
};

/** Writes the kubeconfig to a 0600 file in a fresh `zerodrop-helm-` temp dir for `fn`, and removes the dir after. */
async function withKubeconfigFile<T>(kubeconfig: string, fn: (kubeconfigFile: string, dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-helm-'));
  try {
    const kubeconfigFile = join(dir, 'kubeconfig');
    await writeFile(kubeconfigFile, kubeconfig, { mode: 0o600 });
    return await fn(kubeconfigFile, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Installs the chart as the release `release` with the run's values (HelmProfileSpec.values of its
 * ChartContext); returns the function that uninstalls that same release.
 */
export async function helmInstall(
  spec: HelmProfileSpec,
  opts: { release: string; namespace: string; kubeconfig: string; values: Record<string, unknown>; timeoutSeconds?: number },
  run: HelmRunner = runHelm,
): Promise<() => Promise<void>> {
  return helmInstallChart(spec, opts, run);
}

/** helmInstall for any pinned chart (a mesh's charts, src/profiles/meshes.ts), not only a profile's. */
export async function helmInstallChart(
  spec: Pick<HelmProfileSpec, 'chart'>,
  opts: { release: string; namespace: string; kubeconfig: string; values: Record<string, unknown>; timeoutSeconds?: number },
  run: HelmRunner = runHelm,
): Promise<() => Promise<void>> {
  await withKubeconfigFile(opts.kubeconfig, async (kubeconfigFile, dir) => {
    const valuesFile = join(dir, 'values.yaml');
    await writeFile(valuesFile, stringify(opts.values));
    const args = helmInstallArgs(spec, { release: opts.release, namespace: opts.namespace, kubeconfigFile, valuesFile, ...(opts.timeoutSeconds ? { timeoutSeconds: opts.timeoutSeconds } : {}) });
    await run(args, { timeoutMs: ((opts.timeoutSeconds ?? 600) + 60) * 1000 });
  });
  return () => helmUninstall({ release: opts.release, namespace: opts.namespace, kubeconfig: opts.kubeconfig }, run);
}

/**
 * `helm uninstall --wait` of one release: what a run's teardown does, and what `zerodrop clean` does
 * for the releases a crashed run left. `kubeconfig` is the kubeconfig's text (KubeConfig.exportConfig).
 */
export async function helmUninstall(opts: { release: string; namespace: string; kubeconfig: string }, run: HelmRunner = runHelm): Promise<void> {
  await withKubeconfigFile(opts.kubeconfig, (kubeconfigFile) => run(helmUninstallArgs({ release: opts.release, namespace: opts.namespace, kubeconfigFile }), { timeoutMs: 300_000 }));
}
