// What a node that has not yet deprogrammed a deleted pod sends it (LaggingNodeSpec in
// src/model/load.ts): for each delete of a pod of the workload, an open loop of new connections
// straight to the pod's own address until the window after its delete has passed. The harness's
// own path to a Service may deprogram the pod within milliseconds (one node, nothing else
// changing); a cluster's other nodes take up to their next sync, and this stands for them.

import type { LaggingNodeSpec } from '../model/load.ts';
import type { Recorder } from '../observe/recorder.ts';
import type { Provider } from '../providers/provider.ts';
import type { NameHeaders } from './http1-response.ts';
import { startHttpLoad, type LoadHandle, type LoadSummary } from './http.ts';

/** Sockets a burst may hold at once: its rate over its requests' timeout, so that a pod that holds connects open makes no late starts. */
const MAX_SOCKETS = 200;

export function startLaggingNodeLoad(
  id: string,
  spec: LaggingNodeSpec,
  provider: Pick<Provider, 'podAddress'>,
  recorder: Recorder,
  opts: { signal: AbortSignal; names?: NameHeaders },
): { readonly id: string; stop(): Promise<LoadSummary> } {
  const startedAt = recorder.now();
  const bursts: LoadHandle[] = [];
  const seen = new Set<string>();
  let stopped = false;
  let unreachableNoted = false;

  const burst = (pod: string, deletedAt: number): void => {
    if (stopped || opts.signal.aborted) return;
    const address = provider.podAddress?.(spec.service, pod);
    if (!address) {
      if (!unreachableNoted) {
        recorder.event('note', { workload: spec.workload, message: `load ${id}: the harness cannot reach the pods of ${spec.workload} directly here, so no lagging node sends to a deleted one`, detail: { load: id } });
      }
      unreachableNoted = true;
      return;
    }
    const left = deletedAt + spec.windowMs - recorder.now();
    if (left <= 0) return;
    const connections = Math.min(MAX_SOCKETS, Math.ceil((spec.rate * spec.timeoutMs) / 1000));
    bursts.push(
      startHttpLoad(
        id,
        { kind: 'http', service: spec.service, path: spec.path, keepAlive: false, mode: 'open', rate: spec.rate, connections, timeoutMs: spec.timeoutMs, ...(spec.okStatus ? { okStatus: spec.okStatus } : {}) },
        address,
        recorder,
        { signal: opts.signal, maxDurationMs: left, pod, ...(opts.names ? { names: opts.names } : {}) },
      ),
    );
  };

  const unsubscribe = recorder.onEvent((e) => {
    if (e.kind !== 'delete-issued' || e.workload !== spec.workload || e.pod === undefined || seen.has(e.pod)) return;
    // A second delete of the same pod (a shorter grace) changes nothing a node has programmed.
    seen.add(e.pod);
    const pod = e.pod;
    // Not inside the recorder's own dispatch: starting a load records events too.
    queueMicrotask(() => burst(pod, e.t));
  });

  return {
    id,
    async stop(): Promise<LoadSummary> {
      stopped = true;
      unsubscribe();
      const summaries = await Promise.all(bursts.map((b) => b.stop()));
      // The bursts are as long as each delete's window: a rate over the whole run would mean nothing.
      return {
        load: id,
        mode: 'open',
        sent: sum(summaries, 'sent'),
        completed: sum(summaries, 'completed'),
        failed: sum(summaries, 'failed'),
        startedAt,
        stoppedAt: Math.max(recorder.now(), ...summaries.map((s) => s.stoppedAt)),
        late: sum(summaries, 'late'),
      };
    },
  };
}

function sum(summaries: readonly LoadSummary[], key: 'sent' | 'completed' | 'failed' | 'late'): number {
  return summaries.reduce((n, s) => n + s[key], 0);
}
