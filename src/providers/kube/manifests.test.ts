import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { profiles } from '../../profiles/index.ts';
import { ProfileCannotPlay } from '../../profiles/profile.ts';
import { optionsFor } from '../../runner/run-matrix.ts';
import { repoRoot } from '../../runner/paths.ts';
import { catalog } from '../../scenarios/index.ts';
import type { Topology } from '../../model/workload.ts';
import { KubeProvider } from './kube-provider.ts';
import {
  FIXTURE_SHARED_MODULE,
  FIXTURES_CONFIGMAP,
  FIXTURES_MOUNT,
  fixturesOf,
  ManifestError,
  NODE_IMAGE,
  renderTopology,
  validateManifests,
} from './manifests.ts';
import { PUBLISHED_NODE_PORTS } from '../kind/kind.ts';

function render(topology: Topology) {
  const fixtures = Object.fromEntries(fixturesOf(topology).map((p) => [p, readFileSync(join(repoRoot, p), 'utf8')]));
  const nodePorts = KubeProvider.assignNodePorts(topology, { kind: 'nodePort', host: '127.0.0.1', ports: [...PUBLISHED_NODE_PORTS] });
  return renderTopology(topology, { namespace: 'zerodrop-abcd1234', runId: 'abcd1234', fixtures, ...(nodePorts ? { nodePorts } : {}) });
}

// Every scenario x profile, short defaults and nightly values: what the cluster providers would apply.
const cases = catalog.flatMap((def) => profiles.flatMap((profile) => [false, true].map((nightly) => ({ def, profile, nightly }))));

describe('manifests for every scenario x profile', () => {
  it.each(cases.map((c) => [`${c.def.id} x ${c.profile.name}${c.nightly ? ' (nightly)' : ''}`, c] as const))('%s: renders valid objects or is refused before rendering', (_, { def, profile, nightly }) => {
    let topology: Topology;
    try {
      topology = def.build(profile, optionsFor(def, {}, nightly)).topology;
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
    expect(() => validateManifests(objects)).not.toThrow();
    const kinds = objects.map((o) => o.kind);
    expect(kinds[0]).toBe('Namespace');
    expect(kinds.filter((k) => k === 'Deployment')).toHaveLength(topology.workloads.length);
    expect(kinds.filter((k) => k === 'PodDisruptionBudget')).toHaveLength(topology.workloads.length);
    expect(kinds.filter((k) => k === 'Service')).toHaveLength(topology.services.length);
    for (const o of objects) if (o.kind !== 'Namespace') expect(o.metadata.namespace).toBe('zerodrop-abcd1234');
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
    expect(configMap.data['reference-backend.mjs']).toBe(readFileSync(join(repoRoot, 'fixtures/reference-backend.mjs'), 'utf8'));
    expect(configMap.data['pod-env.mjs']).toBe(readFileSync(join(repoRoot, FIXTURE_SHARED_MODULE), 'utf8'));
  });

  it('ships every module a reference app imports, mounted beside it so that the relative import resolves', () => {
    const apps = readdirSync(join(repoRoot, 'fixtures')).filter((f) => f.endsWith('.mjs') && `fixtures/${f}` !== FIXTURE_SHARED_MODULE);
    expect(apps.length).toBeGreaterThan(0);
    for (const app of apps) {
      const source = readFileSync(join(repoRoot, 'fixtures', app), 'utf8');
      const imports = [...source.matchAll(/^import .* from '\.\/([\w.-]+)';$/gm)].map((m) => `fixtures/${m[1]}`);
      const shipped = fixturesOf({ workloads: [{ ...workload, command: ['node', `fixtures/${app}`] }], services: [] });
      expect(shipped, app).toEqual([...new Set([`fixtures/${app}`, ...imports])].sort());
    }
  });

  it('keeps the drain settings: preStop sleep, grace period, rolling update, and whole-second probes', () => {
    expect(container.lifecycle).toEqual({ preStop: { sleep: { seconds: 1 } } });
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBe(workload.terminationGracePeriodSeconds);
    expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    // 0.25 s locally; Kubernetes takes whole seconds, minimum 1.
    expect(container.readinessProbe).toMatchObject({ httpGet: { port: 8080, path: '/healthz' }, periodSeconds: 1, timeoutSeconds: 1 });
    expect(container.env.find((e) => e.name === 'POD_IP')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'status.podIP' } });
    expect(container.env.find((e) => e.name === 'DRAIN_MODE')?.value).toBe('graceful');
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
        spec: { template: { spec: { initContainers: { image: string; command: string[]; env: { name: string; value?: string }[] }[]; containers: { image: string; command: string[]; lifecycle: { stopSignal?: string } }[]; volumes: { name: string; configMap?: { items: { key: string; path: string }[] } }[] } } };
      };
      const configMap = objects.find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
      return { spec: gateway.spec.template.spec, configMap };
    });
    if (!good || !naive) throw new Error('render failed');
    const init = good.spec.initContainers[0];
    expect(init?.image).toBe(NODE_IMAGE);
    expect(init?.command).toEqual(['node', `${FIXTURES_MOUNT}/gateways/render.mjs`, `${FIXTURES_MOUNT}/gateways/nginx/nginx.conf`]);
    expect(init?.env).toContainEqual({ name: 'ZERODROP_POD_DIR', value: '/zerodrop/pod' });
    const main = good.spec.containers[0];
    expect(main?.image).toMatch(/^nginx:/);
    expect(main?.command[2]).toBe(`d=/zerodrop/pod && exec nginx -e stderr -p "$d" -c "$d/nginx.conf" -g 'daemon off;'`);
    // The image's STOPSIGNAL is SIGQUIT: each twin states its own.
    expect(main?.lifecycle.stopSignal).toBe('SIGQUIT');
    expect(naive.spec.containers[0]?.lifecycle.stopSignal).toBe('SIGTERM');
    expect(good.configMap.data['gateways__nginx__nginx.conf']).toBe(readFileSync(join(repoRoot, 'fixtures/gateways/nginx/nginx.conf'), 'utf8'));
    expect(good.spec.volumes.find((v) => v.name === 'fixtures')?.configMap?.items).toContainEqual({ key: 'gateways__nginx__nginx.conf', path: 'gateways/nginx/nginx.conf' });
  });
});
