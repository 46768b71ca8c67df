// Meshes under the backends: the reference backend runs unchanged in the run's namespace, and the
// namespace is enrolled in a mesh, so that the backend scenarios judge the mesh's part of the drain
// (seed 001: does a Linkerd-injected backend keep accepting after SIGTERM? seed 003: ztunnel's
// drain). A mesh absent from the cluster is installed from pinned charts; one already there is used
// as it is and left so. Each has a `-naive` twin with the setting its documentation warns about.
//
// Sources:
// - Linkerd (https://linkerd.io/2-edge/tasks/install-helm/): Gateway API CRDs first, then the
//   linkerd-crds chart, then linkerd-control-plane with identityTrustAnchorsPEM and
//   identity.issuer.tls.crtPEM/keyPEM (which a Helm install must be given: linkerd-certs.ts).
//   linkerd-crds' installGatewayAPI defaults to false (linkerd/linkerd2 charts/linkerd-crds/values.yaml).
//   Enrolment: the annotation linkerd.io/inject=enabled on the namespace (https://linkerd.io/2/features/proxy-injection/).
//   On SIGTERM the proxy "will immediately begin a graceful shutdown where it refuses all new
//   requests" (linkerd/website PR 1858, quoting https://linkerd.io/2.16/tasks/graceful-shutdown/);
//   config.alpha.linkerd.io/proxy-wait-before-exit-seconds keeps it alive that long after SIGTERM, no
//   longer than the grace period (https://linkerd.io/2.15/reference/proxy-configuration/, which also
//   says not to combine it with native sidecars). The naive twin is Linkerd without it.
//   Chart version 2026.9.1 (edge-26.9.1): the latest in https://helm.linkerd.io/edge/index.yaml on
//   2026-09-10, as recorded by a public repository that vendors both charts; not re-checked here.
// - Istio ambient (https://istio.io/latest/docs/ambient/install/helm): Gateway API CRDs when
//   absent, base, istiod and cni with profile=ambient, then ztunnel. Enrolment: the namespace label
//   istio.io/dataplane-mode=ambient. ztunnel's terminationGracePeriodSeconds (default 30) is both the
//   kubelet's grace and, less 1 s, how long ztunnel drains its connections (istio/istio
//   manifests/charts/ztunnel/values.yaml); the naive twin gives it 2 s, a drain of 1 s.
//   Version 1.30.5 (Istio's charts carry the release's version): "Announcing Istio 1.30.5",
//   https://istio.io/latest/zh/news/releases/1.30.x/announcing-1.30.5/ (the 1.30.x patch after 1.30.4
//   of 2026-08-27). Not 1.29: "Announcing Istio 1.29.9" says 1.29 reached end of life on 2026-10-15.
// - Gateway API CRDs v1.5.1: Istio 1.30's upgrade notes, "Gateway API CRDs must be upgraded to v1.5.x"
//   (https://istio.io/latest/news/releases/1.30.x/announcing-1.30/upgrade-notes/): 1.30 depends on
//   v1.5.1 and reads TLSRoute and ReferenceGrant from the standard channel; older CRDs hide them
//   from istiod. The release asset is applied server-side (large CRDs; gateway-api#4156).

import { HELM_INSTALL_HINT, type HelmChart } from './helm-charts.ts';
import type { LinkerdIdentity } from './linkerd-certs.ts';
import type { Profile } from './profile.ts';
import { referenceProfile } from './reference.ts';
import { preStopOutlastsDeprogramming } from './gateway-drain.ts';
import type { Toleration } from '../model/verdict.ts';

/** Gateway API CRDs, installed first when the cluster has none (both meshes' docs ask for them). */
export const GATEWAY_API_CRDS = {
  version: 'v1.5.1',
  url: 'https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.5.1/standard-install.yaml',
  /** The CRD whose presence means the Gateway API is installed (the istio docs' own check). */
  probe: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gateways.gateway.networking.k8s.io',
} as const;

export interface MeshChart {
  chart: HelmChart;
  namespace: string;
  values: Record<string, unknown>;
}

export interface MeshSpec {
  mesh: 'linkerd' | 'istio-ambient';
  seed: '001' | '003';
  /** The object whose presence means the mesh is installed; then nothing is installed and the mesh is left as it was. */
  presentWhen: { path: string; what: string };
  /** In install order, after the Gateway API CRDs. */
  charts: (identity: LinkerdIdentity | undefined) => MeshChart[];
  /** What enrols the run's namespace. */
  namespaceLabels: Record<string, string>;
  namespaceAnnotations: Record<string, string>;
  docs: string;
}

