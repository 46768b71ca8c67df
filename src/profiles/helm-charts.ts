// The chart profile kind: gateways installed with their own Helm charts, on cluster providers only.
// Every chart profile, the built-in ones (helm-gateways.ts) and a team's, is made with the public
// defineHelmProfile (define-helm.ts), which validates the definition and registers it here: the
// chart, where it comes from, the pinned version, the values per run, the objects that configure
// the dataplane and route it to the scenario's backend Service, the container port its dataplane
// listens on. src/providers/kube/helm.ts turns one into `helm` commands and
// src/providers/kube/helm-gateway.ts into the objects of a run.
//
// How a chart plays a scenario's gateway role: the chart's controller creates the dataplane pods in
// the run's namespace, labelled zerodrop.dev/workload=<the gateway workload> through the chart's own
// pod-label setting; the scenario's gateway Service (rendered by zerodrop, type NodePort on kind)
// selects them by that label and targets `dataplanePort`. The chart's own Service is ClusterIP, so
// the traffic path is the same NodePort -> kube-proxy -> pod path as every other profile's.

import { createHash } from 'node:crypto';
import type { DrainEnd } from '../model/scenario.ts';
import type { ChartedDataplane } from '../model/workload.ts';
import { ProfileCannotPlay, type GatewayPlan, type Profile } from './profile.ts';

export interface HelmChart {
  /** Chart name in its repository, an oci:// reference, or a local chart directory or .tgz (absolute). */
  chart: string;
  /** Chart repository URL (omitted for oci:// and local charts). */
  repo?: string;
  /** The chart version; a local chart is installed as it is, whatever it says. */
  version?: string;
  /** Values files given to helm before the run's own values (which override them). */
  valuesFiles?: string[];
  /** Start of the release name; releaseName() adds the run to it (the release goes into the run's namespace). */
  release: string;
}

/** What a run tells a chart: where it is installed and what its gateway must do. */
export interface ChartContext {
  namespace: string;
  /** The gateway workload the dataplane plays: its pods carry zerodrop.dev/workload=<workload>. */
  workload: string;
  replicas: number;
  /** The listener port clients reach (the scenario's gateway Service port). */
  port: number;
  dataplane: ChartedDataplane;
  /**
   * The cluster's pod address ranges: every Node's spec.podCIDRs, read when the run deploys (empty
   * where the run may not read Nodes). A route to addresses rather than to a Service (a STUNner
   * StaticService) covers the backend pods with them.
   */
  podCidrs: readonly string[];
}

export interface ChartObject {
  /** Cluster-scoped objects outlive the namespace: the provider deletes them, and refuses them where it must stay in its namespace. */
  clusterScoped: boolean;
  object: Record<string, unknown>;
}

export interface HelmProfileSpec {
  name: string;
  naive: boolean;
  description: string;
  chart: HelmChart;
  /** What the dataplane carries (ChartedDataplane.protocol); other protocols make the profile unplayable. */
  protocols: readonly ChartedDataplane['protocol'][];
  values: (ctx: ChartContext) => Record<string, unknown>;
  /** Objects applied after the chart (Gateway API objects, Ingress, the system's own CRs). */
  objects: (ctx: ChartContext) => ChartObject[];
  /** Container port of the dataplane for a listener on `port`: the gateway Service's targetPort. */
  dataplanePort: (port: number) => number;
  /** terminationGracePeriodSeconds of the dataplane pods, as the chart's settings make it. */
  graceSeconds: number;
  /** What the documentation promises about the drain, for the timing assertions. */
  drain?: { minDrainSeconds: number; drainTimeoutSeconds: number; exits?: DrainEnd };
  /** Labels of the dataplane pods (ChartedDataplane.selector), when the values do not label them zerodrop.dev/workload. */
  dataplaneSelector?: Record<string, string>;
  /** The Deployment that runs the chart's controller (ChartedDataplane.controller). */
  controller?: { deployment: string };
  docs: string;
}

