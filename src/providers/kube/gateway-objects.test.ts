import { describe, expect, it } from 'vitest';
import { gatewayObjects, routeKindProblem, validateGatewayObjects, type GatewayObjectsSpec } from './gateway-objects.ts';

const spec = (over: Partial<GatewayObjectsSpec> = {}): GatewayObjectsSpec => ({
  namespace: 'zerodrop-abcd1234',
  runId: 'abcd1234',
  gatewayName: 'zerodrop',
  className: 'acme',
  supportedFeatures: ['Gateway', 'GRPCRoute', 'HTTPRoute', 'TCPRoute', 'UDPRoute'],
  listeners: [
    { kind: 'HTTPRoute', port: 8080, backend: { service: 'backend', port: 8080 } },
    { kind: 'GRPCRoute', port: 8081, backend: { service: 'grpc', port: 50051 } },
    { kind: 'TCPRoute', port: 9001, backend: { service: 'echo', port: 9001 } },
    { kind: 'UDPRoute', port: 9000, backend: { service: 'udp-echo', port: 9000 } },
  ],
  ...over,
});

describe('the Gateway and routes of a --gateway-class run', () => {
  it('every kind validates against the Gateway API schemas', () => {
    const { gateway, routes } = gatewayObjects(spec());
    expect(() => validateGatewayObjects([gateway, ...routes])).not.toThrow();
    expect(routes.map((r) => `${r.apiVersion}/${r.kind}`)).toEqual([
      'gateway.networking.k8s.io/v1/HTTPRoute',
      'gateway.networking.k8s.io/v1/GRPCRoute',
      'gateway.networking.k8s.io/v1alpha2/TCPRoute',
      'gateway.networking.k8s.io/v1alpha2/UDPRoute',
    ]);
    expect((gateway['spec'] as { listeners: unknown[] }).listeners).toEqual([
      { name: 'httproute-8080', port: 8080, protocol: 'HTTP' },
      { name: 'grpcroute-8081', port: 8081, protocol: 'HTTP' },
      { name: 'tcproute-9001', port: 9001, protocol: 'TCP' },
      { name: 'udproute-9000', port: 9000, protocol: 'UDP' },
    ]);
    // Each route attaches to its own listener, so that no route binds to another protocol's port.
    expect(routes.map((r) => (r['spec'] as { parentRefs: unknown[] }).parentRefs)).toEqual([
      [{ name: 'zerodrop', sectionName: 'httproute-8080' }],
      [{ name: 'zerodrop', sectionName: 'grpcroute-8081' }],
      [{ name: 'zerodrop', sectionName: 'tcproute-9001' }],
      [{ name: 'zerodrop', sectionName: 'udproute-9000' }],
    ]);
    for (const o of [gateway, ...routes]) expect(o.metadata['labels']).toEqual({ 'zerodrop.dev/run': 'abcd1234', 'app.kubernetes.io/managed-by': 'zerodrop' });
  });

  it('mutant: a route with a bad port and a Gateway without listeners are refused by the schemas, each named', () => {
    const { gateway, routes } = gatewayObjects(spec());
    (gateway['spec'] as { listeners: unknown }).listeners = 'none';
    ((routes[2]!['spec'] as { rules: { backendRefs: { port: number }[] }[] }).rules[0]!.backendRefs[0]!).port = 70000;
    expect(() => validateGatewayObjects([gateway, ...routes])).toThrow(/Gateway zerodrop:[\s\S]*TCPRoute zerodrop-tcproute-9001:/);
  });

  it("the run's label goes on the Gateway's infrastructure only when the class supports GatewayInfrastructurePropagation", () => {
    const without = gatewayObjects(spec()).gateway['spec'] as Record<string, unknown>;
    expect(without['infrastructure']).toBeUndefined();
    const withIt = gatewayObjects(spec({ supportedFeatures: ['HTTPRoute', 'GatewayInfrastructurePropagation'] }));
    expect((withIt.gateway['spec'] as Record<string, unknown>)['infrastructure']).toEqual({ labels: { 'zerodrop.dev/run': 'abcd1234' } });
    expect(() => validateGatewayObjects([withIt.gateway])).not.toThrow();
  });

  it('a route kind the class does not list is a skip reason naming the class and what it lists', () => {
    expect(routeKindProblem('acme', 'HTTPRoute', ['Gateway', 'HTTPRoute'])).toBeUndefined();
    expect(routeKindProblem('acme', 'UDPRoute', ['Gateway', 'HTTPRoute'])).toBe('GatewayClass acme does not list UDPRoute in status.supportedFeatures (it lists Gateway, HTTPRoute)');
    expect(routeKindProblem('acme', 'GRPCRoute', ['GRPCRoute'])).toBeUndefined();
  });

  it('a class that publishes no supportedFeatures runs HTTPRoute scenarios only', () => {
    expect(routeKindProblem('old', 'HTTPRoute', [])).toBeUndefined();
    expect(routeKindProblem('old', 'TCPRoute', [])).toBe('GatewayClass old publishes no status.supportedFeatures, so TCPRoute support is unknown; only HTTPRoute scenarios run against it');
  });
});
