// The node agent's configuration: one JSON file written by the cluster that starts it
// (`node main.ts CONFIG.json`). Its fields are the contract between the agent and the cluster code.

import { readFileSync } from 'node:fs';

export interface NodeAgentConfig {
  /** Short hex id of the cluster: names every pod netns `zdk-<clusterId>-p<8 hex>` so cleanup finds them. */
  clusterId: string;
  nodeName: string;
  /** Address of eth0 in the node netns (the Node's InternalIP). */
  nodeIP: string;
  /** The node's pod range, e.g. 198.18.129.0/24; pods get .2 ... .254. */
  podCIDR: string;
  /** An admin kubeconfig. */
  kubeconfig: string;
  /** TLS of the agent's server on nodeIP:10250: clients must present a certificate signed by caFile. */
  caFile: string;
  servingCertFile: string;
  servingKeyFile: string;
  /** The agent's own directory (pod volumes, rootfs mount points, logs). */
  dir: string;
  /** For node.status.nodeInfo.kubeletVersion. */
  kubeletVersion: string;
  /** The Node.js binary that images `node:*` run. */
  nodeExecPath: string;
  /** Programs built from Go modules (name -> host path) that images of the image map run; absent when none is built. */
  goPrograms?: Record<string, string>;
  /** Written once the Node object is registered and the server listens. */
  ready?: string;
}

const REQUIRED = ['clusterId', 'nodeName', 'nodeIP', 'podCIDR', 'kubeconfig', 'caFile', 'servingCertFile', 'servingKeyFile', 'dir', 'kubeletVersion', 'nodeExecPath'] as const;

/** Reads and checks the config; a missing field is an error naming it. */
export function parseConfig(text: string): NodeAgentConfig {
  const raw = JSON.parse(text) as Record<string, unknown>;
  for (const key of REQUIRED) {
    if (typeof raw[key] !== 'string' || raw[key] === '') throw new Error(`node agent config: ${key} must be a non-empty string`);
  }
  if (!/^[0-9a-f]+$/.test(raw['clusterId'] as string)) throw new Error('node agent config: clusterId must be hex');
  const go = raw['goPrograms'];
  if (go !== undefined && (typeof go !== 'object' || go === null || Object.values(go).some((v) => typeof v !== 'string'))) throw new Error('node agent config: goPrograms must map names to paths');
  if (raw['ready'] !== undefined && typeof raw['ready'] !== 'string') throw new Error('node agent config: ready must be a string');
  return raw as unknown as NodeAgentConfig;
}

export function loadConfig(file: string): NodeAgentConfig {
  return parseConfig(readFileSync(file, 'utf8'));
}
