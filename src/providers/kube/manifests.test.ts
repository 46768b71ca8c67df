import { isDeepStrictEqual } from 'node:util';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineProfile } from '../../profiles/define.ts';
import { describe, expect, it, vi } from 'vitest';
import { profiles } from '../../profiles/index.ts';
import { ProfileCannotPlay } from '../../profiles/profile.ts';
import { optionsFor } from '../../runner/run-matrix.ts';
import { packageRoot } from '../../paths.ts';
import { catalog } from '../../scenarios/index.ts';
import type { Topology } from '../../model/workload.ts';
import { KubeProvider } from './kube-provider.ts';
import { disruptionBudgetsOf } from '../../model/workload.ts';
import {
  CONFIG_MOUNT,
  configMapName,
  FIXTURE_SHARED_MODULE,
  FIXTURES_CONFIGMAP,
  FIXTURES_MOUNT,
  fixturesOf,
  ManifestError,
  NODE_IMAGE,
  readFixtures,
  renderTopology,
  validateManifests,
  WITHOUT_PUBLISHED_SCHEMA,
} from './manifests.ts';
import { chartInstalls } from './helm-gateway.ts';
import { parse } from 'yaml';
import { kindConfig, PUBLISHED_NODE_PORTS } from '../kind/kind.ts';
import { unsupported } from '../support.ts';
import { helmProfileSpec } from '../../profiles/helm-charts.ts';
import { REFERENCE_GRPC } from '../../profiles/reference.ts';
import { appBundle, BUNDLED_APPS } from './app-bundle.ts';

/** What a kind cluster zerodrop created can run (src/providers/index.ts gives it these capabilities). */
/** kind's pod subnet (its default networking.podSubnet). */
const POD_CIDRS = ['10.244.0.0/16'];
const KIND = { name: 'kind', capabilities: { multiNode: true, udp: true, nodeDrain: true, containerStopSignals: true } };

function render(topology: Topology) {
  const fixtures = Object.fromEntries(fixturesOf(topology).map((p) => [p, readFileSync(join(packageRoot, p), 'utf8')]));
  const nodePorts = KubeProvider.assignNodePorts(topology, { kind: 'nodePort', host: '127.0.0.1', ports: [...PUBLISHED_NODE_PORTS] });
  return renderTopology(topology, { namespace: 'zerodrop-abcd1234', runId: 'abcd1234', fixtures, ...(nodePorts ? { nodePorts } : {}) });
}

// Every scenario x profile, short defaults and nightly values: what the cluster providers would apply.
const cases = catalog.flatMap((def) => profiles.flatMap((profile) => [false, true].map((nightly) => ({ def, profile, nightly }))));

