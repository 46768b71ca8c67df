// One netns cluster for a test file: started in beforeAll (the control plane built first if this
// machine has no build of the pinned release), removed in afterAll. Where the machine cannot run one
// (not root, no Go, no nft) every test is skipped and its title says why. ZERODROP_KUBE_VERSION
// picks another release kubernetes/ pins (v1.36.3, or its minor), as it picks kind's node image.

import { execa } from 'execa';
import { afterAll, beforeAll, inject } from 'vitest';
import { startNetnsCluster, type NetnsCluster } from '../../src/providers/netns/cluster.ts';
import { netnsMissing } from '../../src/providers/netns/prerequisites.ts';
import { netnsSession } from '../../src/providers/kube-session.ts';
import { KubeClient } from '../../src/providers/kube/client.ts';
import type { ProviderSession } from '../../src/providers/index.ts';
import type { ClusterSystemSettings } from '../../src/providers/cluster-system.ts';
import type { Profile } from '../../src/profiles/profile.ts';
import { dropResult } from '../../src/report/collect.ts';
import type { ScenarioResult } from '../../src/report/results.ts';
import { runMatrix } from '../../src/runner/run-matrix.ts';
import type { OptionValues } from '../../src/model/verdict.ts';
import { catalog } from '../../src/scenarios/index.ts';

const kubeVersion = process.env['ZERODROP_KUBE_VERSION'] || undefined;
const missing = await netnsMissing(kubeVersion ? { kubeVersion } : {});
export const skipReason = missing.length > 0 ? `netns cluster suites skipped: ${missing.join('; ')}` : '';

export function title(name: string): string {
  return skipReason ? `${name} (${skipReason})` : name;
}

/** A cold build of upstream's modules takes 10-20 minutes on two cores (.ci/run builds it first). */
/**
 * A failure's phase somewhere in the shutdown of a pod whose name starts with `prefix`: which step
 * of it (after the delete, in its preStop, after its stop signal...) depends on what the node agent
 * showed and when the request met it.
 */
export function shutdownPhaseOf(prefix: string): RegExp {
  return new RegExp(`phase "[^"]*(?:after delete|terminating \\(preStop\\)|after preStop|after SIGTERM|after exit|after SIGKILL) of ${prefix}\\S+`);
}

export const START_TIMEOUT_MS = 40 * 60_000;

export interface NetnsSuiteCluster {
  get(): NetnsCluster;
  client(): KubeClient;
  session(system?: ClusterSystemSettings): Promise<ProviderSession>;
  kubectl(args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<string>;
  /** One scenario x profile as `--provider netns` runs it, on a session of its own; the result goes into the suite's report. */
  runPair(scenarioId: string, profile: Profile, opts?: { system?: ClusterSystemSettings; overrides?: OptionValues }): Promise<ScenarioResult>;
}

/** Starts the file's cluster in beforeAll and removes it in afterAll; `get()` inside tests. */
export function useNetnsCluster(nodes = 2): NetnsSuiteCluster {
  let cluster: NetnsCluster | undefined;
  beforeAll(async () => {
    if (skipReason) return;
    const log = (line: string) => console.log(`netns: ${line}`);
    cluster = await startNetnsCluster({ nodes, log, ...(kubeVersion ? { kubeVersion } : {}) });
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  }, 60_000);
  const get = (): NetnsCluster => {
    if (!cluster) throw new Error('the netns cluster did not start');
    return cluster;
  };
  const client = (): KubeClient => new KubeClient(get().kubeConfig());
  // As `--provider netns` opens it (the charts it installs, its stop-signal answer, the GatewayClass
  // a run names); the cluster outlives it.
  const session = (system?: ClusterSystemSettings) => netnsSession(get(), (line) => console.log(`netns: ${line}`), system ? { system } : {});
  return {
    get,
    client,
    session,
    runPair: async (scenarioId, profile, { system, overrides = {} } = {}) => {
      const def = catalog.find((d) => d.id === scenarioId);
      if (!def) throw new Error(`no scenario ${scenarioId}`);
      await using s = await session(system);
      const matrix = await runMatrix({ provider: 'netns', session: s, scenarios: [def], profiles: [profile], overrides, nightly: false, signal: AbortSignal.timeout(8 * 60_000) });
      const [result] = matrix.scenarios;
      if (!result) throw new Error(`${scenarioId} x ${profile.name} gave no result`);
      await dropResult(inject('zerodropCollectDir'), result, 'netns');
      return result;
    },
    kubectl: async (args, opts = {}) => {
      const [file, ...pre] = get().kubectl;
      const { stdout } = await execa(file!, [...pre, ...args], { ...(opts.input !== undefined ? { input: opts.input } : {}), timeout: opts.timeoutMs ?? 120_000 });
      return stdout;
    },
  };
}
