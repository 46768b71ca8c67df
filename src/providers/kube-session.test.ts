import { describe, expect, it } from 'vitest';
import { PUBLISHED_NODE_PORTS } from './kind/kind.ts';
import { rotatedExposure } from './kube-session.ts';
import type { Exposure } from './kube/kube-provider.ts';

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
