// The cluster's network on this machine: a bridge on the host, and a network namespace for the
// control plane and for each node, each joined to the bridge by a veth pair. Nodes route each
// other's pod ranges over the bridge; the host routes them too, so the harness reaches pods and
// NodePorts. No namespace has a default route, and the host does not forward: a packet for any
// address outside the run's block has nowhere to go and is dropped where it starts.
//
// Every name carries the cluster id, so that `zerodrop clean` can find what a killed run left by name
// alone (leftovers.ts): namespaces `zdk-<id>-<role>`, the bridge `zdk<id>`, host-side veths `zv<id><n>`.

import { execa } from 'execa';
import type { AddressPlan } from './address-plan.ts';

export const NETNS_PREFIX = 'zdk-';

export const netnsName = (clusterId: string, role: string): string => `${NETNS_PREFIX}${clusterId}-${role}`;
export const bridgeName = (clusterId: string): string => `zdk${clusterId}`;
/** Interface names have at most 15 bytes (IFNAMSIZ - 1): the id is 8 hex, the suffix one or two characters. */
const hostVeth = (clusterId: string, suffix: string): string => `${HOST_VETH_PREFIX}${clusterId}${suffix}`;
const HOST_VETH_PREFIX = 'zv';

/** Whether a link of the host's namespace is one of cluster `clusterId`'s: its bridge or a host-side veth. */
export const isClusterHostLink = (clusterId: string, name: string): boolean => name === bridgeName(clusterId) || name.startsWith(`${HOST_VETH_PREFIX}${clusterId}`);

/** The cluster id a host link's name carries (the bridge or a veth), if it is a cluster's. */
export function clusterIdOfHostLink(name: string): string | undefined {
  const m = new RegExp(`^(?:zdk([0-9a-f]{8})|${HOST_VETH_PREFIX}([0-9a-f]{8})[0-9a-z]{1,2})$`).exec(name);
  return m?.[1] ?? m?.[2];
}

/** Runs `ip ...`, throwing with its stderr. */
export async function ip(...args: string[]): Promise<void> {
  await execa('ip', args);
}

/** Writes a sysctl inside a namespace (net.* sysctls are per network namespace). */
export async function netnsSysctl(netns: string, key: string, value: string): Promise<void> {
  await execa('ip', ['netns', 'exec', netns, 'sysctl', '-q', '-w', `${key}=${value}`]);
}

export interface ClusterNetwork {
  bridge: string;
  controlPlane: string;
  nodes: string[];
}

/**
 * Creates the bridge and the namespaces. Whatever a failure or an interrupt leaves halfway is found
 * by its name (leftovers.ts).
 */
export async function createClusterNetwork(clusterId: string, plan: AddressPlan, owner: string): Promise<ClusterNetwork> {
  const bridge = bridgeName(clusterId);
  await ip('link', 'add', bridge, 'type', 'bridge');
  // Who owns the cluster, on the machine itself (interface aliases are machine-wide, unlike a state
  // directory): `zerodrop clean` leaves a cluster whose owner still runs (leftovers.ts).
  await ip('link', 'set', bridge, 'alias', owner);
  await ip('addr', 'add', `${plan.host}/24`, 'dev', bridge);
  await ip('link', 'set', bridge, 'up');

  const join = async (role: string, suffix: string, address: string): Promise<string> => {
    const netns = netnsName(clusterId, role);
    await ip('netns', 'add', netns);
    const veth = hostVeth(clusterId, suffix);
    await ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns);
    await ip('link', 'set', veth, 'master', bridge, 'up');
    await ip('-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
    await ip('-n', netns, 'link', 'set', 'lo', 'up');
    await ip('-n', netns, 'link', 'set', 'eth0', 'up');
    return netns;
  };

  const controlPlane = await join('cp', 'c', plan.controlPlane);
  const nodes: string[] = [];
  for (const [k, node] of plan.nodes.entries()) {
    const netns = await join(`n${k + 1}`, String(k + 1), node.ip);
    // A node forwards between its pods' veths and the cluster network, as a node's kernel does.
    await netnsSysctl(netns, 'net.ipv4.ip_forward', '1');
    nodes.push(netns);
  }
  // Pod ranges: each node's /24 through that node, from the host, the control plane and every other node.
  for (const [k, node] of plan.nodes.entries()) {
    await ip('route', 'add', node.podCIDR, 'via', node.ip, 'dev', bridge);
    await ip('-n', controlPlane, 'route', 'add', node.podCIDR, 'via', node.ip);
    for (const [j, other] of nodes.entries()) if (j !== k) await ip('-n', other, 'route', 'add', node.podCIDR, 'via', node.ip);
  }
  return { bridge, controlPlane, nodes };
}
