// Whether a cluster keeps a container's `lifecycle.stopSignal` (stop-signal.ts): asked of the API
// server itself with a dry-run create of a Pod that states one, since an API server whose
// ContainerStopSignals gate is off drops the field from what it would store instead of refusing it
// (dropContainerStopSignals in kubernetes/kubernetes pkg/api/pod/util.go). Nothing is created.

import { NODE_IMAGE } from './manifests.ts';
import type { KubeClient } from './client.ts';

/** The namespace every cluster has, where a dry run needs no namespace of the run's yet. */
const PROBE_NAMESPACE = 'default';

export async function keepsContainerStopSignal(client: KubeClient, log: (line: string) => void = () => undefined): Promise<boolean> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'zerodrop-stop-signal-probe-' },
    spec: { os: { name: 'linux' }, containers: [{ name: 'probe', image: NODE_IMAGE, lifecycle: { stopSignal: 'SIGUSR1' } }] },
  };
  try {
    const { body } = await client.request<{ spec?: { containers?: { lifecycle?: { stopSignal?: string } }[] } }>('POST', `/api/v1/namespaces/${PROBE_NAMESPACE}/pods`, {
      query: { dryRun: 'All' },
      body: pod,
    });
    const kept = body.spec?.containers?.[0]?.lifecycle?.stopSignal === 'SIGUSR1';
    if (!kept) log('the cluster drops lifecycle.stopSignal (feature gate ContainerStopSignals off): profiles that need a stop signal other than their image\'s are skipped');
    return kept;
  } catch (error) {
    log(`could not check whether the cluster keeps lifecycle.stopSignal (${(error as Error).message}): profiles that need one are skipped`);
    return false;
  }
}
