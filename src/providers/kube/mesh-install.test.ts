import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { GATEWAY_API_CRDS, ISTIO_VERSION, LINKERD_VERSION, MESHES, meshProfiles, meshUnsupported, WAIT_BEFORE_EXIT } from '../../profiles/meshes.ts';
import { linkerdIdentityProblems } from '../../profiles/linkerd-certs.ts';
import { KubeClient } from './client.ts';
import { FakeApiServer } from '../../../test-support/fake-api-server.ts';
import { carryOutMeshInstall, enrolledNamespace, MeshUnavailable, planMeshInstall } from './mesh-install.ts';

const NS = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'zerodrop-abcd1234', labels: { 'zerodrop.dev/run': 'abcd1234' } } };

describe('mesh installs against a fake API server', () => {
  let fake: FakeApiServer;
  afterEach(async () => {
    await fake.close();
  });
  async function setup(present: string[]) {
    fake = await new FakeApiServer().listen();
    fake.respond((r) => (r.method === 'GET' ? (present.includes(r.path) ? { status: 200, body: { metadata: { name: 'x' } } } : { status: 404, body: { kind: 'Status', code: 404 } }) : undefined));
    return KubeClient.forServer(fake.url);
  }

  it('Linkerd absent on kind: Gateway API CRDs, then linkerd-crds, then the control plane with a fresh, valid identity', async () => {
    const client = await setup([]);
    const plan = await planMeshInstall(client, MESHES['linkerd']!, { provider: 'kind' });
    expect(plan.gatewayApiCrds).toBe(true);
    expect(plan.charts.map((c) => `${c.namespace}/${c.chart.chart}@${c.chart.version}`)).toEqual([`linkerd/linkerd-crds@${LINKERD_VERSION}`, `linkerd/linkerd-control-plane@${LINKERD_VERSION}`]);
    expect(plan.charts[0]?.values).toEqual({ installGatewayAPI: false });
    const values = plan.charts[1]?.values as { identityTrustAnchorsPEM: string; identity: { issuer: { tls: { crtPEM: string; keyPEM: string } } } };
    const identity = { trustAnchorPEM: values.identityTrustAnchorsPEM, issuerCertPEM: values.identity.issuer.tls.crtPEM, issuerKeyPEM: values.identity.issuer.tls.keyPEM };
    expect(linkerdIdentityProblems(identity)).toEqual([]);
    expect(new X509Certificate(identity.issuerCertPEM).issuer).toBe('CN=root.linkerd.cluster.local');
    expect(plan.note).toBe(`linkerd not found (no Deployment linkerd/linkerd-destination): installing Gateway API CRDs ${GATEWAY_API_CRDS.version}, then linkerd-crds ${LINKERD_VERSION}, then linkerd-control-plane ${LINKERD_VERSION}`);
    // Planning only reads.
    expect(fake.requests.every((r) => r.method === 'GET')).toBe(true);
  });

  it('Istio ambient absent on kind, Gateway API present: base, istiod and cni with profile=ambient, then ztunnel', async () => {
    const client = await setup([GATEWAY_API_CRDS.probe]);
    const plan = await planMeshInstall(client, MESHES['istio-ambient']!, { provider: 'kind' });
    expect(plan.gatewayApiCrds).toBe(false);
    expect(plan.charts.map((c) => [c.chart.release, c.chart.chart, c.chart.version, c.namespace, c.values])).toEqual([
      ['istio-base', 'base', ISTIO_VERSION, 'istio-system', {}],
      ['istiod', 'istiod', ISTIO_VERSION, 'istio-system', { profile: 'ambient' }],
      ['istio-cni', 'cni', ISTIO_VERSION, 'istio-system', { profile: 'ambient' }],
      ['ztunnel', 'ztunnel', ISTIO_VERSION, 'istio-system', {}],
    ]);
    const naive = await planMeshInstall(client, MESHES['istio-ambient-naive']!, { provider: 'kind' });
    expect(naive.charts.at(-1)?.values).toEqual({ terminationGracePeriodSeconds: 2 });
  });

  it('a mesh already installed is used as it is: nothing to install', async () => {
    const client = await setup(['/apis/apps/v1/namespaces/istio-system/daemonsets/ztunnel']);
    expect(await planMeshInstall(client, MESHES['istio-ambient']!, { provider: 'cluster' })).toEqual({
      gatewayApiCrds: false,
      charts: [],
      note: 'istio-ambient found (DaemonSet istio-system/ztunnel): used as installed, left as it was',
    });
  });

  it('mutant: a missing mesh on a cluster zerodrop did not create stops the run, naming what to install', async () => {
    const client = await setup([]);
    await expect(planMeshInstall(client, MESHES['linkerd']!, { provider: 'cluster' })).rejects.toThrow(MeshUnavailable);
    await expect(planMeshInstall(client, MESHES['linkerd']!, { provider: 'cluster' })).rejects.toThrow('linkerd is not installed on this cluster (no Deployment linkerd/linkerd-destination), and zerodrop installs nothing cluster-wide');
  });
});