export const LINKERD_VERSION = '2026.9.1';
export const ISTIO_VERSION = '1.30.5';
export const WAIT_BEFORE_EXIT = 'config.alpha.linkerd.io/proxy-wait-before-exit-seconds';
/** How long the injected proxy keeps serving after SIGTERM in the drain-correct profile: longer than the reference backend's drain. */
export const LINKERD_WAIT_SECONDS = 10;

const linkerdRepo = 'https://helm.linkerd.io/edge';
const istioRepo = 'https://istio-release.storage.googleapis.com/charts';

function linkerd(naive: boolean): MeshSpec {
  return {
    mesh: 'linkerd',
    seed: '001',
    presentWhen: { path: '/apis/apps/v1/namespaces/linkerd/deployments/linkerd-destination', what: 'Deployment linkerd/linkerd-destination' },
    charts: (identity) => {
      if (!identity) throw new Error('a Linkerd install needs its trust anchor and issuer (linkerdIdentity())');
      return [
        { chart: { chart: 'linkerd-crds', repo: linkerdRepo, version: LINKERD_VERSION, release: 'linkerd-crds' }, namespace: 'linkerd', values: { installGatewayAPI: false } },
        {
          chart: { chart: 'linkerd-control-plane', repo: linkerdRepo, version: LINKERD_VERSION, release: 'linkerd-control-plane' },
          namespace: 'linkerd',
          values: { identityTrustAnchorsPEM: identity.trustAnchorPEM, identity: { issuer: { tls: { crtPEM: identity.issuerCertPEM, keyPEM: identity.issuerKeyPEM } } } },
        },
      ];
    },
    namespaceLabels: {},
    namespaceAnnotations: { 'linkerd.io/inject': 'enabled', ...(naive ? {} : { [WAIT_BEFORE_EXIT]: String(LINKERD_WAIT_SECONDS) }) },
    docs: 'https://linkerd.io/2.16/tasks/graceful-shutdown/',
  };
}

function istioAmbient(naive: boolean): MeshSpec {
  const chart = (name: string, release: string, values: Record<string, unknown> = {}): MeshChart => ({
    chart: { chart: name, repo: istioRepo, version: ISTIO_VERSION, release },
    namespace: 'istio-system',
    values,
  });
  return {
    mesh: 'istio-ambient',
    seed: '003',
    presentWhen: { path: '/apis/apps/v1/namespaces/istio-system/daemonsets/ztunnel', what: 'DaemonSet istio-system/ztunnel' },
    charts: () => [
      chart('base', 'istio-base'),
      chart('istiod', 'istiod', { profile: 'ambient' }),
      chart('cni', 'istio-cni', { profile: 'ambient' }),
      chart('ztunnel', 'ztunnel', naive ? { terminationGracePeriodSeconds: 2 } : {}),
    ],
    namespaceLabels: { 'istio.io/dataplane-mode': 'ambient' },
    namespaceAnnotations: {},
    docs: 'https://istio.io/latest/docs/ambient/install/helm',
  };
}

/** The profiles' mesh specs, by profile name. */
export const MESHES: Readonly<Record<string, MeshSpec>> = {
  linkerd: linkerd(false),
  'linkerd-naive': linkerd(true),
  'istio-ambient': istioAmbient(false),
  'istio-ambient-naive': istioAmbient(true),
};

const DESCRIPTIONS: Record<string, string> = {
  linkerd: `[seed 001] the reference backend injected with Linkerd ${LINKERD_VERSION}, the proxy kept ${LINKERD_WAIT_SECONDS} s after SIGTERM (${WAIT_BEFORE_EXIT})`,
  'linkerd-naive': `[seed 001] the reference backend injected with Linkerd ${LINKERD_VERSION} without wait-before-exit: the proxy refuses new requests at SIGTERM`,
  'istio-ambient': `[seed 003] the reference backend enrolled in Istio ${ISTIO_VERSION} ambient (ztunnel drains for its grace period less 1 s, 29 s by default)`,
  'istio-ambient-naive': `[seed 003] Istio ${ISTIO_VERSION} ambient with ztunnel's grace period cut to 2 s: 1 s of drain`,
};

