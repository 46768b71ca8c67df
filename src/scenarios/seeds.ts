// The public discussions the catalog comes from (the URLs below), by seed number.

import type { Seed } from './definition.ts';

export const SEEDS: Record<Seed, { title: string; url: string }> = {
  '000': { title: 'STUNner #138: TURN connections break when the backend pod enters graceful shutdown', url: 'https://github.com/l7mp/stunner/issues/138' },
  '001': { title: 'linkerd2 #10379: do we handle shutdown incorrectly?', url: 'https://github.com/linkerd/linkerd2/issues/10379' },
  '002': { title: 'STUNner v0.19.0 release notes: EndpointSlice-based graceful backend shutdown', url: 'https://github.com/l7mp/stunner/releases/tag/v0.19.0' },
  '003': { title: 'istio/ztunnel: implement improved draining', url: 'https://github.com/istio/ztunnel' },
  '004': { title: 'envoyproxy/gateway PR 2633: drain listeners before Envoy shutdown', url: 'https://github.com/envoyproxy/gateway/pull/2633' },
  '005': { title: 'gateway-api #5014: standard connection draining semantics for long-lived HTTP connections', url: 'https://github.com/kubernetes-sigs/gateway-api/issues/5014' },
};
