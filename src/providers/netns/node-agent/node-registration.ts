// The Node object and its heartbeats, as the kubelet keeps them
// (https://kubernetes.io/docs/concepts/architecture/nodes/#node-heartbeats): the Node is registered
// with its addresses, capacity and nodeInfo; its status (conditions with lastHeartbeatTime) is
// patched every ~10 s (nodeStatusUpdateFrequency) and its Lease in kube-node-lease renewed every
// 10 s with leaseDurationSeconds 40, so the node lifecycle controller keeps it Ready.

import os from 'node:os';

import { PATCH, statusOf, type KubeClient } from '../../kube/client.ts';
import type { NodeAgentConfig } from './config.ts';

export const HEARTBEAT_MS = 10_000;
export const LEASE_DURATION_SECONDS = 40;

/** Kubernetes MicroTime: RFC3339 with microseconds. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function seconds(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

export function nodeStatus(config: NodeAgentConfig, now: Date, since: Date): Record<string, unknown> {
  const memory = `${Math.floor(os.totalmem() / 1024)}Ki`;
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: seconds(now),
    lastTransitionTime: seconds(since),
  });
  const resources = { cpu: '2', memory, pods: '110', 'ephemeral-storage': '20Gi' };
  return {
    addresses: [
      { type: 'InternalIP', address: config.nodeIP },
      { type: 'Hostname', address: config.nodeName },
    ],
    capacity: resources,
    allocatable: resources,
    conditions: [
      condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: config.clusterId,
      systemUUID: `${config.clusterId}-${config.nodeName}`,
      bootID: config.clusterId,
      kernelVersion: os.release(),
      osImage: 'zerodrop network namespace node',
      containerRuntimeVersion: 'zerodrop://0.1.0',
      kubeletVersion: config.kubeletVersion,
      kubeProxyVersion: config.kubeletVersion,
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

export class NodeRegistration {
  private readonly client: KubeClient;
  private readonly config: NodeAgentConfig;
  private readonly since = new Date();
  private timer?: NodeJS.Timeout;
  private uid?: string;
  private readonly log: (message: string) => void;

  constructor(client: KubeClient, config: NodeAgentConfig, log: (message: string) => void) {
    this.client = client;
    this.config = config;
    this.log = log;
  }

  /** Creates (or takes over) the Node object and posts its first status and lease. */
  async register(): Promise<void> {
    const name = this.config.nodeName;
    const labels = {
      'kubernetes.io/hostname': name,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'amd64',
    };
    const { status, body } = await this.client.request<{ metadata?: { uid?: string } }>('POST', '/api/v1/nodes', {
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec: { podCIDR: this.config.podCIDR, podCIDRs: [this.config.podCIDR] } },
      allow: [409],
    });
    if (status === 409) {
      // Registered before (an earlier run of the agent): the kubelet takes the existing Node over.
      const existing = await this.client.request<{ metadata?: { uid?: string }; spec?: { podCIDR?: string } }>('PATCH', `/api/v1/nodes/${name}`, {
        body: { metadata: { labels }, spec: { unschedulable: false } },
        contentType: PATCH.merge,
      });
      this.uid = existing.body.metadata?.uid;
      if (existing.body.spec?.podCIDR === undefined) {
        await this.client.request('PATCH', `/api/v1/nodes/${name}`, { body: { spec: { podCIDR: this.config.podCIDR, podCIDRs: [this.config.podCIDR] } }, contentType: PATCH.merge });
      }
    } else this.uid = body.metadata?.uid;
    await this.postStatus();
    await this.renewLease();
  }

  /** Heartbeats every HEARTBEAT_MS until stop(). */
  start(): void {
    const beat = () => {
      this.timer = setTimeout(() => {
        void Promise.allSettled([this.postStatus(), this.renewLease()]).then((results) => {
          for (const r of results) if (r.status === 'rejected') this.log(`heartbeat failed: ${(r.reason as Error).message}`);
          if (this.timer !== undefined) beat();
        });
      }, HEARTBEAT_MS);
    };
    beat();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async postStatus(): Promise<void> {
    // Strategic merge: conditions and addresses merge by type, as the kubelet's status patch does.
    await this.client.request('PATCH', `/api/v1/nodes/${this.config.nodeName}/status`, {
      body: { status: nodeStatus(this.config, new Date(), this.since) },
      contentType: PATCH.strategic,
    });
  }

  private async renewLease(): Promise<void> {
    const name = this.config.nodeName;
    const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`;
    const spec = { holderIdentity: name, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: microTime(new Date()) };
    try {
      await this.client.request('PATCH', path, { body: { spec }, contentType: PATCH.merge });
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      await this.client.request('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: {
            name,
            namespace: 'kube-node-lease',
            // The Lease goes with its Node, as the kubelet sets it.
            ...(this.uid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: this.uid }] } : {}),
          },
          spec,
        },
        allow: [409],
      });
    }
  }
}