/**
 * The scenarios a mesh's naive twin is expected to pass, each with why (expected.ts reads these as
 * it reads a scenario's own `tolerates`; `*` is every scenario). The twins play the reference
 * backend, so what differs is only the mesh's own shutdown:
 * - linkerd-naive: on SIGTERM the proxy "refuses all new requests and allows existing requests to
 *   complete" (https://linkerd.io/2/tasks/graceful-shutdown/), and it has no preStop, so it gets
 *   SIGTERM at the delete while the backend's preStop keeps the pod programmed: new requests in
 *   that window fail (backend-delete-http, -rollout-http, -sigterm-keeps-accepting, node-drain-http
 *   catch it, and backend-delete-grpc, backend-rollout-grpc and node-drain-grpc, whose channels keep
 *   starting calls on their connections). A
 *   scenario whose connections all exist before the delete, and carry no new request, meets no refusal.
 * - istio-ambient-naive: the twin cuts ztunnel's grace period, which only a ztunnel restart uses;
 *   every scenario of the catalog deletes backend pods, never ztunnel, so none can tell the twin
 *   apart (MESH_AWAITING_SCENARIO).
 */
export const MESH_TOLERATES: Readonly<Record<string, Readonly<Record<string, Toleration>>>> = {
  'linkerd-naive': {
    'backend-idle-exit': 'no traffic: the proxy refuses new requests at SIGTERM, and none come',
    'backend-long-request': 'its one request is in flight before SIGTERM, and the proxy lets existing requests complete; no other connection comes',
    'backend-delete-tcp-stream': pastDeprogramming('every stream is open before the delete and reconnects only once the backend has closed it, past deprogramming; the proxy keeps existing connections'),
    'backend-delete-websocket': pastDeprogramming('every WebSocket is open before the delete and reconnects only once the backend has closed it, past deprogramming; the proxy keeps existing connections'),
    'backend-rollout-websocket': pastDeprogramming('every WebSocket is open before the restart and reconnects only once an old pod has closed it, past deprogramming; the proxy keeps existing connections'),
    'backend-delete-sse': pastDeprogramming('every event stream is a request made before the delete, which the proxy lets complete; reconnects come after the backend ended it, past deprogramming'),
    'backend-rollout-sse': pastDeprogramming('every event stream is a request made before the restart, which the proxy lets complete; reconnects come after an old pod ended it, past deprogramming'),
    'node-drain-websocket': pastDeprogramming('every WebSocket is open before the eviction and reconnects only once the evicted pod has closed it, past deprogramming; the proxy keeps existing connections'),
    'node-drain-sse': pastDeprogramming('every event stream is a request made before the eviction, which the proxy lets complete; reconnects come after the evicted pod ended it, past deprogramming'),
  },
  'istio-ambient-naive': {
    '*': "the scenario deletes backend pods, never ztunnel: the twin's 2 s ztunnel grace period is never used",
  },
};

/**
 * A naive twin's toleration that rests on the backend's preStop: reconnects come only after the
 * backend closed its connections, past deprogramming, so none meets the proxy that refuses new ones.
 * A run whose preStop is shorter than deprogramming (`--set preStopSeconds=0`) expects nothing.
 */
function pastDeprogramming(why: string): Toleration {
  return { why, holds: preStopOutlastsDeprogramming };
}

/** Mesh twins no scenario of the catalog can catch yet, and the scenario each awaits. */
export const MESH_AWAITING_SCENARIO: Readonly<Record<string, string>> = {
  'istio-ambient-naive': "seed 003's ztunnel drain needs a scenario that restarts the ztunnel DaemonSet under load",
};

/** Why a mesh profile cannot run on this provider, or undefined when it can. */
export function meshUnsupported(profile: Pick<Profile, 'name'>, provider: { name: string; capabilities: { meshes?: boolean } }): string | undefined {
  if (!(profile.name in MESHES)) return undefined;
  if (provider.name === 'local') return `profile ${profile.name} enrols the run's namespace in a mesh: it runs only on a cluster provider (--provider kind|k3s|cluster)`;
  if (!provider.capabilities.meshes) return `profile ${profile.name}: provider ${provider.name} cannot install or enrol a mesh yet, and the reference backend without the mesh would measure nothing of it`;
  return undefined;
}

/** The reference backend, and no gateway role: the mesh is judged under the backends only. */
export const meshProfiles: readonly Profile[] = Object.keys(MESHES).map((name): Profile => {
  const backend = referenceProfile.backend;
  return {
    name,
    kind: name.endsWith('-naive') ? 'naive' : 'system',
    description: DESCRIPTIONS[name] ?? name,
    requires: [{ binary: 'helm', install: HELM_INSTALL_HINT }],
    ...(backend ? { backend } : {}),
  };
});
