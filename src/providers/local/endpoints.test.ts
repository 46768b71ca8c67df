// EndpointSlice conditions and the list/watch store, without processes.

import { describe, expect, it } from 'vitest';

import { Recorder } from '../../observe/recorder.ts';
import { EndpointStore, endpointConditions, type EndpointSource, type EndpointWatchEvent } from './endpoints.ts';
import { endpointSource, tcpService } from '../../../test-support/local-provider.ts';

function pod(overrides: Partial<EndpointSource> = {}): EndpointSource {
  return endpointSource('web-1', 'web', '127.9.9.9', overrides);
}

describe('endpointConditions', () => {
  it('follows the EndpointSlice rules', () => {
    expect(endpointConditions(pod({ started: false }))).toBeUndefined();
    expect(endpointConditions(pod({ ready: false }))).toEqual({ ready: false, serving: false, terminating: false });
    expect(endpointConditions(pod())).toEqual({ ready: true, serving: true, terminating: false });
    expect(endpointConditions(pod({ terminating: true }))).toEqual({ ready: false, serving: true, terminating: true });
    expect(endpointConditions(pod({ terminating: true, ready: false }))).toEqual({ ready: false, serving: false, terminating: true });
    expect(endpointConditions(pod({ terminating: true, exited: true }))).toEqual({ ready: false, serving: false, terminating: true });
    expect(endpointConditions(pod({ terminating: true, forceDeleted: true }))).toBeUndefined();
    expect(endpointConditions(pod({ removed: true }))).toBeUndefined();
  });
});

describe('EndpointStore', () => {
  it('lists and watches ADDED / MODIFIED / DELETED, records endpoint-changed once per change', () => {
    const recorder = new Recorder();
    const store = new EndpointStore(tcpService('web', 'web', 0, 9000), recorder);
    const seen: EndpointWatchEvent[] = [];
    const stop = store.watch((e) => seen.push(e));
    store.sync(pod({ ready: false }));
    store.sync(pod({ ready: false })); // no change, no event
    store.sync(pod());
    store.sync(pod({ terminating: true }));
    expect(store.list()).toEqual([
      {
        pod: 'web-1',
        ip: '127.9.9.9',
        ports: [{ name: 'tcp', port: 9000, protocol: 'TCP' }],
        conditions: { ready: false, serving: true, terminating: true },
      },
    ]);
    store.sync(pod({ terminating: true, removed: true }));
    expect(store.list()).toEqual([]);
    expect(seen.map((e) => [e.type, e.resourceVersion])).toEqual([
      ['ADDED', 1],
      ['MODIFIED', 2],
      ['MODIFIED', 3],
      ['DELETED', 4],
    ]);
    expect(recorder.timeline.events.map((e) => [e.kind, e.service, e.pod, e.workload, e.detail])).toEqual([
      ['endpoint-changed', 'web', 'web-1', 'web', { ready: false, serving: false, terminating: false }],
      ['endpoint-changed', 'web', 'web-1', 'web', { ready: true, serving: true, terminating: false }],
      ['endpoint-changed', 'web', 'web-1', 'web', { ready: false, serving: true, terminating: true }],
      ['endpoint-changed', 'web', 'web-1', 'web', { removed: true }],
    ]);
    stop();
    store.sync(pod({ name: 'web-2' }));
    expect(seen).toHaveLength(4);
  });
});
