import { describe, expect, it } from 'vitest';
import { PUBLISHED_NODE_PORTS } from './kind/kind.ts';
import { kubeSession, netnsNodePortRotation, rotatedExposure } from './kube-session.ts';
import { KubeClient } from './kube/client.ts';
import type { Exposure } from './kube/kube-provider.ts';
import type { NetnsCluster } from './netns/cluster.ts';
import { Recorder } from '../observe/recorder.ts';
import { packageRoot } from '../paths.ts';

const ports = (e: Exposure) => (e.kind === 'nodePort' ? e.ports.map((p) => p.nodePort) : []);

describe('rotatedExposure', () => {
  const kind: Exposure = { kind: 'nodePort', host: '127.0.0.1', ports: [...PUBLISHED_NODE_PORTS] };

  it("moves each scenario's first NodePorts on from the scenario before's, keeping every port and the last (a GatewayClass's) in place", () => {
    const first = ports(rotatedExposure(kind, 0));
    const second = ports(rotatedExposure(kind, 1));
    expect(first).toEqual(ports(kind));
    expect(second.slice(0, 3)).not.toContain(first[0]);
    for (const order of [first, second, ports(rotatedExposure(kind, 7))]) {
      expect([...order].sort()).toEqual([...ports(kind)].sort());
      expect(order.at(-1)).toBe(30_047);
    }
  });

  it('comes back to a port only after as many scenarios as the band allows (the 85 of a netns cluster: 21)', () => {
    const band: Exposure = { kind: 'nodePort', host: '198.18.0.10', ports: Array.from({ length: 86 }, (_, i) => ({ nodePort: 30_000 + i, hostPort: 30_000 + i })) };
    const windows = Array.from({ length: 21 }, (_, n) => ports(rotatedExposure(band, n)).slice(0, 4));
    expect(new Set(windows.flat()).size).toBe(84);
  });

  it('leaves an exposure by load balancer addresses as it is', () => {
    const lb: Exposure = { kind: 'loadBalancer' };
    expect(rotatedExposure(lb, 3)).toBe(lb);
  });
});

describe('the NodePort rotation of a netns cluster', () => {
  // A suite opens a session per scenario on one cluster: counted per session, every scenario of the
  // file took the same NodePorts, and a gone pod's SYN_SENT entry from the case before failed a
  // drain-correct run's connection (kubernetes#101607).
  it('is the cluster\'s: sessions on it go on from where the last one stopped, another cluster starts at the first', () => {
    const cluster = {} as NetnsCluster;
    const open = () =>
      kubeSession('netns', KubeClient.forServer('http://127.0.0.1:9'), { kind: 'loadBalancer' }, { allowNodeOperations: false, multiNode: true, containerStopSignals: true, rotation: netnsNodePortRotation(cluster) });
    const scenario = (n: number) => ({ recorder: new Recorder(), runId: `run${n}`, cwd: packageRoot });
    open().create(scenario(1));
    open().create(scenario(2));
    open().create(scenario(3));
    expect(netnsNodePortRotation(cluster).scenarios).toBe(3);
    expect(netnsNodePortRotation({} as NetnsCluster).scenarios).toBe(0);
  });
});
