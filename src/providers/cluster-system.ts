// What a run is told about a system already on the cluster (Gateway API conformance's names:
// --gateway-class, --namespace-labels, --namespace-annotations; plus --dataplane-selector). Kept
// apart from the Kubernetes modules so that parsing a local run's flags loads none of them.

/** The conformance suite's defaults (kubernetes-sigs/gateway-api conformance/utils/config/timeout.go), in milliseconds. */
export const CONFORMANCE_TIMEOUTS = {
  gatewayClassMustBeAccepted: 180_000,
  gatewayMustHaveCondition: 180_000,
  gatewayMustHaveAddress: 180_000,
} as const;

export type GatewayTimeoutName = keyof typeof CONFORMANCE_TIMEOUTS;
export type GatewayTimeouts = Record<GatewayTimeoutName, number>;

export interface GatewayClassSettings {
  /** The GatewayClass of the implementation under test (conformance: --gateway-class, gatewayClassName). */
  name: string;
  /** A label selector for the dataplane pods, when the discovery rules do not find them. */
  dataplaneSelector?: string;
  timeouts: GatewayTimeouts;
}

export interface ClusterSystemSettings {
  gatewayClass?: GatewayClassSettings;
  /** Added to the run's namespace (a mesh's enrolment label, a policy's selector). */
  namespaceLabels?: Record<string, string>;
  namespaceAnnotations?: Record<string, string>;
}

/**
 * The run's namespace label (manifests.ts LABELS.run, which a test holds equal to this): named here
 * too so that flag checks can refuse it without loading the manifest models.
 */
export const RUN_LABEL = 'zerodrop.dev/run';
