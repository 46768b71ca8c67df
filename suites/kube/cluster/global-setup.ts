// globalSetup of `npm run test:kind`: one kind cluster for every test file (created, or reused by
// name), handed to the files through provide/inject. Without Docker or kind nothing is created:
// every test is skipped and one line says what is missing.
//
// ZERODROP_KIND_CLUSTER (default zerodrop) names the cluster; ZERODROP_KUBE_VERSION picks the node
// image (default 1.36); ZERODROP_KEEP_CLUSTER=1 keeps a cluster this run created.

import type { TestProject } from 'vitest/node';
import { ensureKindCluster } from '../../../src/providers/kind/kind.ts';
import { missingPrerequisites } from '../../../src/providers/index.ts';
import { KubeClient } from '../../../src/providers/kube/client.ts';
import { kindKeepsContainerStopSignal } from '../../../src/providers/kube/stop-signal-probe.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why the cluster suites cannot run here; empty when they can. */
    kindSkipReason: string;
    kindKubeconfig: string;
    /** The cluster was created by this run: node operations (cordon, drain) are allowed on it. */
    kindCreated: boolean;
    /** The cluster keeps lifecycle.stopSignal: created by this run, or a reused one that answered so. */
    kindStopSignals: boolean;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const missing = await missingPrerequisites({ name: 'kind' }, (line) => console.log(`zerodrop test:kind: warning: ${line}`));
  if (missing.length > 0) {
    const reason = `kind suites skipped: ${missing.join('; ')}`;
    console.log(`zerodrop test:kind: ${reason}`);
    project.provide('kindSkipReason', reason);
    project.provide('kindKubeconfig', '');
    project.provide('kindCreated', false);
    project.provide('kindStopSignals', false);
    return undefined;
  }
  const log = (line: string) => console.log(`zerodrop test:kind: ${line}`);
  const cluster = await ensureKindCluster({
    name: process.env['ZERODROP_KIND_CLUSTER'] ?? 'zerodrop',
    ...(process.env['ZERODROP_KUBE_VERSION'] ? { kubeVersion: process.env['ZERODROP_KUBE_VERSION'] } : {}),
    log,
  });
  project.provide('kindSkipReason', '');
  project.provide('kindKubeconfig', cluster.kubeconfig);
  project.provide('kindCreated', cluster.created);
  project.provide('kindStopSignals', await kindKeepsContainerStopSignal(cluster, new KubeClient(cluster.kubeConfig()), log));
  return async () => {
    if (process.env['ZERODROP_KEEP_CLUSTER'] === '1') return;
    await cluster.delete();
  };
}