describe("the run's namespace, enrolled", () => {
  it('Linkerd: inject annotation, and wait-before-exit only in the drain-correct profile', () => {
    const on = enrolledNamespace(NS, MESHES['linkerd'], {});
    expect(on.metadata['annotations']).toEqual({ 'linkerd.io/inject': 'enabled', [WAIT_BEFORE_EXIT]: '10' });
    expect(on.metadata['labels']).toEqual({ 'zerodrop.dev/run': 'abcd1234' });
    const naive = enrolledNamespace(NS, MESHES['linkerd-naive'], {});
    expect(naive.metadata['annotations']).toEqual({ 'linkerd.io/inject': 'enabled' });
  });

  it("Istio ambient: the dataplane-mode label beside the run's label, and the user's own labels kept", () => {
    const ns = enrolledNamespace(NS, MESHES['istio-ambient'], { labels: { team: 'edge' }, annotations: { note: 'x' } });
    expect(ns.metadata['labels']).toEqual({ 'zerodrop.dev/run': 'abcd1234', team: 'edge', 'istio.io/dataplane-mode': 'ambient' });
    expect(ns.metadata['annotations']).toEqual({ note: 'x' });
  });

  it('--namespace-labels without a mesh profile apply as given (Linkerd enrolled by hand, as the conformance suite does)', () => {
    expect(enrolledNamespace(NS, undefined, { annotations: { 'linkerd.io/inject': 'enabled' } }).metadata['annotations']).toEqual({ 'linkerd.io/inject': 'enabled' });
  });

  it('mutant: a user value that contradicts the enrolment is refused, naming both', () => {
    expect(() => enrolledNamespace(NS, MESHES['istio-ambient'], { labels: { 'istio.io/dataplane-mode': 'none' } })).toThrow(
      "--namespace-labels istio.io/dataplane-mode=none contradicts the istio-ambient profile's enrolment istio.io/dataplane-mode=ambient",
    );
  });

  it('mutant: a Namespace the schema refuses (a label that is no string, from a config that bypassed the type) is caught before anything is sent', () => {
    expect(() => enrolledNamespace(NS, undefined, { labels: { a: 5 as unknown as string } })).toThrow('data/metadata/labels/a must be string');
  });
});

describe('mesh profiles', () => {
  it('are listed with the seed each answers, and need helm', () => {
    expect(meshProfiles.map((p) => [p.name, p.kind, p.description.slice(0, 10)])).toEqual([
      ['linkerd', 'system', '[seed 001]'],
      ['linkerd-naive', 'naive', '[seed 001]'],
      ['istio-ambient', 'system', '[seed 003]'],
      ['istio-ambient-naive', 'naive', '[seed 003]'],
    ]);
    for (const p of meshProfiles) {
      expect(p.requires.map((r) => r.binary)).toEqual(['helm']);
      expect(p.backend).toBeDefined();
      expect(p.gateway).toBeUndefined();
    }
  });

  it('are skipped on the local provider, and on a provider that cannot enrol a mesh, with the reason', () => {
    expect(meshUnsupported({ name: 'linkerd' }, { name: 'local', capabilities: {} })).toBe("profile linkerd enrols the run's namespace in a mesh: it runs only on a cluster provider (--provider kind|k3s|cluster)");
    expect(meshUnsupported({ name: 'istio-ambient' }, { name: 'kind', capabilities: {} })).toMatch(/^profile istio-ambient: provider kind cannot install or enrol a mesh yet/);
    expect(meshUnsupported({ name: 'istio-ambient' }, { name: 'kind', capabilities: { meshes: true } })).toBeUndefined();
    expect(meshUnsupported({ name: 'reference' }, { name: 'local', capabilities: {} })).toBeUndefined();
  });
});

