// globalSetup of the cluster suites (`npm run test:kind`, `npm run test:netns`): one cluster for every
// test file, handed to the files through provide/inject, so that the same files run on either.
//
// ZERODROP_CLUSTER_PROVIDER chooses it: `kind` (created, or reused by name; vitest.kind.config.ts's
// default) or `netns` (a real cluster of network namespaces on this machine, see
// docs/netns-cluster.md; vitest.netns.config.ts's default). `auto` takes kind where it can run, else
// netns where that can. Without the chosen one nothing is created: every test is skipped and one
// line says what is missing.
//
// kind: ZERODROP_KIND_CLUSTER (default zerodrop) names the cluster; ZERODROP_KUBE_VERSION picks the
// node image (default 1.36). netns: ZERODROP_NETNS_BLOCK picks its /16, ZERODROP_KUBE_VERSION a
// release kubernetes/ pins (or its minor; default kubernetes/go.mod's). ZERODROP_KEEP_CLUSTER=1
// keeps a kind cluster this run created (a netns cluster lives only as long as this process).

import type { TestProject } from 'vitest/node';
import { ensureKindCluster, PUBLISHED_NODE_PORTS } from '../../../src/providers/kind/kind.ts';
import { missingPrerequisites } from '../../../src/providers/index.ts';
import { KubeClient } from '../../../src/providers/kube/client.ts';
import type { Exposure } from '../../../src/providers/kube/kube-provider.ts';
import { keepsContainerStopSignal, kindKeepsContainerStopSignal } from '../../../src/providers/kube/stop-signal-probe.ts';

export type SuiteClusterProvider = 'kind' | 'netns';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Which provider made the cluster the files share. */
    clusterProvider: SuiteClusterProvider;
    /** Why the cluster suites cannot run here; empty when they can. */
    clusterSkipReason: string;
    clusterKubeconfig: string;
    /** How the harness reaches the cluster's Services (JSON of an Exposure). */
    clusterExposure: string;
    /** The cluster was created by this run: node operations (cordon, drain) are allowed on it. */
    clusterCreated: boolean;
    /** The cluster keeps lifecycle.stopSignal: created by this run, or a reused one that answered so. */
    clusterStopSignals: boolean;
  }
}

/** The provider asked for, or the first of kind and netns this machine can run, with why not. */
async function chooseProvider(log: (line: string) => void): Promise<{ provider: SuiteClusterProvider; missing: string[] }> {
  const asked = process.env['ZERODROP_CLUSTER_PROVIDER'] || 'kind';
  if (asked !== 'auto' && asked !== 'kind' && asked !== 'netns') {
    return { provider: 'kind', missing: [`ZERODROP_CLUSTER_PROVIDER=${asked}: the cluster suites run on kind, netns or auto`] };
  }
  if (asked === 'kind' || asked === 'netns') return { provider: asked, missing: await missingPrerequisites({ name: asked }, log) };
  const kind = await missingPrerequisites({ name: 'kind' }, log);
  if (kind.length === 0) return { provider: 'kind', missing: [] };
  const netns = await missingPrerequisites({ name: 'netns' }, log);
  if (netns.length === 0) {
    log(`kind cannot run here (${kind.join('; ')}): using a netns cluster`);
    return { provider: 'netns', missing: [] };
  }
  return { provider: 'kind', missing: [...kind, ...netns.map((m) => `netns: ${m}`)] };
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const log = (line: string) => console.log(`zerodrop cluster suites: ${line}`);
  const { provider, missing } = await chooseProvider((line) => log(`warning: ${line}`));
  project.provide('clusterProvider', provider);
  if (missing.length > 0) {
    const reason = `${provider} suites skipped: ${missing.join('; ')}`;
    log(reason);
    project.provide('clusterSkipReason', reason);
    project.provide('clusterKubeconfig', '');
    project.provide('clusterExposure', '{}');
    project.provide('clusterCreated', false);
    project.provide('clusterStopSignals', false);
    return undefined;
  }
  project.provide('clusterSkipReason', '');
  if (provider === 'netns') {
    const { startNetnsCluster, netnsExposure } = await import('../../../src/providers/netns/cluster.ts');
    const { readFile } = await import('node:fs/promises');
    const cluster = await startNetnsCluster({
      ...(process.env['ZERODROP_NETNS_BLOCK'] ? { block: process.env['ZERODROP_NETNS_BLOCK'] } : {}),
      ...(process.env['ZERODROP_KUBE_VERSION'] ? { kubeVersion: process.env['ZERODROP_KUBE_VERSION'] } : {}),
      log: (line) => log(`netns: ${line}`),
    });
    const exposure: Exposure = netnsExposure(cluster);
    project.provide('clusterKubeconfig', await readFile(cluster.kubeconfigPath, 'utf8'));
    project.provide('clusterExposure', JSON.stringify(exposure));
    project.provide('clusterCreated', true);
    project.provide('clusterStopSignals', await keepsContainerStopSignal(new KubeClient(cluster.kubeConfig()), log));
    return async () => {
      await cluster[Symbol.asyncDispose]();
    };
  }
  const cluster = await ensureKindCluster({
    name: process.env['ZERODROP_KIND_CLUSTER'] ?? 'zerodrop',
    ...(process.env['ZERODROP_KUBE_VERSION'] ? { kubeVersion: process.env['ZERODROP_KUBE_VERSION'] } : {}),
    log,
  });
  const exposure: Exposure = { kind: 'nodePort', host: '127.0.0.1', ports: [...PUBLISHED_NODE_PORTS] };
  project.provide('clusterKubeconfig', cluster.kubeconfig);
  project.provide('clusterExposure', JSON.stringify(exposure));
  project.provide('clusterCreated', cluster.created);
  project.provide('clusterStopSignals', await kindKeepsContainerStopSignal(cluster, new KubeClient(cluster.kubeConfig()), log));
  return async () => {
    if (process.env['ZERODROP_KEEP_CLUSTER'] === '1') return;
    await cluster.delete();
  };
}
