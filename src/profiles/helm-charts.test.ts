import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { helmInstallArgs } from '../providers/kube/helm.ts';
import type { ChartContext } from './helm-charts.ts';
import { HELM_PROFILE_SPECS, helmProfiles } from './helm-gateways.ts';
import { ProfileCannotPlay } from './profile.ts';
import { missingRequirement, onPath } from './requirements.ts';

const ctx = (namespace = 'zerodrop-x'): ChartContext => ({
  namespace,
  workload: 'gateway',
  replicas: 2,
  port: 8000,
  dataplane: { helmProfile: 'p', protocol: 'http', routesTo: { service: 'backend', port: 8080 } },
  podCidrs: ['10.244.0.0/24', '10.244.1.0/24'],
});

const spec = (name: string) => {
  const s = HELM_PROFILE_SPECS.find((p) => p.name === name);
  if (!s) throw new Error(`no ${name}`);
  return s;
};

describe('Helm gateway profiles', () => {
  it('each system has a -naive twin that differs in its drain settings only', () => {
    for (const system of ['envoy-gateway', 'stunner', 'ingress-nginx']) {
      const good = spec(system);
      const naive = spec(`${system}-naive`);
      expect(naive.chart).toEqual(good.chart);
      expect(naive.naive).toBe(true);
      expect(JSON.stringify([naive.values(ctx()), naive.objects(ctx())])).not.toBe(JSON.stringify([good.values(ctx()), good.objects(ctx())]));
    }
  });

  it('Envoy Gateway: the shutdown manager drain of PR 2633 (min 15 s, timeout 600 s, grace 900 s)', () => {
    const proxy = spec('envoy-gateway').objects(ctx()).find((o) => o.object['kind'] === 'EnvoyProxy');
    expect(proxy?.object).toMatchObject({
      metadata: { namespace: 'zerodrop-x' },
      spec: {
        shutdown: { drainTimeout: '600s', minDrainDuration: '15s' },
        provider: { kubernetes: { envoyDeployment: { replicas: 2, pod: { labels: { 'zerodrop.dev/workload': 'gateway' } } }, envoyService: { type: 'ClusterIP' } } },
      },
    });
    expect(spec('envoy-gateway').drain).toEqual({ minDrainSeconds: 15, drainTimeoutSeconds: 600 });
    expect(spec('envoy-gateway').graceSeconds).toBe(900);
    expect(spec('envoy-gateway-naive').objects(ctx()).find((o) => o.object['kind'] === 'EnvoyProxy')?.object).toMatchObject({ spec: { shutdown: { drainTimeout: '0s' } } });
  });

  it('Envoy Gateway: a controller per run, its GatewayClass, a Gateway listener on the scenario port and an HTTPRoute to the backend', () => {
    const values = spec('envoy-gateway').values(ctx()) as { config: { envoyGateway: { gateway: { controllerName: string }; provider: unknown } } };
    expect(values.config.envoyGateway.gateway.controllerName).toBe('gateway.envoyproxy.io/zerodrop-x');
    expect(values.config.envoyGateway.provider).toEqual({ type: 'Kubernetes', kubernetes: { watch: { type: 'Namespaces', namespaces: ['zerodrop-x'] } } });
    const objects = spec('envoy-gateway').objects(ctx());
    expect(objects.map((o) => [o.object['kind'], o.clusterScoped])).toEqual([['EnvoyProxy', false], ['GatewayClass', true], ['Gateway', false], ['HTTPRoute', false]]);
    expect(objects[1]?.object).toMatchObject({ metadata: { name: 'zerodrop-x' }, spec: { controllerName: 'gateway.envoyproxy.io/zerodrop-x', parametersRef: { kind: 'EnvoyProxy', namespace: 'zerodrop-x' } } });
    expect(objects[2]?.object).toMatchObject({ spec: { gatewayClassName: 'zerodrop-x', listeners: [{ port: 8000, protocol: 'HTTP' }] } });
    expect(objects[3]?.object).toMatchObject({ spec: { rules: [{ backendRefs: [{ name: 'backend', port: 8080 }] }] } });
    // Ports below 1024 move up by 10000 in the Envoy container; 8000 stays.
    expect([spec('envoy-gateway').dataplanePort(8000), spec('envoy-gateway').dataplanePort(80)]).toEqual([8000, 10_080]);
  });

  it('STUNner: the Dataplane keeps its long grace period; the naive twin has the Kubernetes default', () => {
    const turn = ctx('zerodrop-y');
    turn.dataplane = { helmProfile: 'stunner', protocol: 'turn', routesTo: { service: 'backend', port: 9000 } };
    turn.port = 3478;
    const dataplane = (name: string) => spec(name).objects(turn).find((o) => o.object['kind'] === 'Dataplane');
    expect(dataplane('stunner')).toMatchObject({
      clusterScoped: true,
      object: { apiVersion: 'stunner.l7mp.io/v1', metadata: { name: 'zerodrop-y' }, spec: { replicas: 2, terminationGracePeriodSeconds: 3600, labels: { 'zerodrop.dev/workload': 'gateway' } } },
    });
    expect(dataplane('stunner-naive')?.object).toMatchObject({ spec: { terminationGracePeriodSeconds: 30 } });
    const objects = spec('stunner').objects(turn);
    expect(objects.find((o) => o.object['kind'] === 'GatewayConfig')?.object).toMatchObject({ spec: { dataplane: 'zerodrop-y', authType: 'static', userName: 'zerodrop' } });
    expect(objects.find((o) => o.object['kind'] === 'Gateway')?.object).toMatchObject({
      metadata: { annotations: { 'stunner.l7mp.io/service-type': 'ClusterIP' } },
      spec: { listeners: [{ port: 3478, protocol: 'TURN-UDP' }] },
    });
    expect(objects.find((o) => o.object['kind'] === 'UDPRoute')?.object).toMatchObject({ spec: { rules: [{ backendRefs: [{ name: 'backend' }] }] } });
  });

  it("STUNner 0.18.0 static: the UDPRoute routes to the backend Service and a StaticService of the cluster's pod ranges, the rest as stunner-018", () => {
    const turn = ctx('zerodrop-y');
    turn.dataplane = { helmProfile: 'stunner-018-static', protocol: 'turn', routesTo: { service: 'backend', port: 9000 } };
    turn.port = 3478;
    const objects = spec('stunner-018-static').objects(turn);
    expect(objects.find((o) => o.object['kind'] === 'StaticService')).toEqual({
      clusterScoped: false,
      object: { apiVersion: 'stunner.l7mp.io/v1', kind: 'StaticService', metadata: { name: 'zerodrop', namespace: 'zerodrop-y' }, spec: { prefixes: ['10.244.0.0/24', '10.244.1.0/24'] } },
    });
    expect(objects.find((o) => o.object['kind'] === 'UDPRoute')?.object).toMatchObject({ spec: { rules: [{ backendRefs: [{ name: 'backend', port: 9000 }, { group: 'stunner.l7mp.io', kind: 'StaticService', name: 'zerodrop' }] }] } });
    // Everything else is stunner-018's: the same chart, Dataplane, Gateway and pod selector.
    const others = (name: string) => spec(name).objects(turn).filter((o) => !['UDPRoute', 'StaticService'].includes(String(o.object['kind'])));
    expect(others('stunner-018-static')).toEqual(others('stunner-018'));
    expect(spec('stunner-018-static').chart).toEqual(spec('stunner-018').chart);
    expect(spec('stunner-018-static').dataplaneSelector).toEqual(spec('stunner-018').dataplaneSelector);
    // Without the Nodes' ranges (an account that may not read them) there is nothing to route to.
    expect(() => spec('stunner-018-static').objects({ ...turn, podCidrs: [] })).toThrow(/needs the Nodes' spec\.podCIDRs/);
  });

  it('ingress-nginx: /wait-shutdown preStop and --shutdown-grace-period within the grace period; naive drops both', () => {
    const values = parse(stringify(spec('ingress-nginx').values(ctx()))) as { controller: Record<string, unknown> };
    expect(values.controller).toMatchObject({
      replicaCount: 2,
      podLabels: { 'zerodrop.dev/workload': 'gateway' },
      service: { type: 'ClusterIP' },
      terminationGracePeriodSeconds: 300,
      extraArgs: { 'shutdown-grace-period': '15' },
      lifecycle: { preStop: { exec: { command: ['/wait-shutdown'] } } },
      config: { 'worker-shutdown-timeout': '240s' },
    });
    // Only null deletes the chart's default preStop when Helm merges the values file; {} would keep it.
    const naiveYaml = stringify(spec('ingress-nginx-naive').values(ctx()));
    expect(naiveYaml).toMatch(/^ {2}lifecycle: null$/m);
    expect((parse(naiveYaml) as { controller: Record<string, unknown> }).controller).toMatchObject({ lifecycle: null, extraArgs: { 'shutdown-grace-period': '0' } });
    const [ingress] = spec('ingress-nginx').objects(ctx());
    expect(ingress?.object).toMatchObject({
      kind: 'Ingress',
      spec: { ingressClassName: 'zerodrop-x', rules: [{ http: { paths: [{ path: '/', backend: { service: { name: 'backend', port: { number: 8080 } } } }] } }] },
    });
    expect(spec('ingress-nginx').dataplanePort(8000)).toBe(80);
  });

  it('builds the helm command: chart, repo, pinned version, the run namespace, values file, --wait', () => {
    expect(helmInstallArgs(spec('ingress-nginx'), { release: 'ingress-nginx-x', namespace: 'zerodrop-x', kubeconfigFile: '/k', valuesFile: '/v.yaml' })).toEqual([
      'upgrade', '--install', 'ingress-nginx-x', 'ingress-nginx', '--repo', 'https://kubernetes.github.io/ingress-nginx', '--version', '4.13.9',
      '--namespace', 'zerodrop-x', '--kubeconfig', '/k', '--values', '/v.yaml', '--wait', '--timeout', '600s',
    ]);
    // OCI charts carry no --repo.
    expect(helmInstallArgs(spec('envoy-gateway'), { release: 'eg-n', namespace: 'n', kubeconfigFile: '/k', valuesFile: '/v' })).not.toContain('--repo');
  });

  it('as profiles: need helm (skipped with the hint when it is missing); the gateway is the chart dataplane, for the protocols it carries', () => {
    for (const profile of helmProfiles) {
      expect(profile.requires).toEqual([{ binary: 'helm', install: expect.stringMatching(/helm\.sh/) }]);
      expect(missingRequirement(profile) ?? '').toMatch(onPath('helm') ? /^$/ : /^helm not found on PATH \(install: install Helm 3/);
      const s = spec(profile.name);
      for (const protocol of ['http', 'h2c', 'udp', 'turn'] as const) {
        const play = () => profile.gateway?.({ protocol, port: 8000, backendService: 'backend', backendPort: 8080 });
        if (!(s.protocols as readonly string[]).includes(protocol)) {
          expect(play, `${profile.name} ${protocol}`).toThrow(ProfileCannotPlay);
          continue;
        }
        expect(play()).toMatchObject({
          command: [],
          terminationGracePeriodSeconds: s.graceSeconds,
          installedBy: { helmProfile: profile.name, protocol, routesTo: { service: 'backend', port: 8080 } },
          ...(s.drain ? { drain: s.drain } : {}),
        });
      }
    }
  });
});
