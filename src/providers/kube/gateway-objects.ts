// The Gateway and routes a run creates for an implementation already installed on the cluster
// (`--gateway-class NAME`, Gateway API conformance's model), validated with
// @kubernetes-models/gateway-api before anything is sent.
//
// Upstream facts used here (kubernetes-sigs/gateway-api):
// - feature names, as GatewayClass.status.supportedFeatures carries them: "HTTPRoute"
//   (pkg/features/httproute.go), "GRPCRoute" (pkg/features/grpcroute.go), "TCPRoute"
//   (pkg/features/tcproute.go), "UDPRoute" (pkg/features/udproute.go), "GatewayInfrastructurePropagation"
//   (pkg/features/gateway.go: support for spec.infrastructure.labels and .annotations);
// - GRPCRoute is served at v1, TCPRoute and UDPRoute at v1alpha2 (the schemas
//   @kubernetes-models/gateway-api 2.0.0 publishes: gateway.networking.k8s.io/v1/GRPCRoute,
//   v1alpha2/TCPRoute, v1alpha2/UDPRoute).

import { GRPCRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GRPCRoute';
import { TCPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1alpha2/TCPRoute';
import type { KubeObject } from './list-watch.ts';
import { LABELS, validateManifests } from './manifests.ts';
import type { RouteKind } from '../../model/workload.ts';

export const ROUTE_KINDS = {
  HTTPRoute: { apiVersion: 'gateway.networking.k8s.io/v1', plural: 'httproutes', feature: 'HTTPRoute', protocol: 'HTTP' },
  GRPCRoute: { apiVersion: 'gateway.networking.k8s.io/v1', plural: 'grpcroutes', feature: 'GRPCRoute', protocol: 'HTTP' },
  TCPRoute: { apiVersion: 'gateway.networking.k8s.io/v1alpha2', plural: 'tcproutes', feature: 'TCPRoute', protocol: 'TCP' },
  UDPRoute: { apiVersion: 'gateway.networking.k8s.io/v1alpha2', plural: 'udproutes', feature: 'UDPRoute', protocol: 'UDP' },
} as const satisfies Record<RouteKind, { apiVersion: string; plural: string; feature: string; protocol: string }>;

export type { RouteKind };

export const INFRASTRUCTURE_FEATURE = 'GatewayInfrastructurePropagation';

/** One listener of the run's Gateway and the route that sends it to a backend Service. */
export interface ListenerRoute {
  kind: RouteKind;
  port: number;
  backend: { service: string; port: number };
}

export interface GatewayObjectsSpec {
  namespace: string;
  runId: string;
  gatewayName: string;
  className: string;
  listeners: readonly ListenerRoute[];
  /** The class's status.supportedFeatures (names). */
  supportedFeatures: readonly string[];
}

/**
 * Why a class cannot carry a route kind, or undefined when it can. A class that publishes no
 * supportedFeatures (older implementations) is taken to support HTTPRoute only: it is the route
 * kind of every Gateway conformance profile, and any other guess would hang the run on a route that
 * no controller reconciles.
 */
export function routeKindProblem(className: string, kind: RouteKind, supportedFeatures: readonly string[]): string | undefined {
  const feature = ROUTE_KINDS[kind].feature;
  if (supportedFeatures.includes(feature)) return undefined;
  if (supportedFeatures.length === 0) {
    if (kind === 'HTTPRoute') return undefined;
    return `GatewayClass ${className} publishes no status.supportedFeatures, so ${kind} support is unknown; only HTTPRoute scenarios run against it`;
  }
  return `GatewayClass ${className} does not list ${feature} in status.supportedFeatures (it lists ${supportedFeatures.join(', ')})`;
}

const listenerName = (l: ListenerRoute) => `${l.kind.toLowerCase()}-${l.port}`;

/**
 * The Gateway and one route per listener, labelled with the run. The run label also goes on the
 * Gateway's infrastructure when the class supports it, so that the dataplane it generates can be
 * told apart from another run's on the same cluster.
 */
export function gatewayObjects(spec: GatewayObjectsSpec): { gateway: KubeObject; routes: KubeObject[] } {
  const labels = { [LABELS.run]: spec.runId, [LABELS.managedBy]: 'zerodrop' };
  const infrastructure = spec.supportedFeatures.includes(INFRASTRUCTURE_FEATURE) ? { infrastructure: { labels: { [LABELS.run]: spec.runId } } } : {};
  const gateway: KubeObject = {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: spec.gatewayName, namespace: spec.namespace, labels },
    spec: {
      gatewayClassName: spec.className,
      listeners: spec.listeners.map((l) => ({ name: listenerName(l), port: l.port, protocol: ROUTE_KINDS[l.kind].protocol })),
      ...infrastructure,
    },
  };
  const routes = spec.listeners.map((l): KubeObject => {
    const rule = { backendRefs: [{ name: l.backend.service, port: l.backend.port }] };
    return {
      apiVersion: ROUTE_KINDS[l.kind].apiVersion,
      kind: l.kind,
      metadata: { name: `${spec.gatewayName}-${listenerName(l)}`, namespace: spec.namespace, labels },
      spec: { parentRefs: [{ name: spec.gatewayName, sectionName: listenerName(l) }], rules: [rule] },
    };
  });
  return { gateway, routes };
}

/** Models manifests.ts has no entry for, keyed like its table. */
const ROUTE_MODELS = {
  'gateway.networking.k8s.io/v1/GRPCRoute': (d: KubeObject) => new GRPCRoute(d as never),
  'gateway.networking.k8s.io/v1alpha2/TCPRoute': (d: KubeObject) => new TCPRoute(d as never),
};

/** Throws ManifestError listing every object that does not match its Gateway API schema. */
export function validateGatewayObjects(objects: readonly KubeObject[]): void {
  validateManifests(objects, ROUTE_MODELS);
}
