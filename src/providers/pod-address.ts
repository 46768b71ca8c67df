// Where a Service's pod itself listens, for a load that goes to the pod and not through the
// Service's balancer (a node whose proxy still sends it traffic: src/load/lagging-node.ts).

import type { Service } from '../model/workload.ts';
import type { PodInfo, ServiceAddress } from './provider.ts';

/** The pod's IP and the Service's first TCP target port, or undefined when the pod or the port is unknown. */
export function podTcpAddress(service: Service, pods: readonly PodInfo[], pod: string): ServiceAddress | undefined {
  const ip = pods.find((p) => p.name === pod)?.ip;
  const port = service.ports.find((p) => p.protocol === 'TCP')?.targetPort;
  return ip && port !== undefined ? { host: ip, port } : undefined;
}
