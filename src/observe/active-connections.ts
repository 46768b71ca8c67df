// Samples the open connections per pod of every Service from the balancers' connection records,
// every `intervalMs`: the "active connections" curve of each gateway pod over its drain, what Envoy
// Gateway's shutdown manager polls before it lets Envoy exit (seed 004). A sample is recorded only
// when a count changed, so that an idle run costs nothing. Reads the records the balancers keep up
// to date in place; never touches a socket.

import type { ConnectionRecord } from '../model/timeline.ts';
import type { Recorder } from './recorder.ts';

export interface ActiveConnectionSampler {
  /** Takes a last sample and stops. */
  stop(): void;
}

export function startActiveConnectionSampler(recorder: Recorder, { intervalMs = 100 }: { intervalMs?: number } = {}): ActiveConnectionSampler {
  const connections = recorder.timeline.connections;
  const open = new Set<ConnectionRecord>();
  /** Last recorded count per service and pod. */
  const last = new Map<string, Map<string, number>>();
  let seen = 0;

  const sample = (): void => {
    for (; seen < connections.length; seen++) {
      const c = connections[seen];
      if (c !== undefined && c.pod !== undefined) open.add(c);
    }
    const counts = new Map<string, Map<string, number>>();
    for (const c of open) {
      if (c.close !== undefined || c.pod === undefined) {
        open.delete(c);
        continue;
      }
      const pods = counts.get(c.service) ?? new Map<string, number>();
      pods.set(c.pod, (pods.get(c.pod) ?? 0) + 1);
      counts.set(c.service, pods);
    }
    const t = recorder.now();
    for (const service of new Set([...counts.keys(), ...last.keys()])) {
      const now = counts.get(service) ?? new Map<string, number>();
      const before = last.get(service) ?? new Map<string, number>();
      // A pod that had connections and has none is listed with 0, so the curve reaches the floor.
      for (const pod of before.keys()) if (!now.has(pod) && (before.get(pod) ?? 0) > 0) now.set(pod, 0);
      const changed = now.size !== before.size || [...now].some(([pod, n]) => before.get(pod) !== n);
      if (!changed) continue;
      recorder.activeConnections({ t, service, active: Object.fromEntries([...now].sort(([a], [b]) => a.localeCompare(b))) });
      last.set(service, new Map([...now].filter(([, n]) => n > 0)));
    }
  };

  const timer = setInterval(sample, intervalMs);
  timer.unref();
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      sample();
    },
  };
}
