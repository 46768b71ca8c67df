// An existing cluster (EKS, GKE, AKS, ...) from a kubeconfig and context. The harness creates one
// namespace per run there and deletes only that namespace; it never cordons or drains the
// cluster's nodes. Services are reached through LoadBalancer addresses.

import { KubeConfig } from '@kubernetes/client-node';
import { kubeconfigPath } from '../kube/prerequisites.ts';

export function loadClusterConfig(opts: { kubeconfig?: string; context?: string } = {}): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath(opts.kubeconfig));
  if (opts.context) {
    if (!kc.getContexts().some((c) => c.name === opts.context)) {
      throw new Error(`context ${opts.context} is not in ${kubeconfigPath(opts.kubeconfig)}; contexts: ${kc.getContexts().map((c) => c.name).join(', ')}`);
    }
    kc.setCurrentContext(opts.context);
  }
  if (!kc.getCurrentCluster()) throw new Error(`${kubeconfigPath(opts.kubeconfig)} has no current context; pass --context`);
  return kc;
}
