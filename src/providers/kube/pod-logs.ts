// Follows each pod's log (GET .../pods/NAME/log?follow=true&timestamps=true) into the Timeline's pod
// output. The API shows neither preStop nor SIGTERM, but the reference apps announce SIGTERM on
// stdout ({"ev":"sigterm"}, fixtures/reference-backend.mjs): that line becomes a `sigterm` event,
// marked `observed: 'pod-log'` with the container runtime's timestamp of the line. Systems that
// announce nothing get no `sigterm` event on a cluster.
//
// A follow that fails mid-stream (an API server restart, a proxy that cuts long responses) is
// resumed with sinceTime = the last line's timestamp, lines at or before it dropped, and a `note` on
// the Timeline says so: a gap in a pod's output is then visible rather than silent.

import type { Recorder } from '../../observe/recorder.ts';
import type { KubeClient } from './client.ts';
import { MAIN_CONTAINER } from './manifests.ts';

/** `2026-01-01T00:00:01.123456789Z text` -> [timestamp, text] (timestamps=true prefixes every line). */
export function splitTimestamp(line: string): [string | undefined, string] {
  const space = line.indexOf(' ');
  if (space > 0 && /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(line.slice(0, space))) return [line.slice(0, space), line.slice(space + 1)];
  return [undefined, line];
}

/** Nanoseconds since the epoch of a log timestamp (RFC3339Nano: the kubelet trims trailing zeros). */
export function timestampNanos(ts: string): bigint | undefined {
  const m = /^(.*?)(?:\.(\d{1,9}))?Z$/.exec(ts);
  const seconds = m?.[1] ? Date.parse(`${m[1]}Z`) : NaN;
  if (!m || Number.isNaN(seconds)) return undefined;
  return BigInt(seconds) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** Milliseconds since the epoch of an RFC 3339 timestamp (a log line's, an Event's eventTime), to its full precision. */
export function wallTimeMs(ts: string | undefined): number | undefined {
  const nanos = ts === undefined ? undefined : timestampNanos(ts);
  return nanos === undefined ? undefined : Number(nanos) / 1e6;
}

/** Resumes of one pod's follow before it is given up (each one is a note on the Timeline). */
const MAX_RESUMES = 5;

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
    let last: { text: string; nanos: bigint } | undefined;
    const onLine = (line: string) => {
      const [loggedAt, text] = splitTimestamp(line);
      const nanos = loggedAt === undefined ? undefined : timestampNanos(loggedAt);
      // After a resume the server may repeat lines up to sinceTime (its precision is the API's, not ours).
      if (last && nanos !== undefined && nanos <= last.nanos) return;
      if (loggedAt !== undefined && nanos !== undefined) last = { text: loggedAt, nanos };
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
    };
    const path = `/api/v1/namespaces/${this.namespace}/pods/${pod}/log`;
    const run = async () => {
      for (let resumes = 0; ; resumes++) {
        try {
          await this.client.stream(path, { container, follow: true, timestamps: true, ...(last ? { sinceTime: last.text } : {}) }, onLine, this.signal);
          return;
        } catch (err) {
          if (this.signal.aborted) return;
          const why = err instanceof Error ? err.message : String(err);
          // Nothing read yet (no such pod, no rights): nothing to resume from.
          if (!last || resumes >= MAX_RESUMES) {
            this.recorder.event('note', { ...base, message: `log of ${pod} not followed: ${why}`, detail: { observer: 'pod-log' } });
            return;
          }
          this.recorder.event('note', { ...base, message: `log of ${pod} resumed from ${last.text} after: ${why}`, detail: { observer: 'pod-log', resumedFrom: last.text } });
        }
      }
    };
    this.following.set(pod, run());
  }

  async stopped(): Promise<void> {
    await Promise.all(this.following.values());
  }
}
