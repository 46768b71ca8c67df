// Which endpoints of a Service kube-proxy sends new connections to: the ready ones; when none is
// ready, those that are serving and terminating, so that a Service whose every pod is terminating
// keeps reaching them while they drain (KEP-1669 "Proxy Terminating Endpoints", GA in 1.28;
// https://kubernetes.io/docs/reference/networking/virtual-ips/#traffic-to-terminating-endpoints).
// The local provider's balancer routes by it; the cluster observers date programming by it.

export type Eligibility = 'ready' | 'terminating-fallback';

export interface Conditions {
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

export function eligibleEndpoints<T>(endpoints: Iterable<T>, conditionsOf: (endpoint: T) => Conditions): Map<T, Eligibility> {
  const all = [...endpoints];
  const eligible = new Map<T, Eligibility>();
  for (const endpoint of all) if (conditionsOf(endpoint).ready) eligible.set(endpoint, 'ready');
  if (eligible.size > 0) return eligible;
  for (const endpoint of all) {
    const c = conditionsOf(endpoint);
    if (c.serving && c.terminating) eligible.set(endpoint, 'terminating-fallback');
  }
  return eligible;
}
