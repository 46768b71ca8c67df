import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_KUBE_VERSION, KIND_NODE_IMAGES, kindConfig, nodeImageFor, PUBLISHED_NODE_PORTS, STATIC_NODE_PORT_BAND } from './kind.ts';

describe('kind cluster config', () => {
  it('has one control plane publishing the NodePorts (TCP and UDP) on 127.0.0.1, and the requested workers', () => {
    const config = parse(kindConfig({ workers: 2 })) as { kind: string; apiVersion: string; nodes: { role: string; extraPortMappings?: unknown[] }[] };
    expect(config.kind).toBe('Cluster');
    expect(config.apiVersion).toBe('kind.x-k8s.io/v1alpha4');
    expect((config as unknown as { featureGates: unknown }).featureGates).toEqual({ ContainerStopSignals: true });
    expect(config.nodes.map((n) => n.role)).toEqual(['control-plane', 'worker', 'worker']);
    expect(config.nodes[0]?.extraPortMappings).toEqual(
      PUBLISHED_NODE_PORTS.flatMap((p) =>
        ['TCP', 'UDP'].map((protocol) => ({ containerPort: p.nodePort, hostPort: p.hostPort, listenAddress: '127.0.0.1', protocol })),
      ),
    );
    // NodePorts must lie in the static band of the default service-node-port-range (30000-32767),
    // which the API server leaves to Services that ask for a port by number (KEP-3668): 30000-30085.
    expect(STATIC_NODE_PORT_BAND).toEqual({ first: 30_000, last: 30_085 });
    for (const p of PUBLISHED_NODE_PORTS) expect(p.nodePort).toBeGreaterThanOrEqual(STATIC_NODE_PORT_BAND.first);
    for (const p of PUBLISHED_NODE_PORTS) expect(p.nodePort).toBeLessThanOrEqual(STATIC_NODE_PORT_BAND.last);
  });

  it('chooses the node image per Kubernetes minor version, pinned by digest', () => {
    expect(nodeImageFor('1.36')).toBe(KIND_NODE_IMAGES['1.36']);
    expect(nodeImageFor('v1.35.2')).toBe(KIND_NODE_IMAGES['1.35']);
    expect(Object.keys(KIND_NODE_IMAGES)).toHaveLength(4);
    for (const image of Object.values(KIND_NODE_IMAGES)) expect(image).toMatch(/^kindest\/node:v1\.\d+\.\d+@sha256:[0-9a-f]{64}$/);
    expect(KIND_NODE_IMAGES[DEFAULT_KUBE_VERSION]).toBeDefined();
    expect(() => nodeImageFor('1.20')).toThrow(/no kind node image for Kubernetes 1.20; known: 1.37, 1.36, 1.35, 1.34/);
  });
});
