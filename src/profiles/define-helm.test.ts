import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../config/config.ts';
import { helmInstallArgs } from '../providers/kube/helm.ts';
import { DATAPLANE_LABEL, defineHelmProfile, perRunName, type HelmProfileDefinition } from './define-helm.ts';
import { isDefinedProfile } from './define.ts';
import { helmProfileSpec, releaseName } from './helm-charts.ts';
import { helmProfiles } from './helm-gateways.ts';
import { profiles } from './index.ts';
import type { Topology } from '../model/workload.ts';
import { Recorder } from '../observe/recorder.ts';
import { renderTopology, validateManifests } from '../providers/kube/manifests.ts';
import { PodObserver, workloadBySelectors } from '../providers/kube/observers.ts';

const dir = mkdtempSync(join(tmpdir(), 'zerodrop-define-helm-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const chartDir = join(dir, 'my-gateway');
mkdirSync(chartDir);
writeFileSync(join(chartDir, 'Chart.yaml'), 'apiVersion: v2\nname: my-gateway\nversion: 0.1.0\n');
const valuesFile = join(dir, 'ci-values.yaml');
writeFileSync(valuesFile, 'replicaCount: 2\n');

let n = 0;
const definition = (over: Partial<HelmProfileDefinition> = {}): HelmProfileDefinition => ({
  name: `my-gateway-${++n}`,
  description: 'our gateway chart',
  chart: { chart: chartDir },
  protocols: ['http'],
  values: (ctx) => ({ replicaCount: ctx.replicas, podLabels: { [DATAPLANE_LABEL]: ctx.workload } }),
  valuesFiles: [valuesFile],
  objects: (ctx) => [{ clusterScoped: false, object: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'zerodrop', namespace: ctx.namespace } } }],
  terminationGracePeriodSeconds: 60,
  drain: { minDrainSeconds: 5, drainTimeoutSeconds: 45 },
  ...over,
});

describe('defineHelmProfile', () => {
  it('makes a chart profile whose gateway is the chart dataplane, installed with its values files before the run values', () => {
    const p = defineHelmProfile(definition({ naive: { description: 'defaults', values: {}, drain: undefined } }));
    const plan = p.gateway!({ protocol: 'http', port: 8080, backendService: 'backend', backendPort: 8080 });
    expect(plan.installedBy).toEqual({ helmProfile: p.name, protocol: 'http', routesTo: { service: 'backend', port: 8080 } });
    expect(plan.terminationGracePeriodSeconds).toBe(60);
    expect(plan.drain).toEqual({ minDrainSeconds: 5, drainTimeoutSeconds: 45 });
    expect(() => p.gateway!({ protocol: 'udp', port: 3478, backendService: 'backend', backendPort: 9 })).toThrow(/carries http, not udp/);
    const spec = helmProfileSpec(p.name)!;
    expect(spec.values({ namespace: 'zerodrop-ab', workload: 'gateway', replicas: 3, port: 8080, dataplane: plan.installedBy!, podCidrs: [] })).toEqual({ replicaCount: 3, podLabels: { [DATAPLANE_LABEL]: 'gateway' } });
    const args = helmInstallArgs(spec, { release: 'r', namespace: 'ns', kubeconfigFile: 'k', valuesFile: 'run.yaml' });
    // A local chart has no version to ask for; the run's values come last and win.
    expect(args).not.toContain('--version');
    expect(args.join(' ')).toContain(`${chartDir} --namespace ns --kubeconfig k --values ${valuesFile} --values run.yaml --wait`);
    expect(p.naive?.name).toBe(`${p.name}-naive`);
    expect(p.naive!.gateway!({ protocol: 'http', port: 8080, backendService: 'b', backendPort: 1 }).drain).toBeUndefined();
    expect(validateConfig({ profiles: [p, p.naive] }, 'cfg').profiles).toHaveLength(2);
  });

  it('pins a repository chart by version, and names every bad field', () => {
    expect(() => defineHelmProfile(definition({ chart: { chart: 'gateway-helm', repo: 'https://charts.example.com' } }))).toThrow(/chart\.version = undefined: a repository or OCI chart needs its version pinned/);
    expect(() => defineHelmProfile(definition({ chart: { chart: 'gateway-helm', version: '1.0.0' } }))).toThrow(/chart\.repo = undefined: a chart by name needs its repository URL/);
    expect(() => defineHelmProfile(definition({ chart: { chart: './no-such-chart' } }))).toThrow(/chart\.chart = "\.\/no-such-chart": no chart at /);
    expect(() => defineHelmProfile(definition({ valuesFiles: ['missing.yaml'] }))).toThrow(/valuesFiles\.0 = "missing\.yaml": no file at /);
    expect(() => defineHelmProfile({ ...definition(), replicas: 3 } as unknown as HelmProfileDefinition)).toThrow(/unrecognized key|replicas/i);
    const oci = defineHelmProfile(definition({ chart: { chart: 'oci://registry.example.com/charts/gw', version: '2.1.0' } }));
    expect(helmInstallArgs(helmProfileSpec(oci.name)!, { release: 'r', namespace: 'ns', kubeconfigFile: 'k', valuesFile: 'v' }).slice(2, 6)).toEqual(['r', 'oci://registry.example.com/charts/gw', '--version', '2.1.0']);
  });
});

