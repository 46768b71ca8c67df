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
export function helmInstallArgs(spec: HelmProfileSpec, opts: { release: string; namespace: string; kubeconfigFile: string; valuesFile: string; timeoutSeconds?: number }): string[] {
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
 * Installs the chart as the release `release` with the run's values (HelmProfileSpec.values of its
 * ChartContext); returns the function that uninstalls that same release.
 */
export async function helmInstall(
  spec: HelmProfileSpec,
  opts: { release: string; namespace: string; kubeconfig: string; values: Record<string, unknown>; timeoutSeconds?: number },
): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-helm-'));
  const kubeconfigFile = join(dir, 'kubeconfig');
  const valuesFile = join(dir, 'values.yaml');
  await writeFile(kubeconfigFile, opts.kubeconfig, { mode: 0o600 });
  await writeFile(valuesFile, stringify(opts.values));
  try {
    await execa('helm', helmInstallArgs(spec, { release: opts.release, namespace: opts.namespace, kubeconfigFile, valuesFile, ...(opts.timeoutSeconds ? { timeoutSeconds: opts.timeoutSeconds } : {}) }), {
      timeout: ((opts.timeoutSeconds ?? 600) + 60) * 1000,
    });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return async () => {
    try {
      await execa('helm', helmUninstallArgs({ release: opts.release, namespace: opts.namespace, kubeconfigFile }), { timeout: 300_000 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}
