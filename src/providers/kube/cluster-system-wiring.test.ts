// How --namespace-labels, --namespace-annotations and --gateway-class reach a cluster run: the
// namespace the kube provider applies, and the scenarios a session refuses rather than measure the
// wrong system.

import { afterEach, describe, expect, it } from 'vitest';
import { Recorder } from '../../observe/recorder.ts';
import { packageRoot } from '../../paths.ts';
import { MESHES, meshProfiles } from '../../profiles/meshes.ts';
import { referenceProfile } from '../../profiles/reference.ts';
import { optionsFor, runMatrix } from '../../runner/run-matrix.ts';
import { findScenario } from '../../scenarios/index.ts';
import { CONFORMANCE_TIMEOUTS } from '../cluster-system.ts';
import { localSession } from '../index.ts';
import { kubeSession } from '../kube-session.ts';
import { KubeClient } from './client.ts';
import { FakeApiServer } from '../../../test-support/fake-api-server.ts';
import { KubeProvider } from './kube-provider.ts';
import { gatewayClassProfile } from '../../scenarios/gateway-class-profile.ts';

const RUN = 'c0ffee00';
const NS = `zerodrop-${RUN}`;
const deleteHttp = findScenario('backend-delete-http')!;
const gatewayDelete = findScenario('gateway-delete-http')!;

