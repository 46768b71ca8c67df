import { describe, expect, it } from 'vitest';
import type { Pod } from './pod-types.ts';
import { applySysctls, normalizeSysctlName, safeSysctls, sysctlRejection } from './sysctls.ts';

const pod = (sysctls: { name: string; value: string }[], spec: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u' },
  spec: { containers: [], securityContext: { sysctls }, ...spec },
});

describe('pod sysctls, as the kubelet admits them', () => {
  it("uses each minor's safe list: two more at 1.37 than at 1.35 and 1.36", () => {
    expect(safeSysctls('1.36')).toHaveLength(12);
    expect(safeSysctls('1.35')).toEqual(safeSysctls('1.36'));
    expect(safeSysctls('1.37')).toEqual([...safeSysctls('1.36'), 'net.ipv4.tcp_slow_start_after_idle', 'net.ipv4.tcp_notsent_lowat']);
    expect(sysctlRejection(pod([{ name: 'net.ipv4.tcp_notsent_lowat', value: '16384' }]), '1.37')).toBeUndefined();
    expect(sysctlRejection(pod([{ name: 'net.ipv4.tcp_notsent_lowat', value: '16384' }]), '1.36')?.message).toBe('forbidden sysctl: "net.ipv4.tcp_notsent_lowat" not allowlisted');
  });

  it('admits a pod with safe sysctls or none', () => {
    expect(sysctlRejection(pod([{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }, { name: 'net.ipv4.tcp_syncookies', value: '1' }]), '1.37')).toBeUndefined();
    expect(sysctlRejection({ metadata: { name: 'p' }, spec: {} }, '1.37')).toBeUndefined();
  });

  it('rejects an unsafe sysctl (no node here allows one) with the reason and message a kubelet records', () => {
    expect(sysctlRejection(pod([{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }, { name: 'net.ipv4.tcp_tw_reuse', value: '1' }]), '1.37')).toEqual({
      reason: 'SysctlForbidden',
      message: 'forbidden sysctl: "net.ipv4.tcp_tw_reuse" not allowlisted',
    });
  });

  it("rejects a safe network sysctl in a pod on the host's network, and an IPC one with the host's IPC", () => {
    expect(sysctlRejection(pod([{ name: 'net.ipv4.tcp_syncookies', value: '1' }], { hostNetwork: true }), '1.37')?.message).toBe('forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled');
    expect(sysctlRejection(pod([{ name: 'kernel.shm_rmid_forced', value: '1' }], { hostIPC: true }), '1.37')?.message).toBe('forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host ipc enabled');
    expect(sysctlRejection(pod([{ name: 'kernel.shm_rmid_forced', value: '1' }], { hostNetwork: true }), '1.37')).toBeUndefined();
  });

  it("normalizes a name written with '/' as the kubelet does, and only when '/' comes first", () => {
    expect(normalizeSysctlName('net/ipv4/ip_local_port_range')).toBe('net.ipv4.ip_local_port_range');
    expect(normalizeSysctlName('net/ipv4/conf/eno2.100/rp_filter')).toBe('net.ipv4.conf.eno2/100.rp_filter');
    expect(normalizeSysctlName('net.ipv4.conf.eno2/100.rp_filter')).toBe('net.ipv4.conf.eno2/100.rp_filter');
    expect(sysctlRejection(pod([{ name: 'net/ipv4/ip_local_port_range', value: '1024 65535' }]), '1.37')).toBeUndefined();
  });

  it('fails the sandbox for a sysctl of a namespace the pod does not have (IPC), before writing anything', async () => {
    await expect(applySysctls('zdk-no-such-netns', [{ name: 'net.ipv4.tcp_syncookies', value: '1' }, { name: 'kernel.shm_rmid_forced', value: '1' }])).rejects.toThrow(/kernel\.shm_rmid_forced: pods on this node have no IPC namespace of their own/);
  });
});