describe('manifests for every scenario x profile', () => {
  it.each(cases.map((c) => [`${c.def.id} x ${c.profile.name}${c.nightly ? ' (nightly)' : ''}`, c] as const))('%s: renders valid objects or is refused before rendering', (_, { def, profile, nightly }) => {
    let topology: Topology;
    try {
      const scenario = def.build(profile, optionsFor(def, {}, nightly));
      // A scenario a cluster provider skips (src/providers/support.ts) is never rendered either.
      if (unsupported(scenario, KIND)) return;
      topology = scenario.topology;
    } catch (err) {
      // The profile cannot play this scenario's role: the runner skips it; nothing is rendered.
      expect(err).toBeInstanceOf(ProfileCannotPlay);
      return;
    }
    let objects;
    try {
      objects = render(topology);
    } catch (err) {
      // A program with no image for clusters (a real system run from a local binary): refused by name.
      expect(err).toBeInstanceOf(ManifestError);
      expect((err as Error).message).toMatch(/has no image for clusters/);
      return;
    }
    // A charted gateway: the chart's objects are validated too, all but the CRs nobody publishes a schema for.
    const charted = chartInstalls(topology, { namespace: 'zerodrop-abcd1234', runId: 'abcd1234', podCidrs: POD_CIDRS }).flatMap((c) => c.objects.map((o) => o.object));
    let unchecked: string[] = [];
    expect(() => (unchecked = validateManifests([...objects, ...charted]))).not.toThrow();
    for (const u of unchecked) expect(WITHOUT_PUBLISHED_SCHEMA.has(u.split(' ')[0] ?? '')).toBe(true);
    const kinds = objects.map((o) => o.kind);
    expect(kinds[0]).toBe('Namespace');
    expect(kinds.filter((k) => k === 'Deployment')).toHaveLength(topology.workloads.filter((w) => !w.installedBy).length);
    expect(kinds.filter((k) => k === 'PodDisruptionBudget')).toHaveLength(disruptionBudgetsOf(topology).length);
    expect(kinds.filter((k) => k === 'Service')).toHaveLength(topology.services.length);
    for (const o of [...objects, ...charted]) if (o.kind !== 'Namespace' && o.kind !== 'GatewayClass' && o.kind !== 'Dataplane') expect(o.metadata.namespace).toBe('zerodrop-abcd1234');
  });

  it('renders at least the reference and mutant backends for every backend scenario', () => {
    const rendered = cases.filter(({ def, profile }) => def.role === 'backend' && (profile.kind === 'reference' || profile.kind === 'mutant') && profile.backend);
    expect(rendered.length).toBeGreaterThan(0);
    for (const { def, profile } of rendered) {
      let topology: Topology;
      try {
        topology = def.build(profile, optionsFor(def, {}, false)).topology;
      } catch (err) {
        if (err instanceof ProfileCannotPlay) continue;
        throw err;
      }
      expect(() => validateManifests(render(topology)), `${def.id} x ${profile.name}`).not.toThrow();
    }
  });
});

