// Which response headers name the pods behind a load's Service: the profile's `attribution`
// (defineProfile), carried by the Service's workload. A system that names no pod is attributed
// through the balancer's connection records instead, and the Timeline says which applies, so that
// a report never leaves the reader guessing how a failure was placed on its pod.

import { DEFAULT_NAME_HEADERS, type NameHeaders } from '../load/http1-response.ts';
import type { LoadSpec } from '../model/load.ts';
import type { Scenario } from '../model/scenario.ts';
import type { Topology } from '../model/workload.ts';

export interface LoadAttribution {
  names: NameHeaders;
  /** One line for the Timeline: how requests to the Service are attributed. */
  note: string;
}

/** The name headers of the pods behind `service`, or undefined when the defaults apply unannounced (no attribution declared). */
export function attributionOf(topology: Topology, service: string): LoadAttribution | undefined {
  const selector = topology.services.find((s) => s.name === service)?.selector;
  const workload = topology.workloads.find((w) => w.name === selector);
  const a = workload?.attribution;
  if (!workload || !a) return undefined;
  const names: NameHeaders = a.role === 'gateway' ? { pod: DEFAULT_NAME_HEADERS.pod, gateway: a.header } : { pod: a.header, gateway: DEFAULT_NAME_HEADERS.gateway };
  const what = `requests to Service ${service} are attributed to its ${a.role} pods (${workload.name})`;
  const note =
    a.header === undefined
      ? `${what} through the load balancer's connection records: the profile says its responses name no pod (attribution: 'connection')`
      : `${what} by the response header ${a.header}, which names the pod that sent each response`;
  return { names, note };
}

/**
 * The HTTP loads: their responses may name the pod (a header; gRPC's response metadata are HTTP/2
 * headers); packets and TCP streams carry no header.
 */
export function isHttpLoad(spec: LoadSpec): spec is Extract<LoadSpec, { kind: 'http' | 'single' | 'lagging-node' | 'http2' | 'grpc' }> {
  return spec.kind === 'http' || spec.kind === 'single' || spec.kind === 'lagging-node' || spec.kind === 'http2' || spec.kind === 'grpc';
}

/** How the requests of each Service the scenario's HTTP loads reach are attributed, one line each. */
export function attributionNotes(scenario: Pick<Scenario, 'topology' | 'loads'>): string[] {
  const services = new Set(scenario.loads.flatMap((l) => (isHttpLoad(l.spec) ? [l.spec.service] : [])));
  return [...services].flatMap((s) => attributionOf(scenario.topology, s)?.note ?? []);
}
