import { afterEach, describe, expect, it } from 'vitest';
import { Recorder } from '../../observe/recorder.ts';
import type { TimelineEvent } from '../../model/timeline.ts';
import { KubeClient } from './client.ts';
import { FakeApiServer } from '../../../test-support/fake-api-server.ts';
import { observeNamespace, signalOfExitCode, type NamespaceObservers } from './observers.ts';
import { lifecycleMessage } from './lifecycle-events.ts';

const NS = 'zerodrop-test';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const SLICES = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;
const ENDPOINTS = `/api/v1/namespaces/${NS}/endpoints`;
const EVENTS = `/api/v1/namespaces/${NS}/events`;

type Cond = { ready: boolean; serving: boolean; terminating: boolean };

function slice(name: string, endpoints: [pod: string, ip: string, c: Cond][]) {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, labels: { 'kubernetes.io/service-name': 'backend' } },
    addressType: 'IPv4',
    endpoints: endpoints.map(([pod, ip, conditions]) => ({ addresses: [ip], conditions, targetRef: { kind: 'Pod', name: pod } })),
  };
}

function pod(name: string, patch: { ready?: boolean; running?: boolean; deletion?: boolean; terminated?: { exitCode: number; reason: string }; restarts?: number; last?: { exitCode: number; reason: string } } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: { 'zerodrop.dev/workload': 'backend' },
      ...(patch.deletion ? { deletionTimestamp: '2026-01-01T00:00:05Z', deletionGracePeriodSeconds: 5 } : {}),
    },
    status: {
      podIP: '10.244.1.5',
      conditions: [{ type: 'Ready', status: patch.ready ? 'True' : 'False' }],
      containerStatuses: [
        {
          name: 'main',
          restartCount: patch.restarts ?? 0,
          state: patch.terminated
            ? { terminated: { ...patch.terminated, finishedAt: '2026-01-01T00:00:10Z' } }
            : patch.running
              ? { running: { startedAt: '2026-01-01T00:00:01Z' } }
              : { waiting: { reason: 'ContainerCreating' } },
          ...(patch.last ? { lastState: { terminated: { ...patch.last, finishedAt: '2026-01-01T00:00:03Z' } } } : {}),
        },
      ],
    },
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const show = (e: TimelineEvent) => {
  const d = e.detail ?? {};
  const conds = 'removed' in d ? 'removed' : ['ready', 'serving', 'terminating'].filter((k) => d[k] === true).join('+') || 'none';
  return e.kind === 'endpoint-changed' ? `${e.kind} ${e.pod} ${conds}` : `${e.kind} ${e.pod ?? ''}`.trim();
};

/** An Event about pod gw-1's container, as zerodrop's node agent writes it unless `component` says otherwise. */
function event(name: string, reason: string, message: string, opts: { container?: string; component?: string; eventTime?: string } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name },
    reason,
    message,
    type: 'Normal',
    involvedObject: { kind: 'Pod', name: 'gw-1', fieldPath: `spec.containers{${opts.container ?? 'main'}}` },
    source: { component: opts.component ?? 'zerodrop-node-agent' },
    reportingComponent: opts.component ?? 'zerodrop-node-agent',
    ...(opts.eventTime !== undefined ? { eventTime: opts.eventTime } : {}),
  };
}