describe('carrying out a mesh install (a stand-in helm, the fake API server)', () => {
  let fake: FakeApiServer;
  afterEach(async () => {
    await fake.close();
  });
  const crd = (name: string) => `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ${name}\nspec: {}\n`;
  const manifest = ['# a comment document', crd('gateways.gateway.networking.k8s.io'), crd('httproutes.gateway.networking.k8s.io'), 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gateway-system\n'].join('---\n');

  async function setup(establishes: boolean) {
    fake = await new FakeApiServer().listen();
    const applied = new Set<string>();
    fake.respond((r) => {
      if (r.method === 'PATCH') {
        applied.add(r.path);
        return { status: 200, body: r.body };
      }
      if (r.method === 'GET' && r.path === GATEWAY_API_CRDS.probe && !applied.has(r.path)) return { status: 404, body: { code: 404 } };
      if (r.method === 'GET' && r.path.includes('/customresourcedefinitions/')) {
        return { status: 200, body: { status: { conditions: [{ type: 'Established', status: establishes && applied.has(r.path) ? 'True' : 'False' }] } } };
      }
      if (r.method === 'GET') return { status: 404, body: { code: 404 } };
      return undefined;
    });
    const helmCalls: { args: string[]; values: unknown }[] = [];
    const helm = async (args: string[]) => {
      const valuesFile = args[args.indexOf('--values') + 1] ?? '';
      helmCalls.push({ args, values: parse(readFileSync(valuesFile, 'utf8')) });
    };
    return { client: KubeClient.forServer(fake.url), helm, helmCalls };
  }

  it('Gateway API CRDs applied and Established, then each chart into its namespace, created first, in order', async () => {
    const { client, helm, helmCalls } = await setup(true);
    const plan = await planMeshInstall(client, MESHES['linkerd']!, { provider: 'kind' });
    await carryOutMeshInstall(client, plan, { kubeconfig: 'apiVersion: v1', helm, fetchText: async () => manifest, pollMs: 5 });
    const writes = fake.requests.filter((r) => r.method === 'PATCH').map((r) => r.path);
    expect(writes).toEqual([
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gateways.gateway.networking.k8s.io',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/httproutes.gateway.networking.k8s.io',
      '/api/v1/namespaces/linkerd',
      '/api/v1/namespaces/linkerd',
    ]);
    expect(helmCalls.map((c) => c.args.slice(0, 8))).toEqual([
      ['upgrade', '--install', 'linkerd-crds', 'linkerd-crds', '--repo', 'https://helm.linkerd.io/edge', '--version', LINKERD_VERSION],
      ['upgrade', '--install', 'linkerd-control-plane', 'linkerd-control-plane', '--repo', 'https://helm.linkerd.io/edge', '--version', LINKERD_VERSION],
    ]);
    expect(helmCalls.map((c) => c.args[c.args.indexOf('--namespace') + 1])).toEqual(['linkerd', 'linkerd']);
    // The values reach helm as written: the identity's PEMs intact through the values file.
    const values = helmCalls[1]?.values as { identityTrustAnchorsPEM: string; identity: { issuer: { tls: { crtPEM: string; keyPEM: string } } } };
    expect(linkerdIdentityProblems({ trustAnchorPEM: values.identityTrustAnchorsPEM, issuerCertPEM: values.identity.issuer.tls.crtPEM, issuerKeyPEM: values.identity.issuer.tls.keyPEM })).toEqual([]);
  });

  it('mutant: CRDs that never become Established stop the install before any chart, naming the CRD', async () => {
    const { client, helm, helmCalls } = await setup(false);
    const plan = await planMeshInstall(client, MESHES['istio-ambient']!, { provider: 'kind' });
    await expect(carryOutMeshInstall(client, plan, { kubeconfig: 'x', helm, fetchText: async () => manifest, pollMs: 5, timeoutMs: 50 })).rejects.toThrow(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gateways.gateway.networking.k8s.io not Established within 0.05 s',
    );
    expect(helmCalls).toEqual([]);
  });

  it('mutant: a manifest without CRDs (a wrong URL\'s page) is refused', async () => {
    const { client, helm } = await setup(true);
    const plan = await planMeshInstall(client, MESHES['istio-ambient']!, { provider: 'kind' });
    await expect(carryOutMeshInstall(client, plan, { kubeconfig: 'x', helm, fetchText: async () => '<html>not found</html>' })).rejects.toThrow('held no CustomResourceDefinition');
  });

  it('a mesh already there: nothing is written', async () => {
    const { client, helm, helmCalls } = await setup(true);
    await carryOutMeshInstall(client, { gatewayApiCrds: false, charts: [], note: 'found' }, { kubeconfig: 'x', helm });
    expect(fake.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(helmCalls).toEqual([]);
  });
});