describe('defineHelmProfile: release and docs', () => {
  it('starts the release with chart.release (default: the name), and keeps docs; the naive twin shares both', () => {
    const named = defineHelmProfile(definition({ naive: { description: 'defaults' } }));
    expect(helmProfileSpec(named.name)?.chart.release).toBe(named.name);
    expect(helmProfileSpec(named.name)?.docs).toBe('defined by the config file');
    const p = defineHelmProfile(definition({ chart: { chart: chartDir, release: 'gw' }, docs: 'https://example.com/drain', naive: { description: 'defaults' } }));
    for (const name of [p.name, p.naive!.name]) {
      const spec = helmProfileSpec(name)!;
      expect(releaseName(spec.chart, 'zerodrop-run1')).toBe('gw-run1');
      expect(spec.docs).toBe('https://example.com/drain');
    }
  });

  it('names a bad release with the rule', () => {
    expect(() => defineHelmProfile(definition({ chart: { chart: chartDir, release: 'My_GW' } }))).toThrow(/chart\.release = "My_GW": must be a DNS label/);
    expect(() => defineHelmProfile(definition({ chart: { chart: chartDir, release: 'g'.repeat(31) } }))).toThrow(/chart\.release = "g{31}": must be at most 30 characters/);
    expect(() => defineHelmProfile(definition({ docs: '' }))).toThrow(/docs = "": must say where the settings come from/);
  });

  it('names cluster-scoped objects per run', () => {
    expect(perRunName('zerodrop-ab')).toBe('zerodrop-ab');
    expect(perRunName('other')).toBe('zerodrop-other');
  });
});

describe('the built-in chart profiles', () => {
  it('are defineHelmProfile definitions, in the registry as any profile', () => {
    expect(helmProfiles.map((p) => p.name)).toEqual(['envoy-gateway', 'envoy-gateway-naive', 'stunner', 'stunner-naive', 'stunner-018', 'stunner-018-static', 'ingress-nginx', 'ingress-nginx-naive']);
    for (const p of helmProfiles) {
      expect(isDefinedProfile(p), p.name).toBe(true);
      expect(profiles).toContain(p);
    }
  });

  it('promise a drain only where the settings make one: envoy-gateway the shutdown manager\'s, no naive twin any', () => {
    const drains = Object.fromEntries(helmProfiles.map((p) => [p.name, helmProfileSpec(p.name)?.drain]));
    expect(drains).toEqual({
      'envoy-gateway': { minDrainSeconds: 15, drainTimeoutSeconds: 600 },
      'envoy-gateway-naive': undefined,
      stunner: undefined,
      'stunner-naive': undefined,
      'ingress-nginx': undefined,
      'ingress-nginx-naive': undefined,
    });
  });
});

describe('defineHelmProfile: dataplaneSelector', () => {
  it("selects the chart's dataplane pods by its own labels: the gateway Service, the budget and the pod watch use them", () => {
    const selector = { 'app.kubernetes.io/name': 'my-gateway', 'app.kubernetes.io/component': 'dataplane' };
    const p = defineHelmProfile(definition({ values: {}, dataplaneSelector: selector }));
    const plan = p.gateway!({ protocol: 'http', port: 8080, backendService: 'backend', backendPort: 8080 });
    expect(plan.installedBy?.selector).toEqual(selector);
    const topology: Topology = {
      workloads: [{ name: 'gateway', replicas: 2, command: [], env: {}, ports: [], terminationGracePeriodSeconds: 60, strategy: { maxSurge: 1, maxUnavailable: 0 }, installedBy: plan.installedBy! }],
      services: [{ name: 'gateway', selector: 'gateway', ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }], programmingDelayMs: 0 }],
      disruptionBudgets: [{ workload: 'gateway', maxUnavailable: 1 }],
    };
    const objects = renderTopology(topology, { namespace: 'zerodrop-ab', runId: 'ab', fixtures: {} });
    validateManifests(objects);
    expect(objects.find((o) => o.kind === 'Service')?.['spec']).toMatchObject({ selector });
    expect(objects.find((o) => o.kind === 'PodDisruptionBudget')?.['spec']).toMatchObject({ selector: { matchLabels: selector } });
    // The pod watch counts a pod the selector matches as the workload's; others stay unattributed.
    const pods = new PodObserver(new Recorder(), undefined, workloadBySelectors(new Map([['gateway', selector]])));
    pods.handle({ type: 'ADDED', relisted: false, object: { metadata: { name: 'gw-abc', labels: { ...selector, 'pod-template-hash': 'x' } } } as never });
    pods.handle({ type: 'ADDED', relisted: false, object: { metadata: { name: 'controller-1', labels: { 'app.kubernetes.io/name': 'my-gateway', 'app.kubernetes.io/component': 'controller' } } } as never });
    expect(pods.workloadOf('gw-abc')).toBe('gateway');
    expect(pods.workloadOf('controller-1')).toBe('');
  });

  it('names a bad label with the syntax', () => {
    expect(() => defineHelmProfile(definition({ dataplaneSelector: { 'app name': 'x' } }))).toThrow(/dataplaneSelector\.app name = .*label keys are \[prefix\/\]name/);
    expect(() => defineHelmProfile(definition({ dataplaneSelector: { app: 'not ok' } }))).toThrow(/dataplaneSelector\.app = "not ok": label values are at most 63/);
    expect(() => defineHelmProfile(definition({ dataplaneSelector: {} }))).toThrow(/dataplaneSelector = \{\}: must name at least one label/);
    expect(() => defineHelmProfile(definition({ controller: { deployment: 'My Controller' } }))).toThrow(/controller\.deployment = "My Controller": must be the Deployment's name/);
  });
});
