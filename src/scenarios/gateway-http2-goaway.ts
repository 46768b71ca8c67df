// seed 003 (ztunnel draining): a pooled HTTP/2 client keeps its connections for as long as the
// server lets it, so a draining gateway must say GOAWAY (RFC 9113 section 6.8) for the client to
// move to another replica; closing the connection instead fails the streams on it.

import { defineScenario, pick } from './definition.ts';
import { drainExpectations, GATEWAY, gatewayHttp2Load, gatewayOptions, gatewayTopology } from './gateway-http-topology.ts';

export default defineScenario({
  id: 'gateway-http2-goaway',
  description:
    'Pooled h2c clients (connections x concurrent streams) through two gateway pods; one is deleted. Its clients must receive GOAWAY, no stream may fail, and the clients must move to the other replica; the pod drains within its bounds.',
  features: ['gateway', 'http2'],
  seeds: ['003'],
  role: 'gateway',
  options: {
    ...pick(gatewayOptions, ['gateways', 'backends', 'programmingDelayMs', 'graceSeconds']),
    // kube-proxy picks a gateway at random per connection: 4 connections all miss the deleted pod
    // in 1 run of 16 (nothing to drain, inconclusive), 12 in 1 of 4,096; at 4/s a slot the
    // cluster's request rate stays near the local one (96/s against 80/s).
    sessions: { default: 4, cluster: 12, nightly: 10, doc: 'pooled HTTP/2 connections' },
    streamsPerSession: { default: 2, nightly: 10, doc: 'concurrent streams per connection' },
    ratePerStream: { default: 10, cluster: 4, doc: 'requests per second per stream slot' },
    requestMs: { default: 50, doc: 'server time of each stream (/delay?ms=): with ratePerStream 10, each slot has a stream in flight most of the time' },
    ...pick(gatewayOptions, ['deleteAtMs', 'settleMs', 'idleExitMs']),
  },
  build: (profile, o) => {
    const setup = gatewayTopology(profile, { ...o, protocol: 'h2c' });
    return {
      id: 'gateway-http2-goaway',
      profile: profile.name,
      topology: setup.topology,
      loads: [{ id: 'h2', startMs: 0, spec: gatewayHttp2Load(o) }],
      steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: GATEWAY, pick: 'oldest' } }],
      end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
      maxDurationMs: o.deleteAtMs + setup.graceSeconds * 1000 + o.settleMs + 15_000,
      expectations: [
        { assert: 'noFailedRequests' },
        { assert: 'http2Goaway', pod: { step: 'delete' }, load: 'h2' },
        ...drainExpectations({ step: 'delete' }, setup, o.idleExitMs),
      ],
    };
  },
});
