// Follows each pod's log (GET .../pods/NAME/log?follow=true&timestamps=true) into the Timeline's pod
// output. The API shows neither preStop nor SIGTERM, but the reference apps announce SIGTERM on
// stdout ({"ev":"sigterm"}, fixtures/reference-backend.mjs): that line becomes a `sigterm` event,
// marked `observed: 'pod-log'` with the container runtime's timestamp of the line. Systems that
// announce nothing get no `sigterm` event on a cluster.

import type { Recorder } from '../../observe/recorder.ts';
import type { KubeClient } from './client.ts';
import { MAIN_CONTAINER } from './manifests.ts';

/** `2026-01-01T00:00:01.123456789Z text` -> [timestamp, text] (timestamps=true prefixes every line). */
export function splitTimestamp(line: string): [string | undefined, string] {
  const space = line.indexOf(' ');
  if (space > 0 && /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(line.slice(0, space))) return [line.slice(0, space), line.slice(space + 1)];
  return [undefined, line];
}

export class PodLogs {
  private readonly client: KubeClient;
  private readonly namespace: string;
  private readonly recorder: Recorder;
  private readonly signal: AbortSignal;
  private readonly following = new Map<string, Promise<void>>();

  constructor(client: KubeClient, namespace: string, recorder: Recorder, signal: AbortSignal) {
    this.client = client;
    this.namespace = namespace;
    this.recorder = recorder;
    this.signal = signal;
  }

  /** Starts following one container of the pod (zerodrop's own pods: `main`), once per pod. */
  follow(pod: string, workload: string, container = MAIN_CONTAINER): void {
    if (this.following.has(pod) || this.signal.aborted) return;
    const base = { pod, ...(workload ? { workload } : {}) };
    const done = this.client
      .stream(
        `/api/v1/namespaces/${this.namespace}/pods/${pod}/log`,
        { container, follow: true, timestamps: true },
        (line) => {
          const [loggedAt, text] = splitTimestamp(line);
          // The log API merges stdout and stderr into one stream.
          this.recorder.podOutput(pod, 'stdout', text);
          if (text.startsWith('{') && text.includes('"sigterm"')) {
            try {
              const parsed = JSON.parse(text) as { ev?: unknown };
              if (parsed.ev === 'sigterm') {
                this.recorder.event('sigterm', { ...base, detail: { signal: 'SIGTERM', observed: 'pod-log', loggedAt } });
              }
            } catch {
              // not a JSON line
            }
          }
        },
        this.signal,
      )
      .catch((err: unknown) => {
        if (this.signal.aborted) return;
        this.recorder.event('note', { ...base, message: `log of ${pod} not followed: ${err instanceof Error ? err.message : String(err)}`, detail: { observer: 'pod-log' } });
      });
    this.following.set(pod, done);
  }

  async stopped(): Promise<void> {
    await Promise.all(this.following.values());
  }
}
