import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { helmInstallArgs } from '../providers/kube/helm.ts';
import { HELM_PROFILE_SPECS, helmProfiles } from './helm-charts.ts';
import { ProfileCannotPlay } from './profile.ts';
import { missingRequirement, onPath } from './requirements.ts';

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
      expect(JSON.stringify([naive.values, naive.objects('ns')])).not.toBe(JSON.stringify([good.values, good.objects('ns')]));
    }
  });

  it('Envoy Gateway: the shutdown manager drain of PR 2633 (min 15 s, timeout 600 s, grace 900 s)', () => {
    const proxy = spec('envoy-gateway').objects('zerodrop-x').find((o) => o.object['kind'] === 'EnvoyProxy');
    expect(proxy?.object).toMatchObject({ metadata: { namespace: 'zerodrop-x' }, spec: { shutdown: { drainTimeout: '600s', minDrainDuration: '15s' } } });
    expect(spec('envoy-gateway').drain).toEqual({ minDrainSeconds: 15, drainTimeoutSeconds: 600, terminationGracePeriodSeconds: 900 });
    expect(spec('envoy-gateway-naive').objects('n').find((o) => o.object['kind'] === 'EnvoyProxy')?.object).toMatchObject({ spec: { shutdown: { drainTimeout: '0s' } } });
  });

  it('STUNner: the Dataplane keeps its long grace period; the naive twin has the Kubernetes default', () => {
    const dataplane = (name: string) => spec(name).objects('n').find((o) => o.object['kind'] === 'Dataplane');
    expect(dataplane('stunner')).toMatchObject({ clusterScoped: true, object: { apiVersion: 'stunner.l7mp.io/v1', spec: { terminationGracePeriodSeconds: 3600 } } });
    expect(dataplane('stunner-naive')?.object).toMatchObject({ spec: { terminationGracePeriodSeconds: 30 } });
  });

  it('ingress-nginx: /wait-shutdown preStop and --shutdown-grace-period within the grace period; naive drops both', () => {
    const values = parse(stringify(spec('ingress-nginx').values)) as { controller: Record<string, unknown> };
    expect(values.controller).toMatchObject({
      terminationGracePeriodSeconds: 300,
      extraArgs: { 'shutdown-grace-period': '15' },
      lifecycle: { preStop: { exec: { command: ['/wait-shutdown'] } } },
    });
    expect((spec('ingress-nginx-naive').values as { controller: Record<string, unknown> }).controller).toMatchObject({ lifecycle: {}, extraArgs: { 'shutdown-grace-period': '0' } });
  });

  it('builds the helm command: chart, repo, pinned version, the run namespace, values file, --wait', () => {
    expect(helmInstallArgs(spec('ingress-nginx'), { namespace: 'zerodrop-x', kubeconfigFile: '/k', valuesFile: '/v.yaml' })).toEqual([
      'upgrade', '--install', 'ingress-nginx', 'ingress-nginx', '--repo', 'https://kubernetes.github.io/ingress-nginx', '--version', '4.13.3',
      '--namespace', 'zerodrop-x', '--kubeconfig', '/k', '--values', '/v.yaml', '--wait', '--timeout', '600s',
    ]);
    // OCI charts carry no --repo.
    expect(helmInstallArgs(spec('envoy-gateway'), { namespace: 'n', kubeconfigFile: '/k', valuesFile: '/v' })).not.toContain('--repo');
  });

  it('as profiles: need helm (skipped with the hint when it is missing) and never run on the local provider', () => {
    for (const profile of helmProfiles) {
      expect(profile.requires).toEqual([{ binary: 'helm', install: expect.stringMatching(/helm\.sh/) }]);
      expect(missingRequirement(profile) ?? '').toMatch(onPath('helm') ? /^$/ : /^helm not found on PATH \(install: install Helm 3/);
      expect(() => profile.gateway?.({ protocol: 'http', port: 8080, backendService: 'backend', backendPort: 8080 })).toThrow(ProfileCannotPlay);
    }
  });
});