describe("the run's namespace on a cluster", () => {
  let fake: FakeApiServer;
  afterEach(async () => {
    await fake.close();
  });

  it('carries --namespace-labels and --namespace-annotations beside the run label; without them, only the run label', async () => {
    fake = await new FakeApiServer().listen();
    for (const p of ['pods', 'events']) fake.serve(`/api/v1/namespaces/${NS}/${p}`);
    fake.serve(`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`);
    // Neither the run's namespace nor any mesh exists yet.
    const absent = [`/api/v1/namespaces/${NS}`, '/apis/apps/v1/namespaces/linkerd/deployments/linkerd-destination', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gateways.gateway.networking.k8s.io'];
    fake.respond((r) => (r.method === 'GET' && absent.includes(r.path) ? { status: 404, body: { code: 404 } } : undefined));
    const namespaces = () => fake.requests.filter((r) => r.method === 'PATCH' && (r.body as { kind?: string }).kind === 'Namespace').map((r) => (r.body as { metadata: unknown }).metadata);
    const deployOnce = async (extra: Partial<ConstructorParameters<typeof KubeProvider>[0]>) => {
      const provider = new KubeProvider({
        name: 'kind',
        client: KubeClient.forServer(fake.url),
        recorder: new Recorder(),
        runId: RUN,
        cwd: packageRoot,
        exposure: { kind: 'loadBalancer' },
        capabilities: { multiNode: true, udp: true },
        allowNodeOperations: false,
        pollMs: 20,
        minDeployTimeoutMs: 0,
        dataplaneReady: { probe: async () => {}, programmingBoundMs: 0 },
        ...extra,
      });
      const topology = deleteHttp.build(referenceProfile, optionsFor(deleteHttp, {}, false)).topology;
      // No controller answers here: the deploy gives up waiting for pods, after the namespace is applied.
      await provider.deploy(topology, { timeoutMs: 100 }).catch(() => undefined);
      await provider.teardown().catch(() => undefined);
    };
    await deployOnce({ namespaceLabels: { 'istio.io/dataplane-mode': 'ambient' }, namespaceAnnotations: { 'linkerd.io/inject': 'enabled' } });
    await deployOnce({});
    // A mesh profile: the mesh is planned and carried out before the namespace exists, and the namespace is enrolled.
    const order: string[] = [];
    fake.respond((r) => {
      if (r.method === 'PATCH' && (r.body as { kind?: string }).kind === 'Namespace') order.push('namespace applied');
      return undefined;
    }, { first: true });
    await deployOnce({
      mesh: MESHES['linkerd']!,
      meshInstall: async (_client, plan) => void order.push(`mesh: ${plan.charts.map((c) => c.chart.chart).join(', ')}`),
    });
    expect(order).toEqual(['mesh: linkerd-crds, linkerd-control-plane', 'namespace applied']);
    expect(namespaces()).toEqual([
      { name: NS, labels: { 'zerodrop.dev/run': RUN, 'app.kubernetes.io/managed-by': 'zerodrop', 'istio.io/dataplane-mode': 'ambient' }, annotations: { 'linkerd.io/inject': 'enabled' } },
      { name: NS, labels: { 'zerodrop.dev/run': RUN, 'app.kubernetes.io/managed-by': 'zerodrop' } },
      { name: NS, labels: { 'zerodrop.dev/run': RUN, 'app.kubernetes.io/managed-by': 'zerodrop' }, annotations: { 'linkerd.io/inject': 'enabled', 'config.alpha.linkerd.io/proxy-wait-before-exit-seconds': '10' } },
    ]);
  });
});

describe('--gateway-class on a cluster session', () => {
  const session = (gatewayClass?: string) =>
    kubeSession('kind', KubeClient.forServer('http://127.0.0.1:9'), { kind: 'loadBalancer' }, {
      allowNodeOperations: false,
      multiNode: true,
      containerStopSignals: true,
      ...(gatewayClass ? { system: { gatewayClass: { name: gatewayClass, timeouts: { ...CONFORMANCE_TIMEOUTS } } } } : {}),
    });

  it('a cluster session enrols mesh profiles: the provider it creates for one carries the mesh', () => {
    const created = session().create({ recorder: new Recorder(), runId: RUN, cwd: packageRoot, profile: 'istio-ambient' });
    expect(created.capabilities.meshes).toBe(true);
    expect(meshProfiles.map((p) => p.name).every((name) => name in MESHES)).toBe(true);
  });

  it("gateway scenarios go to the class's profile, backend scenarios to the others; each refusal says why", () => {
    const classProfile = gatewayClassProfile('eg');
    expect(classProfile.name).toBe('gatewayclass-eg');
    expect(session('eg').unsupported?.(gatewayDelete, classProfile)).toBeUndefined();
    expect(session('eg').unsupported?.(gatewayDelete, referenceProfile)).toBe(
      "--gateway-class eg: the gateway in this run is the class's dataplane (profile gatewayclass-eg); profile reference is not measured as a gateway",
    );
    expect(session('eg').unsupported?.(deleteHttp, classProfile)).toBe('GatewayClass eg plays the gateway role only; backend scenarios run with the other profiles');
    expect(session('eg').unsupported?.(deleteHttp, referenceProfile)).toBeUndefined();
    expect(session().unsupported?.(gatewayDelete, referenceProfile)).toBeUndefined();
  });

  it("a session with a class moves routes through the Gateway API; one without cannot move them", () => {
    expect(session('eg').capabilities.routeChanges).toBe('gateway-api');
    expect(session().capabilities.routeChanges).toBeUndefined();
  });

  it("the provider made for the class's profile is given the class; the others are not", () => {
    const given = (profile: string) => (session('eg').create({ recorder: new Recorder(), runId: RUN, cwd: packageRoot, profile }) as unknown as { opts: { gatewayClass?: { name: string } } }).opts.gatewayClass?.name;
    expect(given('gatewayclass-eg')).toBe('eg');
    expect(given('reference')).toBeUndefined();
  });

  it("runMatrix reports a session's refusal as skipped, with its words, and a mesh profile on local as skipped", async () => {
    const local = localSession();
    const refusing = { ...local, unsupported: () => 'not on this session', create: local.create };
    const run = await runMatrix({ provider: 'kind', session: refusing, scenarios: [deleteHttp], profiles: [referenceProfile], overrides: {}, nightly: false, signal: AbortSignal.timeout(30_000), keepTimeline: false });
    expect(run.scenarios.map((s) => [s.verdict, s.reason])).toEqual([['skipped', 'not on this session']]);
    // helm on PATH or not, a mesh profile never runs locally: skipped for one reason or the other.
    const mesh = await runMatrix({ provider: 'local', scenarios: [deleteHttp], profiles: [meshProfiles[0]!], overrides: {}, nightly: false, signal: AbortSignal.timeout(30_000), keepTimeline: false });
    expect(mesh.scenarios[0]?.verdict).toBe('skipped');
    expect(mesh.scenarios[0]?.reason).toMatch(/helm not found on PATH|runs only on a cluster provider/);
  });
});
