// The eviction loop of `kubectl drain`, shared by every provider that drains a node: each pod is
// evicted through the Eviction API; one its PodDisruptionBudget refuses right now (429 Too Many
// Requests) is tried again after a pause, until every eviction was accepted or the drain gives up
// (https://kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/,
// https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/).

export interface EvictionLoopOptions {
  /** Pause before an eviction the budget refused is tried again (kubectl drain waits 5 s). */
  retryMs: number;
  timeoutMs: number;
  signal?: AbortSignal;
  onEvicted?: (pod: string) => void;
  onBlocked?: (pod: string) => void;
}

/**
 * Evicts `pods` in order; `evict` answers false when a budget refuses. Resolves with the evicted
 * pods; rejects naming the node and the pod when a budget still blocks after `timeoutMs`.
 */
export async function evictEach(node: string, pods: readonly string[], evict: (pod: string) => Promise<boolean>, opts: EvictionLoopOptions): Promise<string[]> {
  const pending = [...pods];
  const evicted: string[] = [];
  const deadline = Date.now() + opts.timeoutMs;
  while (pending.length > 0) {
    opts.signal?.throwIfAborted();
    const pod = pending[0] as string;
    if (await evict(pod)) {
      pending.shift();
      evicted.push(pod);
      opts.onEvicted?.(pod);
      continue;
    }
    opts.onBlocked?.(pod);
    if (Date.now() + opts.retryMs > deadline) {
      throw new Error(`drain of ${node}: PodDisruptionBudget still blocks eviction of ${pod} after ${opts.timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, opts.retryMs));
  }
  return evicted;
}
