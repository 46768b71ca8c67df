// An existing cluster (EKS, GKE, AKS, ...) from a kubeconfig and context. The harness creates one
// namespace per run there and deletes only that namespace; it never cordons or drains the
// cluster's nodes. Services are reached through LoadBalancer addresses.

import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeconfigPath } from '../kube/prerequisites.ts';

export function loadClusterConfig(opts: { kubeconfig?: string; context?: string } = {}, env = process.env): KubeConfig {
  const kc = new KubeConfig();
  // kubectl skips entries of $KUBECONFIG that do not exist.
  const list = env['KUBECONFIG']?.split(':').filter((p) => p !== '' && existsSync(p)) ?? [];
  let source: string;
  if (opts.kubeconfig || list.length < 2) {
    source = opts.kubeconfig ?? list[0] ?? kubeconfigPath(undefined, env);
    kc.loadFromFile(source);
  } else {
    // Every file $KUBECONFIG lists, merged as kubectl merges them: the first file to name a
    // context, cluster or user wins, and so does the first current-context (client-node's own merge
    // throws on a name two files share).
    source = `$KUBECONFIG (${list.join(', ')})`;
    kc.loadFromFile(list[0] ?? '');
    for (const path of list.slice(1)) {
      const next = new KubeConfig();
      next.loadFromFile(path);
      for (const c of next.clusters) if (!kc.getCluster(c.name)) kc.addCluster(c);
      for (const u of next.users) if (!kc.getUser(u.name)) kc.addUser(u);
      for (const c of next.contexts) if (!kc.getContextObject(c.name)) kc.addContext(c);
      if (!kc.currentContext && next.currentContext) kc.setCurrentContext(next.currentContext);
    }
  }
  if (opts.context) {
    if (!kc.getContexts().some((c) => c.name === opts.context)) {
      throw new Error(`context ${opts.context} is not in ${source}; contexts: ${kc.getContexts().map((c) => c.name).join(', ')}`);
    }
    kc.setCurrentContext(opts.context);
  }
  if (!kc.getCurrentCluster()) throw new Error(`${source} has no current context; pass --context`);
  return kc;
}
