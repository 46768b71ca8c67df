// A pod sandbox: its own network namespace with a routed veth to the node, as Calico wires a pod
// (no bridge): the pod's eth0 holds podIP/32 and routes everything via the link-local 169.254.1.1,
// the node side's MAC (static neighbour, proxy ARP on); the node routes podIP/32 to the veth. The node netns
// (where the agent runs) then routes between pods, nodes and Services (kube-proxy).
//
// Names are fixed by the cluster's cleanup, which must find what a killed agent left: netns
// `zdk-<clusterId>-p<8 hex of the pod UID>`, node-side veth `zp<8 hex>`.

import { writeFile } from 'node:fs/promises';

import { run, tryRun } from './run-command.ts';

export const GATEWAY = '169.254.1.1';
/** The node side of every pod veth has this MAC, as Calico gives its host-side veths. */
export const GATEWAY_MAC = 'ee:ee:ee:ee:ee:ee';

export interface SandboxNames {
  netns: string;
  veth: string;
}

/** The 8 hex digits of a pod UID (its first group), the key of every name of its sandbox. */
export function podHex(uid: string): string {
  const hex = uid.replace(/[^0-9a-f]/gi, '').toLowerCase().slice(0, 8);
  if (hex.length < 8) throw new Error(`pod uid ${uid} has fewer than 8 hex digits`);
  return hex;
}

export function sandboxNames(clusterId: string, uid: string): SandboxNames {
  const hex = podHex(uid);
  return { netns: `zdk-${clusterId}-p${hex}`, veth: `zp${hex}` };
}

/** Creates the netns and its veth; a leftover of the same name (an earlier agent) is removed first. */
export async function createSandbox(names: SandboxNames, podIP: string): Promise<void> {
  await destroySandbox(names, podIP);
  const inPod = (...args: string[]) => run('ip', ['-n', names.netns, ...args]);
  await run('ip', ['netns', 'add', names.netns]);
  await run('ip', ['link', 'add', names.veth, 'address', GATEWAY_MAC, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', names.netns]);
  await inPod('link', 'set', 'lo', 'up');
  await inPod('addr', 'add', `${podIP}/32`, 'dev', 'eth0');
  await inPod('link', 'set', 'eth0', 'up');
  await inPod('route', 'add', GATEWAY, 'dev', 'eth0', 'scope', 'link');
  await inPod('route', 'add', 'default', 'via', GATEWAY, 'dev', 'eth0');
  // Proxy ARP answers for 169.254.1.1 only where the node has a route to it, and a node netns has
  // no default route: the gateway's neighbour entry is therefore static, as Calico's is in effect.
  await inPod('neigh', 'replace', GATEWAY, 'lladdr', GATEWAY_MAC, 'dev', 'eth0', 'nud', 'permanent');
  await run('ip', ['link', 'set', names.veth, 'up']);
  await writeFile(`/proc/sys/net/ipv4/conf/${names.veth}/proxy_arp`, '1');
  await run('ip', ['route', 'replace', `${podIP}/32`, 'dev', names.veth]);
}

/** Removes route, veth (its peer goes with it) and netns; what is already gone is fine. */
export async function destroySandbox(names: SandboxNames, podIP: string | undefined): Promise<void> {
  // Whatever still runs in the pod's netns (a daemon that left its container's process group)
  // goes with the sandbox, as every process of a pod dies with its sandbox.
  try {
    const pids = (await run('ip', ['netns', 'pids', names.netns])).split(/\s+/).filter(Boolean).map(Number);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  } catch {
    // no such netns
  }
  if (podIP) await tryRun('ip', ['route', 'del', `${podIP}/32`, 'dev', names.veth]);
  await tryRun('ip', ['link', 'del', names.veth]);
  await tryRun('ip', ['netns', 'del', names.netns]);
}
