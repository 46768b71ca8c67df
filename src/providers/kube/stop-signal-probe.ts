// Whether a cluster's API server keeps a container's `lifecycle.stopSignal` (stop-signal.ts): asked
// with a dry-run create of a Pod that states one, since an API server whose ContainerStopSignals gate
// is off drops the field from what it would store instead of refusing it (dropContainerStopSignals
// in kubernetes/kubernetes pkg/api/pod/util.go). A dry run creates nothing; it goes to the
// `default` namespace because the run's own does not exist yet when providers are chosen. This
// checks the API server only: a kubelet without the gate would keep the image's signal, which no
// API call shows (zerodrop's kind and k3s clusters turn the gate on for every component).

import { NODE_IMAGE } from './manifests.ts';
import type { KubeClient } from './client.ts';

const PROBE_NAMESPACE = 'default';
/** A fresh cluster may not have made `default`'s ServiceAccount yet, which a Pod needs even in a dry run. */
const ATTEMPTS = 5;
const RETRY_MS = 2_000;

export async function keepsContainerStopSignal(client: KubeClient, log: (line: string) => void = () => undefined, retryMs = RETRY_MS): Promise<boolean> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'zerodrop-stop-signal-probe-' },
    spec: { os: { name: 'linux' }, containers: [{ name: 'probe', image: NODE_IMAGE, lifecycle: { stopSignal: 'SIGUSR1' } }] },
  };
  let failure = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      const { body } = await client.request<{ spec?: { containers?: { lifecycle?: { stopSignal?: string } }[] } }>('POST', `/api/v1/namespaces/${PROBE_NAMESPACE}/pods`, {
        query: { dryRun: 'All' },
        body: pod,
      });
      const kept = body.spec?.containers?.[0]?.lifecycle?.stopSignal === 'SIGUSR1';
      if (!kept) log("the cluster drops lifecycle.stopSignal (feature gate ContainerStopSignals off): profiles that need a stop signal other than their image's are skipped");
      return kept;
    } catch (error) {
      failure = (error as Error).message;
      if (!/serviceaccount/i.test(failure) || attempt === ATTEMPTS) break;
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  }
  log(`could not check whether the cluster keeps lifecycle.stopSignal (${failure}): profiles that need one are skipped`);
  return false;
}

/**
 * Whether a kind cluster keeps lifecycle.stopSignal: one zerodrop created does (its config turns the
 * gate on, kind.ts), one it reuses is asked, since it may have been made without the gate. The CLI's
 * kind session and the kind suites' globalSetup both take this answer, so that no run on a reused
 * cluster judges nginx-naive or haproxy-naive by their images' own stop signals.
 */
export async function kindKeepsContainerStopSignal(cluster: { created: boolean }, client: KubeClient, log: (line: string) => void = () => undefined, retryMs = RETRY_MS): Promise<boolean> {
  return cluster.created || (await keepsContainerStopSignal(client, log, retryMs));
}
