// EndpointSlice-style endpoint state per Service, with a watch.
//
// The EndpointSlice controller lists every pod the Service selects that has an IP, with three
// conditions (https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/#conditions):
//   ready       = the pod is Ready and not terminating
//   serving     = the pod is Ready, whether terminating or not (readiness keeps being probed)
//   terminating = the pod has a deletion timestamp
// A pod that is not ready is still listed, with ready:false. A pod leaves the slice when its object
// is removed from the API, or at once on a force delete. The legacy Endpoints API instead dropped a
// terminating pod at once; that is what the `mutant-endpoints-api` profile reproduces.
//
// The store is the local provider's API server for endpoints: `list()` and `watch()` have the shape
// of a Kubernetes list/watch (ADDED / MODIFIED / DELETED with a resourceVersion), so that the same
// state can be served over HTTP to a real gateway that watches EndpointSlices.

import type { Protocol, Service } from '../../model/workload.ts';
import type { Recorder } from '../../observe/recorder.ts';
import type { Conditions } from '../endpoint-eligibility.ts';

/** ready, serving, terminating: the three conditions of an EndpointSlice endpoint. */
export type EndpointConditions = Conditions;

/** A port of an endpoint: the ServicePort's name with the pod's targetPort. */
export interface EndpointPort {
  name: string;
  port: number;
  protocol: Protocol;
}

export interface Endpoint {
  pod: string;
  ip: string;
  ports: EndpointPort[];
  conditions: EndpointConditions;
}

export interface EndpointWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** The endpoint after the change; for DELETED, as it was last listed. */
  endpoint: Endpoint;
  resourceVersion: number;
}

export type EndpointListener = (event: EndpointWatchEvent) => void;

/** What the EndpointSlice controller reads from a pod. */
export interface EndpointSource {
  name: string;
  workload: { name: string };
  ip: string;
  started: boolean;
  ready: boolean;
  terminating: boolean;
  forceDeleted: boolean;
  exited: boolean;
  removed: boolean;
}

/** The conditions a pod's endpoint has now, or undefined when it has no endpoint. */
export function endpointConditions(pod: EndpointSource): EndpointConditions | undefined {
  if (!pod.started || pod.removed || pod.forceDeleted) return undefined;
  // A container that has exited is not ready, terminating or not.
  if (pod.exited) return { ready: false, serving: false, terminating: pod.terminating };
  return { ready: pod.ready && !pod.terminating, serving: pod.ready, terminating: pod.terminating };
}

function copy(endpoint: Endpoint): Endpoint {
  return { ...endpoint, ports: endpoint.ports.map((p) => ({ ...p })), conditions: { ...endpoint.conditions } };
}

function sameConditions(a: EndpointConditions, b: EndpointConditions): boolean {
  return a.ready === b.ready && a.serving === b.serving && a.terminating === b.terminating;
}

/** The endpoints of one Service. */
export class EndpointStore {
  readonly service: Service;
  private readonly recorder: Recorder;
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly listeners = new Set<EndpointListener>();
  private version = 0;

  constructor(service: Service, recorder: Recorder) {
    this.service = service;
    this.recorder = recorder;
  }

  get resourceVersion(): number {
    return this.version;
  }

  /** Current endpoints, in the order the pods first appeared. Copies: callers may keep them. */
  list(): Endpoint[] {
    return [...this.endpoints.values()].map(copy);
  }

  /** Calls `listener` for every change from now on; returns the function that stops it. */
  watch(listener: EndpointListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Brings the pod's endpoint in line with the pod (the EndpointSlice controller's sync). */
  sync(pod: EndpointSource): void {
    const conditions = endpointConditions(pod);
    const current = this.endpoints.get(pod.name);
    if (conditions === undefined) {
      if (!current) return;
      this.endpoints.delete(pod.name);
      this.recorder.event('endpoint-changed', {
        pod: pod.name,
        workload: pod.workload.name,
        service: this.service.name,
        detail: { removed: true },
      });
      this.emit('DELETED', current);
      return;
    }
    if (current && sameConditions(current.conditions, conditions)) return;
    const endpoint: Endpoint = {
      pod: pod.name,
      ip: pod.ip,
      ports: this.service.ports.map((p) => ({ name: p.name, port: p.targetPort, protocol: p.protocol })),
      conditions,
    };
    this.endpoints.set(pod.name, endpoint);
    this.recorder.event('endpoint-changed', {
      pod: pod.name,
      workload: pod.workload.name,
      service: this.service.name,
      detail: { ...conditions },
    });
    this.emit(current ? 'MODIFIED' : 'ADDED', endpoint);
  }

  /** Stops every watch (teardown). */
  close(): void {
    this.listeners.clear();
  }

  private emit(type: EndpointWatchEvent['type'], endpoint: Endpoint): void {
    this.version++;
    for (const listener of this.listeners) listener({ type, endpoint: copy(endpoint), resourceVersion: this.version });
  }
}
