import { describe, expect, it } from 'vitest';
import { TRAEFIK_CLASSES, TRAEFIK_DRAIN, traefikArgs, traefikDeployment, traefikService } from './traefik-install.ts';

type Container = { args: string[]; lifecycle?: unknown; readinessProbe: { httpGet: { port: number } } };
type Pod = { terminationGracePeriodSeconds?: number; containers: Container[] };
const podOf = (d: Record<string, unknown>) => (d as { spec: { template: { spec: Pod } } }).spec.template.spec;

describe('Traefik on the netns cluster', () => {
  it('binds every entrypoint to the pod address and reports nothing outside', () => {
    for (const variant of ['drain-correct', 'naive'] as const) {
      const args = traefikArgs(variant, '198.18.48.20');
      const addresses = args.filter((a) => /^--entrypoints\.[^.]+\.address=/.test(a));
      expect(addresses).toEqual(['--entrypoints.web.address=$(POD_IP):8000', '--entrypoints.traefik.address=$(POD_IP):8080']);
      expect(args).toContain('--global.sendanonymoususage=false');
      expect(args).toContain('--global.checknewversion=false');
      expect(args).toContain('--providers.kubernetesgateway.statusaddress.ip=198.18.48.20');
    }
  });

  it('drain-correct: polite keep-alive close, a preStop, a bounded graceful stop, and a grace period above both', () => {
    const pod = podOf(traefikDeployment('drain-correct', 'traefik:v3.6.12', '198.18.48.20'));
    const [container] = pod.containers;
    expect(container?.lifecycle).toEqual({ preStop: { sleep: { seconds: TRAEFIK_DRAIN.preStopSeconds } } });
    expect(container?.args).toEqual(expect.arrayContaining(['--entrypoints.web.transport.keepalivemaxtime=1s', '--entrypoints.web.transport.lifecycle.gracetimeout=5s']));
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(TRAEFIK_DRAIN.preStopSeconds + TRAEFIK_DRAIN.graceTimeoutSeconds);
    // kube-proxy's 3 s bound and the 1 s keep-alive bound, with gateway-drain.ts's margin.
    expect(TRAEFIK_DRAIN).toEqual({ keepAliveMaxTimeSeconds: 1, preStopSeconds: 5, graceTimeoutSeconds: 5, terminationGracePeriodSeconds: 13 });
  });

  it("naive: Traefik's and Kubernetes' defaults, nothing for the drain", () => {
    const pod = podOf(traefikDeployment('naive', 'traefik:v3.6.12', '198.18.48.20'));
    const [container] = pod.containers;
    expect(container?.lifecycle).toBeUndefined();
    expect(pod.terminationGracePeriodSeconds).toBeUndefined();
    expect(container?.args.filter((a) => a.includes('.transport.'))).toEqual([]);
    expect(TRAEFIK_CLASSES).toEqual({ traefik: 'drain-correct', 'traefik-naive': 'naive' });
  });

  it('the Service publishes the HTTP entrypoint on the last NodePort the cluster publishes, labelled as the pods are found', () => {
    const service = traefikService() as { metadata: { labels: Record<string, string> }; spec: { ports: { port: number; nodePort: number }[] } };
    expect(service.spec.ports).toEqual([expect.objectContaining({ port: 8000, nodePort: 30047 })]);
    expect(service.metadata.labels['app.kubernetes.io/name']).toBe('traefik');
  });
});