describe('observers against a list/watch API server', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(opts: { legacy?: boolean } = {}) {
    const fake = await new FakeApiServer().listen();
    fake.serve(PODS);
    fake.serve(EVENTS);
    if (opts.legacy) {
      fake.missing(SLICES);
      fake.serve(ENDPOINTS);
    } else fake.serve(SLICES);
    const recorder = new Recorder();
    const controller = new AbortController();
    const observers: NamespaceObservers = await observeNamespace(KubeClient.forServer(fake.url), NS, recorder, controller.signal, { retryDelayMs: 20 });
    cleanups.push(async () => {
      controller.abort();
      await observers.stopped();
      await fake.close();
    });
    const kinds = (...k: string[]) => recorder.timeline.events.filter((e) => k.includes(e.kind)).map(show);
    return { fake, recorder, observers, kinds };
  }

  it('records each EndpointSlice condition change per pod, and the balancer view derived from it', async () => {
    const { fake, kinds, recorder } = await setup();
    const on: Cond = { ready: true, serving: true, terminating: false };
    const draining: Cond = { ready: false, serving: true, terminating: true };
    fake.put(SLICES, slice('backend-abc', [['backend-1', '10.0.0.1', on], ['backend-2', '10.0.0.2', on]]));
    fake.put(SLICES, slice('backend-abc', [['backend-1', '10.0.0.1', draining], ['backend-2', '10.0.0.2', on]]));
    fake.put(SLICES, slice('backend-abc', [['backend-2', '10.0.0.2', on]]));
    await until(() => kinds('endpoint-changed').length === 4, 'four endpoint changes');
    expect(kinds('endpoint-changed', 'lb-programmed', 'lb-deprogrammed')).toEqual([
      'endpoint-changed backend-1 ready+serving',
      'endpoint-changed backend-2 ready+serving',
      'lb-programmed backend-1',
      'lb-programmed backend-2',
      'endpoint-changed backend-1 serving+terminating',
      'lb-deprogrammed backend-1',
      'endpoint-changed backend-1 removed',
    ]);
    const deprogrammed = recorder.timeline.events.find((e) => e.kind === 'lb-deprogrammed');
    expect(deprogrammed?.detail).toMatchObject({ observed: 'endpointslice' });
    expect(deprogrammed?.service).toBe('backend');
    expect(recorder.timeline.events.some((e) => e.kind === 'note' && e.detail?.['observer'] === 'endpointslices')).toBe(true);
  });

  it("keeps a terminating, serving pod programmed while no other endpoint is ready, as kube-proxy's fallback does", async () => {
    const { fake, kinds, recorder } = await setup();
    const on: Cond = { ready: true, serving: true, terminating: false };
    const draining: Cond = { ready: false, serving: true, terminating: true };
    const starting: Cond = { ready: false, serving: false, terminating: false };
    // One replica deleted while its replacement starts: new connections still go to the draining pod.
    fake.put(SLICES, slice('backend-abc', [['backend-1', '10.0.0.1', on]]));
    fake.put(SLICES, slice('backend-abc', [['backend-1', '10.0.0.1', draining], ['backend-2', '10.0.0.2', starting]]));
    fake.put(SLICES, slice('backend-abc', [['backend-1', '10.0.0.1', draining], ['backend-2', '10.0.0.2', on]]));
    await until(() => kinds('endpoint-changed').length === 4, 'four endpoint changes');
    expect(kinds('endpoint-changed', 'lb-programmed', 'lb-deprogrammed')).toEqual([
      'endpoint-changed backend-1 ready+serving',
      'lb-programmed backend-1',
      'endpoint-changed backend-1 serving+terminating',
      'endpoint-changed backend-2 none',
      'endpoint-changed backend-2 ready+serving',
      'lb-programmed backend-2',
      'lb-deprogrammed backend-1',
    ]);
    expect(recorder.timeline.events.find((e) => e.kind === 'lb-programmed' && e.pod === 'backend-1')?.detail).toMatchObject({ via: 'ready' });
  });

  it('keeps a pod that moves between slices, and treats nil conditions as the API says', async () => {
    const { fake, kinds } = await setup();
    fake.put(SLICES, { ...slice('backend-a', []), endpoints: [{ addresses: ['10.0.0.1'], conditions: {}, targetRef: { kind: 'Pod', name: 'backend-1' } }] });
    fake.put(SLICES, slice('backend-b', [['backend-1', '10.0.0.1', { ready: true, serving: true, terminating: false }]]));
    fake.remove(SLICES, 'backend-a');
    await until(() => kinds('endpoint-changed').length >= 1, 'the first change');
    await new Promise((r) => setTimeout(r, 100));
    // nil ready = ready; the move from slice a to b is no change of the pod's endpoint.
    expect(kinds('endpoint-changed')).toEqual(['endpoint-changed backend-1 ready+serving']);
  });

  it('follows a pod from creation to removal: start, ready, delete seen on the watch, exit by SIGKILL, removal', async () => {
    const { fake, kinds, observers, recorder } = await setup();
    fake.put(PODS, pod('backend-1'));
    fake.put(PODS, pod('backend-1', { running: true }));
    fake.put(PODS, pod('backend-1', { running: true, ready: true }));
    await until(() => observers.pods.podsOf('backend')[0]?.ready === true, 'the pod to be ready');
    expect(observers.pods.podsOf('backend')[0]).toMatchObject({ name: 'backend-1', phase: 'Running', ip: '10.244.1.5' });
    fake.put(PODS, pod('backend-1', { running: true, ready: true, deletion: true }));
    fake.put(PODS, pod('backend-1', { deletion: true, terminated: { exitCode: 137, reason: 'Error' } }));
    fake.remove(PODS, 'backend-1');
    await until(() => kinds('pod-removed').length === 1, 'the removal');
    expect(kinds('pod-created', 'pod-started', 'pod-ready', 'pod-unready', 'delete-issued', 'exit', 'pod-removed')).toEqual([
      'pod-created backend-1',
      'pod-started backend-1',
      'pod-ready backend-1',
      'delete-issued backend-1',
      'pod-unready backend-1',
      'exit backend-1',
      'pod-removed backend-1',
    ]);
    const del = recorder.timeline.events.find((e) => e.kind === 'delete-issued');
    expect(del?.detail).toMatchObject({ gracePeriodSeconds: 5, observed: 'watch' });
    const exit = recorder.timeline.events.find((e) => e.kind === 'exit');
    expect(exit?.detail).toMatchObject({ code: 137, signal: 'SIGKILL', reason: 'Error', finishedAt: '2026-01-01T00:00:10Z' });
    expect(exit?.workload).toBe('backend');
    expect(observers.pods.podsOf('backend')).toEqual([]);
  });

  it('follows a started pod\'s log into the pod output, and records SIGTERM where the app announces it', async () => {
    const { fake, recorder } = await setup();
    fake.put(PODS, pod('backend-1', { running: true, ready: true }));
    const log = `${PODS}/backend-1/log`;
    await until(() => fake.logRequests.length === 1, 'the log to be followed');
    expect(fake.logRequests[0]).toEqual({ path: log, query: { container: 'main', follow: 'true', timestamps: 'true' } });
    fake.writeLog(log, '{"ev":"listening","port":8080}', '2026-01-01T00:00:01.000000001Z');
    fake.writeLog(log, '{"ev":"sigterm"}', '2026-01-01T00:00:05.250000000Z');
    await until(() => recorder.timeline.events.some((e) => e.kind === 'sigterm'), 'the sigterm');
    expect(recorder.timeline.podOutput['backend-1']?.map((l) => l.line)).toEqual(['{"ev":"listening","port":8080}', '{"ev":"sigterm"}']);
    expect(recorder.timeline.events.find((e) => e.kind === 'sigterm')).toMatchObject({
      pod: 'backend-1',
      workload: 'backend',
      detail: { signal: 'SIGTERM', observed: 'pod-log', loggedAt: '2026-01-01T00:00:05.250000000Z' },
    });
  });

  it("follows the first container of a chart's dataplane pod, which is not called main", async () => {
    const { fake } = await setup();
    // An Envoy Gateway proxy pod: the API server answers 400 to a log request for a container it lacks.
    const envoy = pod('envoy-1', { running: true, ready: true });
    envoy.status.containerStatuses = envoy.status.containerStatuses.map((c) => ({ ...c, name: 'envoy' }));
    fake.put(PODS, { ...envoy, spec: { containers: [{ name: 'envoy' }, { name: 'shutdown-manager' }] } });
    await until(() => fake.logRequests.length === 1, 'the log to be followed');
    expect(fake.logRequests[0]?.query).toMatchObject({ container: 'envoy', follow: 'true' });
  });

  it("judges zerodrop's main container, not the sidecar a mesh injects, whose status the kubelet sorts first", async () => {
    const { fake, kinds, recorder } = await setup();
    // Linkerd injects its proxy as the first container; the kubelet lists statuses by name.
    const injected = (main: object, proxy: object) => ({
      ...pod('backend-1'),
      spec: { containers: [{ name: 'linkerd-proxy' }, { name: 'main' }] },
      status: { podIP: '10.244.1.5', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'linkerd-proxy', restartCount: 0, state: proxy }, { name: 'main', restartCount: 0, state: main }] },
    });
    fake.put(PODS, injected({ waiting: { reason: 'ContainerCreating' } }, { running: { startedAt: '2026-01-01T00:00:00Z' } }));
    fake.put(PODS, injected({ running: { startedAt: '2026-01-01T00:00:02Z' } }, { running: { startedAt: '2026-01-01T00:00:00Z' } }));
    fake.put(PODS, injected({ terminated: { exitCode: 0, reason: 'Completed', finishedAt: '2026-01-01T00:00:09Z' } }, { running: { startedAt: '2026-01-01T00:00:00Z' } }));
    fake.put(PODS, injected({ terminated: { exitCode: 0, reason: 'Completed', finishedAt: '2026-01-01T00:00:09Z' } }, { terminated: { exitCode: 137, reason: 'Error', finishedAt: '2026-01-01T00:00:19Z' } }));
    await until(() => kinds('exit').length === 1 && fake.logRequests.length === 1, 'the exit and the log follow');
    await new Promise((r) => setTimeout(r, 50));
    expect(recorder.timeline.events.find((e) => e.kind === 'pod-started')?.detail).toMatchObject({ startedAt: '2026-01-01T00:00:02Z' });
    expect(recorder.timeline.events.filter((e) => e.kind === 'exit').map((e) => e.detail)).toEqual([expect.objectContaining({ code: 0, finishedAt: '2026-01-01T00:00:09Z' })]);
    expect(fake.logRequests[0]?.query).toMatchObject({ container: 'main' });
  });

  it('does not record the delete twice when the harness issued it, and reports restarts with the last exit', async () => {
    const { fake, kinds, observers, recorder } = await setup();
    fake.put(PODS, pod('backend-1', { running: true, ready: true }));
    await until(() => observers.pods.podsOf('backend').length === 1, 'the pod');
    observers.pods.deletesIssued.add('backend-1');
    observers.pods.deleteAccepted('backend-1', 0, recorder.now());
    fake.put(PODS, pod('backend-1', { running: true, ready: true, deletion: true }));
    fake.put(PODS, pod('backend-2', { running: true, restarts: 1, last: { exitCode: 143, reason: 'Error' } }));
    await until(() => kinds('exit').length === 1 && observers.pods.podsOf('backend')[0]?.phase === 'Terminating', 'the restart');
    expect(kinds('delete-issued')).toEqual(['delete-issued backend-1']);
    expect(recorder.timeline.events.find((e) => e.kind === 'delete-issued')?.detail).toMatchObject({ gracePeriodSeconds: 0, observed: 'api-response' });
    expect(recorder.timeline.events.find((e) => e.kind === 'exit')?.detail).toMatchObject({ code: 143, signal: 'SIGTERM', restart: 1 });
    expect(recorder.timeline.events.some((e) => e.kind === 'note' && e.message?.includes('restarted'))).toBe(true);
  });

  it('keeps observing across a dropped watch and a 410 relist, and sees a deletion it missed', async () => {
    const { fake, kinds, recorder } = await setup();
    fake.put(PODS, pod('backend-1', { running: true, ready: true }));
    await until(() => kinds('pod-ready').length === 1, 'ready');
    fake.dropWatches();
    fake.removeQuietly(PODS, 'backend-1');
    fake.compact();
    await until(() => kinds('pod-removed').length === 1, 'the removal seen by relist');
    fake.put(PODS, pod('backend-2', { running: true }));
    await until(() => kinds('pod-started').length === 2, 'the next pod after the relist');
    // The gap is on the Timeline: where observation was interrupted, and that a relist filled it.
    const gaps = recorder.timeline.events.filter((e) => e.detail?.['observer'] === 'watch-gap').map((e) => e.message ?? '');
    expect(gaps.some((m) => m.includes('dropped'))).toBe(true);
    expect(gaps.some((m) => m.includes('410 Gone'))).toBe(true);
    expect(recorder.timeline.events.find((e) => e.kind === 'pod-removed')?.detail).toEqual({ seenByRelist: true });
  });

  it('falls back to legacy Endpoints when the server has no EndpointSlice API, and says so', async () => {
    const { fake, kinds, recorder } = await setup({ legacy: true });
    expect(recorder.timeline.events.find((e) => e.detail?.['observer'] === 'endpoints-legacy')?.message).toMatch(/legacy Endpoints/);
    const endpoints = (ready: string[], notReady: string[]) => ({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'backend' },
      subsets: [{ addresses: ready.map((p) => ({ ip: '10.0.0.1', targetRef: { name: p } })), notReadyAddresses: notReady.map((p) => ({ ip: '10.0.0.2', targetRef: { name: p } })) }],
    });
    fake.put(ENDPOINTS, endpoints(['backend-1', 'backend-2'], []));
    // The legacy API drops a terminating pod at once: there is no serving/terminating state to see.
    fake.put(ENDPOINTS, endpoints(['backend-2'], []));
    await until(() => kinds('endpoint-changed').length === 3, 'three changes');
    expect(kinds('endpoint-changed')).toEqual(['endpoint-changed backend-1 ready+serving', 'endpoint-changed backend-2 ready+serving', 'endpoint-changed backend-1 removed']);
    expect(recorder.timeline.events.filter((e) => e.kind === 'endpoint-changed').every((e) => e.detail?.['source'] === 'endpoints')).toBe(true);
  });

  it("turns the lifecycle Events of zerodrop's node agent about a pod's main container, and only those, into its lifecycle events", async () => {
    const { fake, recorder } = await setup();
    fake.put(PODS, { ...pod('gw-1', { running: true }), spec: { containers: [{ name: 'linkerd-proxy' }, { name: 'main' }] } });
    await until(() => recorder.timeline.events.some((e) => e.kind === 'pod-created'), 'the pod');
    // Written as the node agent writes them (the messages of lifecycle-events.ts).
    fake.put(EVENTS, event('e1', 'PreStopStarted', lifecycleMessage.PreStopStarted('main')));
    fake.put(EVENTS, event('e2', 'PreStopTimedOut', lifecycleMessage.PreStopTimedOut('main')));
    fake.put(EVENTS, event('e3', 'StopSignalSent', lifecycleMessage.StopSignalSent('main', 'SIGQUIT')));
    fake.put(EVENTS, event('e4', 'ContainerKilled', lifecycleMessage.ContainerKilled('main')));
    fake.put(EVENTS, event('e7', 'PreStopEnded', lifecycleMessage.PreStopEnded('main', true)));
    // Not the node agent's: an Event of the same reason from another component, and one about a sidecar.
    fake.put(EVENTS, event('e5', 'StopSignalSent', 'Sent SIGTERM to container main', { component: 'kubelet' }));
    fake.put(EVENTS, event('e6', 'StopSignalSent', 'Sent SIGTERM to container linkerd-proxy', { container: 'linkerd-proxy' }));
    await until(() => recorder.timeline.events.filter((e) => e.kind === 'note' && e.detail?.['observer'] === 'events').length === 2, 'the two other events');
    const lifecycle = recorder.timeline.events.filter((e) => ['prestop-start', 'prestop-end', 'sigterm', 'sigkill'].includes(e.kind));
    expect(lifecycle.map((e) => [e.kind, e.pod, e.detail])).toEqual([
      ['prestop-start', 'gw-1', { observed: 'node-agent' }],
      ['prestop-end', 'gw-1', { observed: 'node-agent', timedOut: true }],
      ['sigterm', 'gw-1', { observed: 'node-agent', signal: 'SIGQUIT' }],
      ['sigkill', 'gw-1', { observed: 'node-agent', signal: 'SIGKILL' }],
      ['prestop-end', 'gw-1', { observed: 'node-agent' }],
    ]);
  });

  it("stamps a lifecycle Event when the node agent acted (its eventTime), not when the watch brought it", async () => {
    const { fake, recorder } = await setup();
    fake.put(PODS, { ...pod('gw-1', { running: true }), spec: { containers: [{ name: 'main' }] } });
    await until(() => recorder.timeline.events.some((e) => e.kind === 'pod-created'), 'the pod');
    const at = (ms: number) => new Date(recorder.clock.originEpochMs + ms).toISOString().replace(/Z$/, '000Z');
    const acted = recorder.now() - 40;
    fake.put(EVENTS, event('e1', 'StopSignalSent', lifecycleMessage.StopSignalSent('main', 'SIGTERM'), { eventTime: at(acted) }));
    // A time the harness cannot trust (a minute ago, or ahead of it): stamped when seen.
    fake.put(EVENTS, event('e2', 'ContainerKilled', lifecycleMessage.ContainerKilled('main'), { eventTime: at(acted - 60_000) }));
    fake.put(EVENTS, event('e3', 'PreStopStarted', lifecycleMessage.PreStopStarted('main'), { eventTime: at(recorder.now() + 60_000) }));
    await until(() => recorder.timeline.events.some((e) => e.kind === 'prestop-start'), 'the events');
    const t = (kind: string) => recorder.timeline.events.find((e) => e.kind === kind)!.t;
    expect(Math.abs(t('sigterm') - acted)).toBeLessThan(1.5);
    expect(t('sigkill')).toBeGreaterThan(acted);
    expect(t('prestop-start')).toBeLessThanOrEqual(recorder.now());
  });

  it('records Kubernetes events about pods as notes', async () => {
    const { fake, recorder } = await setup();
    fake.put(EVENTS, { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1' }, reason: 'Killing', message: 'Stopping container main', type: 'Normal', involvedObject: { kind: 'Pod', name: 'backend-1' } });
    await until(() => recorder.timeline.events.some((e) => e.detail?.['reason'] === 'Killing'), 'the event');
    expect(recorder.timeline.events.find((e) => e.detail?.['reason'] === 'Killing')).toMatchObject({ kind: 'note', pod: 'backend-1', message: 'Pod backend-1: Killing Stopping container main' });
  });
});

describe('signalOfExitCode', () => {
  it('reads 128 + n as signal n for the signals that end containers', () => {
    expect(signalOfExitCode(137)).toBe('SIGKILL');
    expect(signalOfExitCode(143)).toBe('SIGTERM');
    expect(signalOfExitCode(0)).toBeNull();
    expect(signalOfExitCode(1)).toBeNull();
  });
});