export const HELM_INSTALL_HINT = 'install Helm 3 (https://helm.sh/docs/intro/install/)';

/** Helm's limit on a release name (maxReleaseNameLen in helm's pkg/chartutil/validate_name.go). */
export const RELEASE_NAME_MAX = 53;

/**
 * The chart's release for the run whose namespace is `namespace`: `<chart.release>-<run>`, so that
 * two runs on one cluster never upgrade each other's release, and the cluster-scoped objects a chart
 * names after its release (ClusterRoles of gateway-helm and ingress-nginx, "<fullname>") differ too.
 * Held to a DNS-1035 label of at most 53 characters (helm's limit, which leaves charts room for the
 * suffixes they append within a 63-character name); a run id that does not fit as it is keeps a
 * prefix and gets a hash of the whole namespace, so that distinct runs keep distinct names.
 */
export function releaseName(chart: Pick<HelmChart, 'release'>, namespace: string): string {
  const run = namespace.replace(/^zerodrop-/, '');
  const clean = run.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '');
  const name = `${chart.release}-${clean}`;
  if (clean === run && clean !== '' && name.length <= RELEASE_NAME_MAX) return name;
  const hash = createHash('sha256').update(namespace).digest('hex').slice(0, 8);
  const room = RELEASE_NAME_MAX - chart.release.length - hash.length - 2;
  const prefix = clean.slice(0, Math.max(0, room)).replace(/-+$/, '');
  return [chart.release, prefix, hash].filter((part) => part !== '').join('-');
}

/** Chart profiles by name: every one is made with defineHelmProfile (the built-in ones in helm-gateways.ts), which registers it here. */
const specs = new Map<string, HelmProfileSpec>();

export function helmProfileSpec(name: string): HelmProfileSpec | undefined {
  return specs.get(name);
}

/** The profile's gateway: the chart's dataplane, routed to the scenario's backend Service. */
function chartGateway(spec: HelmProfileSpec): Profile['gateway'] {
  return (request): GatewayPlan => {
    const protocol = request.protocol === 'turn' ? 'turn' : request.protocol === 'http' ? 'http' : undefined;
    if (!protocol || !spec.protocols.includes(protocol)) {
      throw new ProfileCannotPlay(`profile ${spec.name} carries ${spec.protocols.join(', ')}, not ${request.protocol}`);
    }
    return {
      // Never started by zerodrop: the chart's controller runs the dataplane with its own probes.
      command: [],
      env: {},
      readinessProbe: { handler: { tcpSocket: { port: request.port } }, periodSeconds: 1, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 1, initialDelaySeconds: 0 },
      terminationGracePeriodSeconds: spec.graceSeconds,
      ...(spec.drain ? { drain: spec.drain } : {}),
      installedBy: {
        helmProfile: spec.name,
        protocol,
        routesTo: { service: request.backendService, port: request.backendPort },
        ...(spec.dataplaneSelector ? { selector: spec.dataplaneSelector } : {}),
        ...(spec.controller ? { controller: spec.controller } : {}),
      },
    };
  };
}

/**
 * A validated chart definition as a profile (defineHelmProfile calls it; nothing else does):
 * skipped with the install hint when helm is missing; its gateway is the chart's dataplane, which
 * only cluster providers install (the local provider skips the scenario with the reason,
 * src/providers/support.ts).
 */
export function helmProfile(spec: HelmProfileSpec): Profile {
  const known = specs.get(spec.name);
  if (known !== undefined && known !== spec) throw new Error(`a chart profile named ${spec.name} exists already`);
  specs.set(spec.name, spec);
  return {
    name: spec.name,
    kind: spec.naive ? 'naive' : 'system',
    description: spec.description,
    requires: [{ binary: 'helm', install: HELM_INSTALL_HINT }],
    gateway: chartGateway(spec),
  };
}
