import { describe, expect, it } from 'vitest';

import type { KubeClient } from '../../kube/client.ts';
import { LIFECYCLE_EVENT_COMPONENT } from '../../kube/lifecycle-events.ts';
import { eventObject, kubeEvents } from './events.ts';
import type { Pod } from './pod-types.ts';

const pod: Pod = { metadata: { name: 'web', namespace: 'n', uid: 'u1' } };

describe('events', () => {
  it('writes core/v1 Events as the kubelet: source, involvedObject with fieldPath', () => {
    const e = eventObject('node-1', pod, 'spec.containers{main}', 'Normal', 'Killing', 'Stopping container main', new Date('2026-01-01T00:00:01.5Z'));
    expect(e).toMatchObject({
      involvedObject: { kind: 'Pod', name: 'web', namespace: 'n', uid: 'u1', fieldPath: 'spec.containers{main}' },
      source: { component: 'kubelet', host: 'node-1' },
      reason: 'Killing',
      type: 'Normal',
      count: 1,
      firstTimestamp: '2026-01-01T00:00:01Z',
    });
    expect(e).not.toHaveProperty('eventTime');
  });

  it("writes the lifecycle Events no kubelet writes from the node agent's own component", () => {
    const e = eventObject('node-1', pod, 'spec.containers{main}', 'Normal', 'StopSignalSent', 'Sent SIGQUIT to container main', new Date('2026-01-01T00:00:01.5Z'), LIFECYCLE_EVENT_COMPONENT);
    expect(e).toMatchObject({ source: { component: 'zerodrop-node-agent', host: 'node-1' }, reportingComponent: 'zerodrop-node-agent', reason: 'StopSignalSent' });
    // When it acted, to the millisecond, as MicroTime; the API server wants an action beside it.
    expect(e).toMatchObject({ eventTime: '2026-01-01T00:00:01.500000Z', action: 'StopSignalSent', reportingInstance: 'node-1' });
  });

  it('counts identical events on one object', async () => {
    const calls: { method: string; path: string; body: unknown }[] = [];
    const client = {
      request: (method: string, path: string, opts: { body?: unknown }) => {
        calls.push({ method, path, body: opts.body });
        return Promise.resolve({ status: 201, body: {} });
      },
    } as unknown as KubeClient;
    const sink = kubeEvents(client, 'node-1', () => undefined);
    sink.emit(pod, 'spec.containers{main}', 'Warning', 'Unhealthy', 'Readiness probe failed: 503');
    sink.emit(pod, 'spec.containers{main}', 'Warning', 'Unhealthy', 'Readiness probe failed: 503');
    sink.emit(pod, 'spec.containers{main}', 'Warning', 'Unhealthy', 'Readiness probe failed: refused');
    await Promise.resolve();
    expect(calls.map((c) => c.method)).toEqual(['POST', 'PATCH', 'POST']);
    const name = (calls[0]!.body as { metadata: { name: string } }).metadata.name;
    expect(calls[1]!.path).toBe(`/api/v1/namespaces/n/events/${name}`);
    expect(calls[1]!.body).toMatchObject({ count: 2 });
  });

  it('writes each lifecycle Event as an object of its own, however alike: each is a moment', async () => {
    const calls: { method: string; body: unknown }[] = [];
    const client = {
      request: (method: string, _path: string, opts: { body?: unknown }) => {
        calls.push({ method, body: opts.body });
        return Promise.resolve({ status: 201, body: {} });
      },
    } as unknown as KubeClient;
    const sink = kubeEvents(client, 'node-1', () => undefined);
    // A container stopped by its liveness probe, restarted, then stopped by the pod's delete.
    sink.emit(pod, 'spec.containers{main}', 'Normal', 'StopSignalSent', 'Sent SIGTERM to container main', LIFECYCLE_EVENT_COMPONENT);
    await new Promise((resolve) => setTimeout(resolve, 5));
    sink.emit(pod, 'spec.containers{main}', 'Normal', 'StopSignalSent', 'Sent SIGTERM to container main', LIFECYCLE_EVENT_COMPONENT);
    await Promise.resolve();
    expect(calls.map((c) => c.method)).toEqual(['POST', 'POST']);
    const times = calls.map((c) => (c.body as { eventTime: string }).eventTime);
    expect(times[1]! > times[0]!).toBe(true);
  });
});
