// Nodes as far as a drain is concerned: which node each pod is scheduled on, which nodes are
// cordoned, and whether the Eviction API would accept evicting a pod now. The local pods all run on
// this machine; the nodes are names the scheduler gives them, so that `kubectl drain` has something
// to act on and PodDisruptionBudgets something to guard.
//
// - Scheduling: a new pod goes to the first node that is not cordoned (`spec.unschedulable`), so the
//   pods of a run start on one node, and its replacements land on another once it is cordoned
//   (https://kubernetes.io/docs/concepts/architecture/nodes/#manual-node-administration).
// - Eviction honours the workload's budget as the disruption controller computes it: currentHealthy
//   (ready pods not being deleted) minus desiredHealthy (minAvailable, or replicas - maxUnavailable)
//   is the number of disruptions allowed; none left is a 429. A pod that is not ready may always be
//   evicted (unhealthyPodEvictionPolicy AlwaysAllow)
//   (https://kubernetes.io/docs/concepts/workloads/pods/disruptions/#pod-disruption-budgets).

import type { DisruptionBudget } from '../../model/workload.ts';
import type { PodInfo } from '../provider.ts';

export const LOCAL_NODES = ['local-node-1', 'local-node-2'] as const;

export class LocalNodes {
  private readonly nodeOf = new Map<string, string>();
  private readonly cordoned = new Set<string>();

  /** Places a new pod: the first schedulable node. */
  schedule(pod: string): string {
    const node = LOCAL_NODES.find((n) => !this.cordoned.has(n)) ?? LOCAL_NODES[0];
    this.nodeOf.set(pod, node);
    return node;
  }

  nodeOfPod(pod: string): string | undefined {
    return this.nodeOf.get(pod);
  }

  cordon(node: string): void {
    if (!(LOCAL_NODES as readonly string[]).includes(node)) throw new Error(`node ${node} not found (local nodes: ${LOCAL_NODES.join(', ')})`);
    this.cordoned.add(node);
  }

  podsOn(node: string, pods: readonly PodInfo[]): PodInfo[] {
    return pods.filter((p) => this.nodeOf.get(p.name) === node);
  }
}

/** Whether the Eviction API accepts evicting `pod` now, given its workload's pods and budget. */
export function evictionAllowed(pod: PodInfo, workloadPods: readonly PodInfo[], replicas: number, budget: DisruptionBudget | undefined): boolean {
  if (!budget || !pod.ready || pod.phase !== 'Running') return true;
  const healthy = workloadPods.filter((p) => p.phase === 'Running' && p.ready).length;
  const desired = budget.minAvailable ?? replicas - (budget.maxUnavailable ?? 0);
  return healthy - desired > 0;
}