describe('what a backend Deployment carries to the cluster', () => {
  const def = catalog.find((d) => d.id === 'backend-delete-http');
  const reference = profiles.find((p) => p.name === 'reference');
  if (!def || !reference) throw new Error('catalog changed');
  const topology = def.build(reference, optionsFor(def, {}, false)).topology;
  const objects = render(topology);
  const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as {
    spec: { replicas: number; strategy: unknown; template: { spec: { terminationGracePeriodSeconds: number; containers: Record<string, unknown>[]; volumes: unknown[] } } };
  };
  const container = deployment.spec.template.spec.containers[0] as {
    image: string;
    command: string[];
    env: { name: string; value?: string; valueFrom?: unknown }[];
    readinessProbe: Record<string, unknown>;
    lifecycle: unknown;
    volumeMounts: unknown[];
  };
  const workload = topology.workloads[0];
  if (!workload) throw new Error('no workload');

  it('runs the reference app from the ConfigMap on a stock node image', () => {
    expect(container.image).toBe(NODE_IMAGE);
    expect(container.command).toEqual(['node', `${FIXTURES_MOUNT}/reference-backend.mjs`]);
    expect(container.volumeMounts).toEqual([{ name: 'fixtures', mountPath: FIXTURES_MOUNT, readOnly: true }]);
    expect(deployment.spec.template.spec.volumes).toEqual([
      {
        name: 'fixtures',
        configMap: {
          name: FIXTURES_CONFIGMAP,
          items: [
            { key: 'pod-env.mjs', path: 'pod-env.mjs' },
            { key: 'reference-backend.mjs', path: 'reference-backend.mjs' },
          ],
        },
      },
    ]);
    const configMap = objects.find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
    expect(configMap.data['reference-backend.mjs']).toBe(readFileSync(join(packageRoot, 'fixtures/reference-backend.mjs'), 'utf8'));
    expect(configMap.data['pod-env.mjs']).toBe(readFileSync(join(packageRoot, FIXTURE_SHARED_MODULE), 'utf8'));
  });

  it('ships every module a reference app imports, mounted beside it so that the relative import resolves', () => {
    const apps = readdirSync(join(packageRoot, 'fixtures')).filter((f) => f.endsWith('.mjs') && `fixtures/${f}` !== FIXTURE_SHARED_MODULE);
    expect(apps.length).toBeGreaterThan(0);
    for (const app of apps) {
      const source = readFileSync(join(packageRoot, 'fixtures', app), 'utf8');
      const imports = [...source.matchAll(/^import .* from '\.\/([\w.-]+)';$/gm)].map((m) => `fixtures/${m[1]}`);
      const reads = BUNDLED_APPS[`fixtures/${app}`]?.reads ?? [];
      const shipped = fixturesOf({ workloads: [{ ...workload, command: ['node', `fixtures/${app}`] }], services: [] });
      expect(shipped, app).toEqual([...new Set([`fixtures/${app}`, ...imports, ...reads])].sort());
    }
  });

  it('ships an app that imports npm packages as its bundle, with the file it reads beside it, within a ConfigMap\'s 1 MiB', async () => {
    const def = catalog.find((d) => d.id === 'backend-delete-grpc');
    if (!def || !reference) throw new Error('catalog changed');
    const grpcTopology = def.build(reference, optionsFor(def, {}, true)).topology;
    vi.stubEnv('ZERODROP_CACHE_DIR', mkdtempSync(join(tmpdir(), 'zerodrop-bundle-cache-')));
    try {
      const fixtures = await readFixtures(grpcTopology, packageRoot);
      expect(Object.keys(fixtures)).toEqual(['fixtures/drain.proto', 'fixtures/pod-env.mjs', REFERENCE_GRPC]);
      expect(fixtures[REFERENCE_GRPC]).toBe(await appBundle(REFERENCE_GRPC, packageRoot));
      expect(fixtures['fixtures/drain.proto']).toBe(readFileSync(join(packageRoot, 'fixtures/drain.proto'), 'utf8'));
      const grpcObjects = renderTopology(grpcTopology, { namespace: 'zerodrop-abcd1234', runId: 'abcd1234', fixtures });
      const configMap = grpcObjects.find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
      expect(Buffer.byteLength(JSON.stringify(configMap.data))).toBeLessThan(1024 * 1024);
      const volumes = (grpcObjects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { volumes: { configMap: { items: { path: string }[] } }[] } } } }).spec.template.spec.volumes;
      expect(volumes[0]?.configMap.items.map((i) => i.path)).toEqual(['drain.proto', 'pod-env.mjs', 'reference-grpc.mjs']);
    } finally {
      rmSync(process.env['ZERODROP_CACHE_DIR']!, { recursive: true, force: true });
      vi.unstubAllEnvs();
    }
  });

  it('keeps the drain settings: preStop sleep, grace period, rolling update, and whole-second probes', () => {
    expect(container.lifecycle).toEqual({ preStop: workload.preStop });
    expect(workload.preStop).toEqual({ sleep: { seconds: 2 } });
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBe(workload.terminationGracePeriodSeconds);
    expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    // 0.25 s locally; Kubernetes takes whole seconds, minimum 1.
    expect(container.readinessProbe).toMatchObject({ httpGet: { port: 8080, path: '/healthz' }, periodSeconds: 1, timeoutSeconds: 1 });
    expect(container.env.find((e) => e.name === 'POD_IP')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'status.podIP' } });
    expect(container.env.find((e) => e.name === 'DRAIN_MODE')?.value).toBe('graceful');
  });

  it('sends a preStop sleep longer than the grace period as an exec sleep, which the API server accepts', () => {
    // The API server refuses a sleep action longer than terminationGracePeriodSeconds; the kubelet cuts
    // an exec hook at the grace period, as the local provider does with the same settings.
    const long = def.build(reference, optionsFor(def, { preStopSeconds: 7.5, graceSeconds: 5 }, false)).topology;
    const d = render(long).find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { lifecycle: unknown }[] } } } };
    expect(d.spec.template.spec.containers[0]?.lifecycle).toEqual({ preStop: { exec: { command: ['sleep', '8'] } } });
    const equal = def.build(reference, optionsFor(def, { preStopSeconds: 5, graceSeconds: 5 }, false)).topology;
    const e = render(equal).find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { lifecycle: unknown }[] } } } };
    expect(e.spec.template.spec.containers[0]?.lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
  });

  it('publishes the Service on a NodePort the cluster maps to the host, and guards drains with a PodDisruptionBudget', () => {
    const service = objects.find((o) => o.kind === 'Service') as unknown as { spec: { type: string; ports: { nodePort?: number }[] } };
    expect(service.spec.type).toBe('NodePort');
    expect(service.spec.ports[0]?.nodePort).toBe(PUBLISHED_NODE_PORTS[0]?.nodePort);
    const pdb = objects.find((o) => o.kind === 'PodDisruptionBudget') as unknown as { spec: unknown };
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: { 'zerodrop.dev/workload': 'backend' } } });
  });

  it('rejects an invalid object before anything is applied, naming it', () => {
    const broken = structuredClone(objects);
    const d = broken.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { ports: { containerPort: unknown }[] }[] } } } };
    const port = d.spec.template.spec.containers[0]?.ports[0];
    if (port) port.containerPort = 'http';
    expect(() => validateManifests(broken)).toThrow(/apps\/v1\/Deployment backend: .*containerPort must be integer/);
  });

  it('refuses a program that has no cluster image', () => {
    const alien: Topology = { ...topology, workloads: [{ ...workload, command: ['envoy', '-c', 'envoy.yaml'] }] };
    expect(() => render(alien)).toThrow(/runs "envoy", which has no image for clusters/);
  });
});

