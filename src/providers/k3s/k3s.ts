// A k3s cluster in one container (@testcontainers/k3s). The NodePorts the harness uses are exposed
// as container ports and reached on the host port Docker maps them to. Disposal (`await using`)
// stops and removes the container, which is the whole cluster.

import { KubeConfig } from '@kubernetes/client-node';
import { K3sContainer, type StartedK3sContainer } from '@testcontainers/k3s';
import { PUBLISHED_NODE_PORTS } from '../kind/kind.ts';
import type { Exposure } from '../kube/kube-provider.ts';
import { K3S_IMAGES, DEFAULT_K3S_VERSION } from '../node-images.ts';

/** The k3s image per Kubernetes minor version (rancher/k3s tags follow v<kubernetes>-k3s<n>). */
export { K3S_IMAGES, DEFAULT_K3S_VERSION };

/** k3s server flags that hand a feature gate to its embedded API server and kubelet. */
export const K3S_FEATURE_GATE_ARGS = ['--kube-apiserver-arg=feature-gates=ContainerStopSignals=true', '--kubelet-arg=feature-gates=ContainerStopSignals=true'];

export interface K3sCluster extends AsyncDisposable {
  kubeConfig(): KubeConfig;
  exposure: Exposure;
}

export async function startK3s(opts: { kubeVersion?: string } = {}): Promise<K3sCluster> {
  const minor = /^v?(\d+\.\d+)/.exec(opts.kubeVersion ?? DEFAULT_K3S_VERSION)?.[1] ?? '';
  const image = K3S_IMAGES[minor];
  if (!image) throw new Error(`no k3s image for Kubernetes ${opts.kubeVersion}; known: ${Object.keys(K3S_IMAGES).join(', ')}`);
  const container: StartedK3sContainer = await new K3sContainer(image)
    // The module's own command (`server --disable=traefik`) plus the ContainerStopSignals gate on the
    // API server and the kubelet, as zerodrop's kind config has it; the session still asks the API
    // server whether it keeps the field (kube/stop-signal-probe.ts) before it relies on it.
    .withCommand(['server', '--disable=traefik', ...K3S_FEATURE_GATE_ARGS])
    .withExposedPorts(...PUBLISHED_NODE_PORTS.map((p) => p.nodePort))
    .start();
  const raw = container.getKubeConfig();
  return {
    kubeConfig: () => {
      const kc = new KubeConfig();
      kc.loadFromString(raw);
      return kc;
    },
    exposure: {
      kind: 'nodePort',
      host: container.getHost(),
      ports: PUBLISHED_NODE_PORTS.map((p) => ({ nodePort: p.nodePort, hostPort: container.getMappedPort(p.nodePort) })),
    },
    [Symbol.asyncDispose]: async () => {
      await container.stop();
    },
  };
}
