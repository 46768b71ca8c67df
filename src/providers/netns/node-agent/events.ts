// core/v1 Events the kubelet writes about a pod's containers (Pulled, Created, Started, Killing,
// Unhealthy, FailedPreStopHook, BackOff, Failed, FailedMount): source component `kubelet`, host the
// node, involvedObject the pod with fieldPath `spec.containers{NAME}` (or spec.initContainers{NAME}),
// as pkg/kubelet/events and the event recorder write them. Written in the background: an event that
// cannot be written is logged, never a reason to stop. Besides them, the lifecycle Events no kubelet
// writes (preStop start and end, stop signal, kill: src/providers/kube/lifecycle-events.ts), from a
// component of their own.

import { PATCH, type KubeClient } from '../../kube/client.ts';
import type { Pod } from './pod-types.ts';

export interface EventSink {
  emit(pod: Pod, fieldPath: string | undefined, type: 'Normal' | 'Warning', reason: string, message: string, component?: string): void;
}

let seq = 0;

export function eventObject(nodeName: string, pod: Pod, fieldPath: string | undefined, type: string, reason: string, message: string, now: Date, component = 'kubelet'): Record<string, unknown> {
  const ts = now.toISOString().replace(/\.\d+Z$/, 'Z');
  // The recorder names an event after its object and the time in hex nanoseconds.
  const name = `${pod.metadata.name}.${(BigInt(now.getTime()) * 1_000_000n + BigInt(seq++ % 1_000_000)).toString(16)}`;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: pod.metadata.namespace ?? 'default' },
    involvedObject: {
      apiVersion: 'v1',
      kind: 'Pod',
      name: pod.metadata.name,
      namespace: pod.metadata.namespace ?? 'default',
      uid: pod.metadata.uid,
      ...(fieldPath ? { fieldPath } : {}),
    },
    type,
    reason,
    message,
    source: { component, host: nodeName },
    reportingComponent: component,
    reportingInstance: nodeName,
    // The kubelet's Events carry seconds only. The lifecycle Events say when the node agent acted,
    // to the millisecond (a stop signal and the resets it causes are milliseconds apart): eventTime,
    // which the API server accepts on a core/v1 Event with an action beside it.
    ...(component === 'kubelet' ? {} : { eventTime: now.toISOString().replace(/Z$/, '000Z'), action: reason }),
    firstTimestamp: ts,
    lastTimestamp: ts,
    count: 1,
  };
}

/** How long an identical event is counted on the first one's object (the EventCorrelator's window). */
export const CORRELATION_WINDOW_MS = 10 * 60_000;

/**
 * Identical events (same pod, container, reason and message) within the window are one Event whose
 * count and lastTimestamp go up, as client-go's EventCorrelator aggregates them: a readiness probe
 * failing every second for a minute is one object with count 60, not 60 objects. The lifecycle
 * Events are never counted on an earlier one: each stands for a moment (its eventTime), and a
 * container stopped twice (a liveness probe's restart, then the pod's delete) stops at two.
 */
export function kubeEvents(client: KubeClient, nodeName: string, log: (message: string) => void): EventSink {
  const seen = new Map<string, { name: string; count: number; at: number }>();
  return {
    emit(pod, fieldPath, type, reason, message, component) {
      const namespace = pod.metadata.namespace ?? 'default';
      const now = new Date();
      const key = `${pod.metadata.uid ?? ''}/${fieldPath ?? ''}/${type}/${reason}/${message}/${component ?? ''}`;
      const fail = (err: unknown) => log(`event ${reason} for ${pod.metadata.name} not written: ${(err as Error).message}`);
      // Only the kubelet's own Events aggregate; the lifecycle Events (a component of their own) never.
      const isKubelet = component === undefined || component === 'kubelet';
      const last = isKubelet ? seen.get(key) : undefined;
      if (last && now.getTime() - last.at < CORRELATION_WINDOW_MS) {
        last.count++;
        last.at = now.getTime();
        const body = { count: last.count, lastTimestamp: now.toISOString().replace(/\.\d+Z$/, 'Z') };
        client.request('PATCH', `/api/v1/namespaces/${namespace}/events/${last.name}`, { body, contentType: PATCH.merge }).catch(fail);
        return;
      }
      // Old entries go: the map holds only events of the last window.
      for (const [k, v] of seen) if (now.getTime() - v.at >= CORRELATION_WINDOW_MS) seen.delete(k);
      const body = eventObject(nodeName, pod, fieldPath, type, reason, message, now, component);
      seen.set(key, { name: (body.metadata as { name: string }).name, count: 1, at: now.getTime() });
      client.request('POST', `/api/v1/namespaces/${namespace}/events`, { body }).catch(fail);
    },
  };
}