describe('a real system as a cluster pod (nginx gateway)', () => {
  const def = catalog.find((d) => d.id === 'gateway-delete-http');
  const twins = ['nginx', 'nginx-naive'].map((name) => profiles.find((p) => p.name === name));
  const ready = def !== undefined && twins.every((p) => p !== undefined);

  it.skipIf(!ready)('renders the config in an init container on node, then runs nginx on its own image with the profile stop signal', () => {
    if (!def) return;
    const [good, naive] = twins.map((profile) => {
      if (!profile) throw new Error('profile missing');
      const topology = def.build(profile, optionsFor(def, {}, false)).topology;
      const objects = render(topology);
      validateManifests(objects);
      const gateway = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'gateway') as unknown as {
        spec: { template: { spec: { os?: { name: string }; initContainers: { image: string; command: string[]; env: { name: string; value?: string }[] }[]; containers: { image: string; command: string[]; lifecycle?: { stopSignal?: string } }[]; volumes: { name: string; configMap?: { items: { key: string; path: string }[] } }[] } } };
      };
      const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === configMapName('gateway')) as unknown as { data: Record<string, string> };
      return { spec: gateway.spec.template.spec, configMap };
    });
    if (!good || !naive) throw new Error('render failed');
    const init = good.spec.initContainers[0] as NonNullable<(typeof good.spec.initContainers)[number]> & { volumeMounts: { name: string; mountPath: string }[] };
    expect(init.image).toBe(NODE_IMAGE);
    // The profile's templates (its gRPC one too), shipped in the workload's own ConfigMap, rendered by render.mjs into the pod directory.
    expect(init.command).toEqual(['node', `${FIXTURES_MOUNT}/gateways/render.mjs`, `nginx.conf=${CONFIG_MOUNT}/nginx.conf`, `nginx-grpc.conf=${CONFIG_MOUNT}/nginx-grpc.conf`]);
    expect(init.volumeMounts).toContainEqual({ name: 'config', mountPath: CONFIG_MOUNT, readOnly: true });
    expect(init.env).toContainEqual({ name: 'ZERODROP_POD_DIR', value: '/zerodrop/pod' });
    const main = good.spec.containers[0] as (typeof good.spec.containers)[number] & { env: { name: string; value?: string }[] };
    // The system and its preStop hook see the rendered directory too (a draining marker file there).
    expect(main.env).toContainEqual({ name: 'POD_DIR', value: '/zerodrop/pod' });
    expect(main.env).toContainEqual({ name: 'ZERODROP_POD_DIR', value: '/zerodrop/pod' });
    expect(init.env.filter((e) => e.name === 'ZERODROP_POD_DIR')).toHaveLength(1);
    expect(main.image).toMatch(/^nginx:/);
    // The profile's own argv, its placeholders expanded by the image's shell.
    expect(main.command).toEqual(['sh', '-c', `exec 'nginx' '-e' 'stderr' '-p' "\${POD_DIR}" '-c' "\${POD_DIR}"'/nginx.conf' '-g' 'daemon off;'`]);
    // The image's STOPSIGNAL is SIGQUIT, the drain-correct twin's: only the naive twin states its own
    // (SIGTERM), which needs the ContainerStopSignals gate and the pod's OS.
    expect(main.lifecycle?.stopSignal).toBeUndefined();
    expect(good.spec.os).toBeUndefined();
    expect(naive.spec.containers[0]?.lifecycle?.stopSignal).toBe('SIGTERM');
    expect(naive.spec.os).toEqual({ name: 'linux' });
    expect(good.configMap.data['nginx.conf']).toBe(readFileSync(join(packageRoot, 'fixtures/gateways/nginx/nginx.conf'), 'utf8'));
    expect(naive.configMap.data['nginx.conf']).toBe(readFileSync(join(packageRoot, 'fixtures/gateways/nginx/nginx-naive.conf'), 'utf8'));
    expect(good.spec.volumes.find((v) => v.name === 'config')?.configMap).toEqual({ name: configMapName('gateway') });
  });
});

