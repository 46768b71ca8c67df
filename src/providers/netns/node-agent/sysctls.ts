// A pod's `spec.securityContext.sysctls`, as the kubelet admits them and the runtime applies them.
//
// Admission (pkg/kubelet/sysctl/allowlist.go, patternAllowlist.Admit): a sysctl the kubelet's safe
// list does not name is refused unless the node allows it (`--allowed-unsafe-sysctls`, which this
// agent does not offer), and a network sysctl is refused in a pod on the host's network. The pod is
// then rejected: phase Failed, reason SysctlForbidden, "Pod was rejected: forbidden sysctl: ..."
// (kubelet.go, rejectPod). The safe list is the kubelet's of each minor (safe_sysctls.go at
// v1.35.4, v1.36.3 and v1.37.2); its kernel minimums (4.15 at most) are below what the netns
// cluster needs anyway (nftables kube-proxy), so they are not checked.
//
// Applying: the runtime writes them in the pod's namespaces as it creates the sandbox; one it cannot
// write fails the sandbox (FailedCreatePodSandBox), retried. Every net.* sysctl is per network
// namespace, so it is written in the pod's; kernel.shm_rmid_forced belongs to the IPC namespace,
// which this agent does not give a pod of its own, so a pod asking for it fails the same way.

import type { Pod, Sysctl } from './pod-types.ts';
import { run } from './run-command.ts';

const SAFE_SINCE_1_32 = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
  'net.ipv4.tcp_rmem',
  'net.ipv4.tcp_wmem',
];
const SAFE_SINCE_1_37 = ['net.ipv4.tcp_slow_start_after_idle', 'net.ipv4.tcp_notsent_lowat'];

/** The kubelet's safe sysctls at a minor ("1.37"). */
export function safeSysctls(kubeletMinor: string): readonly string[] {
  const [major = 0, minor = 0] = kubeletMinor.split('.').map(Number);
  return major > 1 || minor >= 37 ? [...SAFE_SINCE_1_32, ...SAFE_SINCE_1_37] : SAFE_SINCE_1_32;
}

/**
 * A sysctl name whose first separator is '/' (net/ipv4/conf/eno2.100/rp_filter) in the dotted form
 * (net.ipv4.conf.eno2/100.rp_filter), '.' and '/' swapped, as the kubelet normalizes it.
 */
export function normalizeSysctlName(name: string): string {
  const first = /[./]/.exec(name)?.[0];
  return first === '/' ? name.replace(/[./]/g, (c) => (c === '/' ? '.' : '/')) : name;
}

export function podSysctls(pod: Pod): Sysctl[] {
  return pod.spec?.securityContext?.sysctls ?? [];
}

/** Why the kubelet would reject the pod for its sysctls ({reason, message} as rejectPod records them), or undefined. */
export function sysctlRejection(pod: Pod, kubeletMinor: string): { reason: string; message: string } | undefined {
  const safe = safeSysctls(kubeletMinor);
  for (const s of podSysctls(pod)) {
    const name = normalizeSysctlName(s.name);
    let why: string | undefined;
    if (!safe.includes(name)) why = `${JSON.stringify(name)} not allowlisted`;
    else if (name.startsWith('net.') && pod.spec?.hostNetwork) why = `${JSON.stringify(name)} not allowed with host net enabled`;
    else if (name.startsWith('kernel.') && pod.spec?.hostIPC) why = `${JSON.stringify(name)} not allowed with host ipc enabled`;
    if (why) return { reason: 'SysctlForbidden', message: `forbidden sysctl: ${why}` };
  }
  return undefined;
}

/** Writes the pod's sysctls in its network namespace; throws (the sandbox fails) on one it cannot write there. */
export async function applySysctls(netns: string, sysctls: readonly Sysctl[]): Promise<void> {
  const named = sysctls.map((s) => ({ name: normalizeSysctlName(s.name), value: s.value }));
  const other = named.find((s) => !s.name.startsWith('net.'));
  if (other) throw new Error(`sysctl ${other.name}: pods on this node have no IPC namespace of their own to set it in`);
  for (const s of named) await run('ip', ['netns', 'exec', netns, 'sysctl', '-q', '-w', `${s.name}=${s.value}`]);
}
