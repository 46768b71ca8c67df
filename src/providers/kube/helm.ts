// Installs a Helm profile's chart into the run's namespace with the helm CLI (execa), and removes
// it. The values go through a file, not --set, so that nested drain settings arrive exactly as
// written in the profile definition (src/profiles/helm-gateways.ts for the built-in ones).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { parseAllDocuments, stringify } from 'yaml';
import type { HelmProfileSpec } from '../../profiles/helm-charts.ts';

/** The chart, where it comes from and its version (a local chart has none to ask for). */
function chartArgs(spec: Pick<HelmProfileSpec, 'chart'>): string[] {
  return [spec.chart.chart, ...(spec.chart.repo ? ['--repo', spec.chart.repo] : []), ...(spec.chart.version !== undefined ? ['--version', spec.chart.version] : [])];
}

/** The profile's own values files first, then the run's values (the workload label, replicas, ports), which win. */
function valuesArgs(spec: Pick<HelmProfileSpec, 'chart'>, runValues: string): string[] {
  return [...(spec.chart.valuesFiles ?? []), runValues].flatMap((file) => ['--values', file]);
}

/**
 * argv of `helm upgrade --install` for a profile; `--wait` returns once the release's pods are ready.
 * `release` is the run's own (releaseName in src/profiles/helm-charts.ts).
 */
export function helmInstallArgs(spec: Pick<HelmProfileSpec, 'chart'>, opts: { release: string; namespace: string; kubeconfigFile: string; valuesFile: string; timeoutSeconds?: number }): string[] {
  return [
    'upgrade',
    '--install',
    opts.release,
    ...chartArgs(spec),
    '--namespace',
    opts.namespace,
    '--kubeconfig',
    opts.kubeconfigFile,
    ...valuesArgs(spec, opts.valuesFile),
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

/** The helm CLI, returning what it printed on stdout (`helm template`). */
export type HelmOutput = (args: string[], opts: { timeoutMs: number }) => Promise<string>;

/**
 * The helm CLI at `binary`: `helm` on PATH (kind, k3s, a cluster), or the program a provider brings
 * (netns: the build of helm/ in the cache). HELM_DRIVER is pinned to `secret`, Helm 3's default
 * storage, because that is where `zerodrop clean` looks for the releases of a crashed run
 * (src/state/clean-clusters.ts): a user's HELM_DRIVER=configmap would otherwise hide them from it.
 */
export function helmCli(binary = 'helm'): { run: HelmRunner; output: HelmOutput } {
  const output: HelmOutput = async (args, { timeoutMs }) => {
    await assertHelm3(binary);
    try {
      return (await execa(binary, args, { timeout: timeoutMs, env: { HELM_DRIVER: 'secret' } })).stdout;
    } catch (error) {
      const stderr = (error as { stderr?: unknown }).stderr;
      const said = typeof stderr === 'string' ? stderr.trim() : '';
      throw new Error(`helm ${args[0] ?? ''}: ${said || (error as Error).message}`, { cause: error });
    }
  };
  return {
    run: async (args, opts) => {
      await output(args, opts);
    },
    output,
  };
}

/** `helm` on PATH. */
export const { run: runHelm, output: helmOutput } = helmCli();

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

/**
 * Refuses any Helm but 3. Helm 4 changed what `--wait` means (HIP-0022, https://helm.sh/community/hips/hip-0022:
 * the kstatus watcher waits for custom resources and, on uninstall, for the resources to be gone),
 * and the argv above and `zerodrop clean`'s reading of release Secrets were only ever checked with
 * Helm 3. The nightly pins Helm 3 (azure/setup-helm `version`).
 */
export function helmMajorProblem(versionOutput: string): string | undefined {
  // `helm version --short`: "v3.20.2+g8fb76d6" (Helm 3 and 4 print the same shape).
  const major = /^v?(\d+)\./.exec(versionOutput.trim())?.[1];
  if (major === '3') return undefined;
  return `zerodrop drives Helm 3, and \`helm version --short\` says ${JSON.stringify(versionOutput.trim())}: ${HELM_3_HINT}`;
}

export const HELM_3_HINT = 'install Helm 3 (https://helm.sh/docs/intro/install/; e.g. the v3.20.2 release binary) and put it first on PATH';

const helm3Checked = new Map<string, Promise<void>>();

/** Asks `<binary> version --short` once per process; a Helm that is not 3 rejects every call of it. */
export function assertHelm3(binary = 'helm'): Promise<void> {
  let checked = helm3Checked.get(binary);
  if (!checked) {
    checked = (async () => {
      let stdout: string;
      try {
        ({ stdout } = await execa(binary, ['version', '--short'], { timeout: 30_000 }));
      } catch (error) {
        throw new Error(`\`helm version --short\` failed (${(error as Error).message.split('\n')[0] ?? ''}): ${HELM_3_HINT}`, { cause: error });
      }
      const problem = helmMajorProblem(stdout);
      if (problem) throw new Error(problem);
    })();
    helm3Checked.set(binary, checked);
  }
  return checked;
}

/** Forgets the answers (tests put another stand-in helm on PATH). */
export function forgetHelmVersion(): void {
  helm3Checked.clear();
}

/**
 * Kinds Kubernetes and the profiles' charts create outside any namespace. A chart's objects of
 * these kinds, or in another namespace, are what a namespace-only account cannot create, and what
 * "stays inside its namespaces" rules out.
 */
export const CLUSTER_SCOPED_CHART_KINDS: ReadonlySet<string> = new Set([
  'Namespace', 'Node', 'PersistentVolume', 'StorageClass', 'PriorityClass', 'RuntimeClass', 'CSIDriver',
  'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'APIService',
  'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding',
  'IngressClass', 'GatewayClass', 'Dataplane',
]);

/**
 * What `helm template` of the chart (with the run's values, CRDs included) would create outside
 * `namespace`: cluster-scoped objects, and objects another namespace holds. Rendering needs no
 * cluster, so a provider that must stay in its namespace can refuse before creating anything.
 */
export async function chartObjectsOutside(
  spec: HelmProfileSpec,
  opts: { release: string; namespace: string; values: Record<string, unknown> },
  run: HelmOutput = helmOutput,
): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-helm-'));
  let rendered: string;
  try {
    const valuesFile = join(dir, 'values.yaml');
    await writeFile(valuesFile, stringify(opts.values));
    rendered = await run(
      ['template', opts.release, ...chartArgs(spec), '--namespace', opts.namespace, ...valuesArgs(spec, valuesFile), '--include-crds'],
      { timeoutMs: 300_000 },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const outside: string[] = [];
  for (const doc of parseAllDocuments(rendered)) {
    const o = doc.toJS() as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
    if (!o || typeof o.kind !== 'string') continue;
    const name = typeof o.metadata?.name === 'string' ? o.metadata.name : '?';
    if (CLUSTER_SCOPED_CHART_KINDS.has(o.kind)) outside.push(`${o.kind} ${name}`);
    else if (typeof o.metadata?.namespace === 'string' && o.metadata.namespace !== opts.namespace) outside.push(`${o.kind} ${o.metadata.namespace}/${name}`);
  }
  return outside;
}