describe('a profile of a team on a cluster (defineProfile: image, exec readiness, templates)', () => {
  it('runs on the image it names, renders its templates from its ConfigMap, and probes with its command; kubernetes-models accepts every object', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerodrop-team-'));
    try {
      writeFileSync(join(dir, 'httpd.conf'), 'Listen ${POD_IP}:${PORT}\nProxyPass / http://${BACKEND_SERVICE_HOST}:${BACKEND_SERVICE_PORT}/\n');
      const apache = defineProfile({
        name: 'team-apache',
        role: 'gateway',
        protocols: ['http'],
        description: 'a team gateway',
        directory: dir,
        command: ['httpd', '-f', '${POD_DIR}/httpd.conf', '-DFOREGROUND'],
        config: { 'httpd.conf': 'httpd.conf' },
        readiness: { exec: { command: ['sh', '-c', 'test -f "$POD_DIR/httpd.conf"'] } },
        stopSignal: 'SIGWINCH',
        image: 'httpd:2.4-alpine',
      });
      const def = catalog.find((d) => d.id === 'gateway-delete-http');
      if (!def) throw new Error('gateway-delete-http missing');
      const objects = render(def.build(apache, optionsFor(def, {}, false)).topology);
      validateManifests(objects);
      const gateway = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'gateway') as unknown as {
        spec: { template: { spec: { initContainers: { command: string[] }[]; containers: { image: string; command: string[]; readinessProbe: Record<string, unknown>; lifecycle?: { stopSignal?: string } }[] } } };
      };
      const pod = gateway.spec.template.spec;
      expect(pod.containers[0]?.image).toBe('httpd:2.4-alpine');
      expect(pod.containers[0]?.command).toEqual(['sh', '-c', `exec 'httpd' '-f' "\${POD_DIR}"'/httpd.conf' '-DFOREGROUND'`]);
      expect(pod.containers[0]?.readinessProbe).toMatchObject({ exec: { command: ['sh', '-c', 'test -f "$POD_DIR/httpd.conf"'] } });
      expect(pod.containers[0]?.readinessProbe['httpGet']).toBeUndefined();
      // Its image's STOPSIGNAL is not known here: a signal other than SIGTERM is stated.
      expect(pod.containers[0]?.lifecycle?.stopSignal).toBe('SIGWINCH');
      expect(pod.initContainers[0]?.command).toEqual(['node', `${FIXTURES_MOUNT}/gateways/render.mjs`, `httpd.conf=${CONFIG_MOUNT}/httpd.conf`]);
      const config = objects.find((o) => o.metadata.name === configMapName('gateway')) as unknown as { data: Record<string, string> };
      expect(config.data['httpd.conf']).toContain('ProxyPass / http://${BACKEND_SERVICE_HOST}');
      // render.mjs itself travels in the fixtures ConfigMap; the team's template path does not.
      const fixtures = objects.find((o) => o.metadata.name === FIXTURES_CONFIGMAP) as unknown as { data: Record<string, string> };
      expect(Object.keys(fixtures.data)).toContain('gateways__render.mjs');
      expect(Object.keys(fixtures.data).some((k) => k.includes('httpd'))).toBe(false);
      // The profile's image wins over the stock image of its program (a team's own nginx build).
      const ownNginx = defineProfile({ name: 'team-nginx', role: 'gateway', protocols: ['http'], description: 'our nginx', directory: dir, command: ['nginx', '-c', '${POD_DIR}/httpd.conf'], config: { 'httpd.conf': 'httpd.conf' }, image: 'registry.example.com/team/nginx:1.29-drain' });
      const own = render(def.build(ownNginx, optionsFor(def, {}, false)).topology).find((o) => o.kind === 'Deployment' && o.metadata.name === 'gateway') as unknown as typeof gateway;
      expect(own.spec.template.spec.containers[0]?.image).toBe('registry.example.com/team/nginx:1.29-drain');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Helm gateways in the scenario topologies (cluster providers)', () => {
  const helmCases = cases.filter((c) => !c.nightly && helmProfileSpec(c.profile.name));
  const runnable = helmCases.flatMap(({ def, profile }) => {
    try {
      const scenario = def.build(profile, optionsFor(def, {}, false));
      return unsupported(scenario, KIND) ? [] : [{ id: `${def.id} x ${profile.name}`, scenario }];
    } catch (err) {
      if (err instanceof ProfileCannotPlay) return [];
      throw err;
    }
  });

  it('every Helm system plays at least one gateway scenario on a cluster; the local provider skips each with the reason', () => {
    const ids = runnable.map((r) => r.id);
    for (const id of ['gateway-delete-http x envoy-gateway', 'gateway-delete-http x ingress-nginx-naive', 'gateway-slow-lb x ingress-nginx', 'gateway-delete-turn x stunner', 'gateway-delete-turn x stunner-naive']) {
      expect(ids).toContain(id);
    }
    for (const { scenario } of runnable) {
      expect(unsupported(scenario, { name: 'local', capabilities: { multiNode: false, udp: true } })).toMatch(/installed with its Helm chart: it runs only on a cluster provider/);
    }
  });

  it('a scale or rollout of a chart-owned dataplane is skipped on clusters with the reason', () => {
    const def = catalog.find((d) => d.id === 'gateway-rollout-http');
    const profile = profiles.find((p) => p.name === 'envoy-gateway');
    if (!def || !profile) throw new Error('catalog changed');
    expect(unsupported(def.build(profile, optionsFor(def, {}, false)), KIND)).toMatch(/rollout-restart of the gateway workload would act on a Deployment that envoy-gateway's controller owns/);
  });

  it.each(runnable.map((r) => [r.id, r] as const))('%s: the gateway Service is a NodePort kind publishes, targeting the dataplane container port', (_, { scenario }) => {
    const topology = scenario.topology;
    const gateway = topology.workloads.find((w) => w.installedBy);
    if (!gateway?.installedBy) throw new Error('no charted workload');
    const spec = helmProfileSpec(gateway.installedBy.helmProfile);
    if (!spec) throw new Error('no spec');
    const objects = render(topology);
    // No Deployment for the chart's pods; the Service selects them by the label the chart puts on them.
    expect(objects.some((o) => o.kind === 'Deployment' && o.metadata.name === gateway.name)).toBe(false);
    // By the label the chart puts on its pods: the run's workload label, or the chart's own (dataplaneSelector).
    const podLabels = spec.dataplaneSelector ?? { 'zerodrop.dev/workload': gateway.name };
    const service = objects.find((o) => o.kind === 'Service' && isDeepStrictEqual((o as unknown as { spec: { selector: Record<string, string> } }).spec.selector, podLabels)) as unknown as {
      spec: { type: string; ports: { port: number; targetPort: number; nodePort: number; protocol: string }[] };
    };
    const modelService = topology.services.find((s) => s.selector === gateway.name);
    expect(service.spec.type).toBe('NodePort');
    // kind's generated config maps each published NodePort from 127.0.0.1, for TCP and UDP.
    const mappings = (parse(kindConfig({ workers: 2 })) as { nodes: { extraPortMappings?: { containerPort: number; hostPort: number; protocol: string; listenAddress: string }[] }[] }).nodes.flatMap((n) => n.extraPortMappings ?? []);
    for (const [i, port] of service.spec.ports.entries()) {
      expect(mappings).toContainEqual({ containerPort: port.nodePort, hostPort: port.nodePort, protocol: port.protocol, listenAddress: '127.0.0.1' });
      expect(port.targetPort).toBe(spec.dataplanePort(modelService?.ports[i]?.targetPort ?? -1));
    }
    // The chart labels its dataplane pods with the workload's name, and routes to the backend Service
    // (and, with a STUNner StaticService, to the cluster's pod address ranges too).
    const [install] = chartInstalls(topology, { namespace: 'zerodrop-abcd1234', runId: 'abcd1234', podCidrs: POD_CIDRS });
    if (!spec.dataplaneSelector) expect(JSON.stringify([install?.values, install?.objects])).toContain(`"zerodrop.dev/workload":"${gateway.name}"`);
    const route = install?.objects.find((o) => ['HTTPRoute', 'UDPRoute', 'Ingress'].includes(o.object.kind ?? ''))?.object;
    const staticService = install?.objects.find((o) => o.object.kind === 'StaticService')?.object;
    expect(JSON.stringify(route)).toContain(`"name":"${gateway.installedBy.routesTo.service}"`);
    if (staticService) {
      expect(JSON.stringify(route)).toContain(`{"group":"stunner.l7mp.io","kind":"StaticService","name":"${staticService.metadata.name}"}`);
      expect(staticService).toMatchObject({ spec: { prefixes: POD_CIDRS } });
    }
    for (const o of install?.objects ?? []) expect(o.object.metadata.labels).toMatchObject({ 'zerodrop.dev/run': 'abcd1234' });
    // No budget of zerodrop's over the chart's pods: a chart may bring its own, and two would block every eviction.
    expect(objects.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === gateway.name)).toBeUndefined();
  });

  it('rejects an invalid Gateway API object by its schema (@kubernetes-models/gateway-api)', () => {
    const { scenario } = runnable.find((r) => r.id === 'gateway-delete-http x envoy-gateway') ?? {};
    if (!scenario) throw new Error('not runnable');
    const objects = chartInstalls(scenario.topology, { namespace: 'zerodrop-abcd1234', runId: 'abcd1234', podCidrs: POD_CIDRS }).flatMap((c) => c.objects.map((o) => o.object));
    const gateway = structuredClone(objects.find((o) => o.kind === 'Gateway')) as unknown as { spec: { listeners: { port: unknown }[] } };
    const [listener] = gateway.spec.listeners;
    if (listener) listener.port = 'http';
    expect(() => validateManifests([gateway as never])).toThrow(/gateway\.networking\.k8s\.io\/v1\/Gateway zerodrop: .*port must be integer/);
    expect(validateManifests(objects)).toEqual(['gateway.envoyproxy.io/v1alpha1/EnvoyProxy zerodrop']);
  });
});

describe('PodDisruptionBudgets from the topology (node-drain-http)', () => {
  const def = catalog.find((d) => d.id === 'node-drain-http');
  const reference = profiles.find((p) => p.name === 'reference');
  if (!def || !reference) throw new Error('catalog changed');

  it('renders the budget the scenario asks for, and none for its failing twin (minAvailable 0)', () => {
    const pdbs = (overrides: Record<string, number>) => render(def.build(reference, optionsFor(def, overrides, false)).topology).filter((o) => o.kind === 'PodDisruptionBudget');
    const [pdb] = pdbs({});
    expect(pdb).toMatchObject({ apiVersion: 'policy/v1', metadata: { name: 'backend' }, spec: { minAvailable: 1, selector: { matchLabels: { 'zerodrop.dev/workload': 'backend' } } } });
    expect(() => validateManifests([pdb as never])).not.toThrow();
    expect(pdbs({ replicas: 1, minAvailable: 0 })).toEqual([]);
  });
});
